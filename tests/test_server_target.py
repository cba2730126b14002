"""``jaxlint server --target tpu-v5e``: the editor's diagnostics come from the program compiled for
the target (a real server over stdio, pytest-lsp's client, a real worker and libtpu)."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

pytest_lsp = pytest.importorskip("pytest_lsp")  # the `test` extra installs it (and pygls)
from lsprotocol import types  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities  # noqa: E402
from test_server import diagnostics_for, open_file, trusted_tmp_path, uri_of  # noqa: E402, F401 (an autouse fixture)
from test_target import DONATED  # noqa: E402

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(importlib.util.find_spec("libtpu") is None,
                                 reason="libtpu is not installed (jaxlint[tpu]): no TPU target to compile for")]


@pytest_lsp.fixture(config=ClientServerConfig(
    server_command=[sys.executable, "-m", "jaxlint", "server", "--target", "tpu-v5e"]))
async def client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(types.InitializeParams(capabilities=client_capabilities("neovim")))
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_the_server_compiles_for_its_target(client: LanguageClient, tmp_path: Path) -> None:
    (tmp_path / "jaxlint.toml").write_text('select = ["JX308"]\n')  # the project says cpu; --target wins
    path = tmp_path / "donated.py"
    path.write_text(DONATED)
    open_file(client, path)
    [shown] = await diagnostics_for(client, uri_of(path))
    assert shown.code == "JX308" and shown.message.endswith("Compiled for TPU v5e.")
