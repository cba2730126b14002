"""The editor server's trust gate end to end: a real ``jaxlint server`` over stdio driven by
pytest-lsp's client, the real ``jaxlint trust`` command, real workers and test runs. The user's
trust list lives in a temporary XDG_CONFIG_HOME, outside the project folder."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest_lsp = pytest.importorskip("pytest_lsp")  # the `test` extra installs it (and pygls)
from lsprotocol import types  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities  # noqa: E402
from test_server import FOUNDING, diagnostics_for, open_file, uri_of, write_tested_noisy_module  # noqa: E402

pytestmark = pytest.mark.slow
SERVER = ClientServerConfig(server_command=[sys.executable, "-m", "jaxlint", "server"])
# The founding example, whose import also writes RAN beside it: the proof that the server ran it.
MARKING = FOUNDING + '\nimport pathlib\n\npathlib.Path(__file__).with_name("RAN").write_text("imported")\n'


@pytest.fixture(autouse=True)
def user_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's configuration folder, which the server and `jaxlint trust` inherit (set before
    the client fixture starts the server)."""
    folder = tmp_path / "user-config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(folder))
    return folder


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "jaxlint.toml").write_text("")
    return folder


def initialize(project: Path, **options: object) -> types.InitializeParams:
    """The editor's initialize request, with the project as its workspace folder."""
    return types.InitializeParams(capabilities=client_capabilities("neovim"), initialization_options=options,
                                  workspace_folders=[types.WorkspaceFolder(uri=uri_of(project), name="project")])


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient, project: Path):
    await lsp_client.initialize_session(initialize(project))
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=SERVER)
async def trusting_client(lsp_client: LanguageClient, project: Path):
    """An editor that trusts its workspace (VS Code's Workspace Trust, a Neovim setting)."""
    await lsp_client.initialize_session(initialize(project, trusted=True))
    yield
    await lsp_client.shutdown_session()


def jaxlint_trust(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "jaxlint", "trust", *args], capture_output=True, text=True,
                          timeout=120)


def save(client: LanguageClient, path: Path) -> None:
    client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri_of(path))))


def notices(diagnostics: list[types.Diagnostic]) -> list[types.Diagnostic]:
    return [d for d in diagnostics if d.severity == types.DiagnosticSeverity.Information and d.code is None]


@pytest.mark.asyncio
async def test_an_untrusted_folder_runs_nothing_until_trusted_and_again_after_revoke(
        client: LanguageClient, project: Path) -> None:
    path, ran = project / "founding.py", project / "RAN"
    path.write_text(MARKING)
    open_file(client, path)
    [shown] = await diagnostics_for(client, uri_of(path))
    assert not ran.exists()
    assert shown.severity == types.DiagnosticSeverity.Information and shown.range.start.line == 0
    assert "runs a project's code to trace it" in shown.message and f"jaxlint trust {project}" in shown.message

    broken = project / "broken.py"  # what needs no import is still reported
    broken.write_text("import jax\n\n\ndef f(:\n    return 1\n")
    open_file(client, broken)
    [syntax] = await diagnostics_for(client, uri_of(broken))
    assert syntax.code == "JX900" and syntax.range.start.line == 3

    trusted = jaxlint_trust(str(project))
    assert trusted.returncode == 0, trusted.stderr
    save(client, path)
    assert [d.code for d in await diagnostics_for(client, uri_of(path))] == ["JX101"]
    assert ran.read_text() == "imported"

    revoked = jaxlint_trust("--revoke", str(project))
    assert revoked.returncode == 0, revoked.stderr
    ran.unlink()
    save(client, path)  # unchanged since the trusted run: its stored findings, nothing run
    shown = await diagnostics_for(client, uri_of(path))
    assert [d.code for d in shown] == ["JX101", None] and len(notices(shown)) == 1
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri_of(path)), range=shown[0].range,
        context=types.CodeActionContext(diagnostics=[shown[0]])))
    kinds = [a.kind for a in actions]  # the rule's edit, but no fix-all: it is verified by running the module
    assert types.CodeActionKind.QuickFix in kinds and "source.fixAll.jaxlint" not in kinds
    path.write_text(MARKING + "# edited\n")
    save(client, path)
    assert len(notices(await diagnostics_for(client, uri_of(path)))) == 1
    assert not ran.exists()


@pytest.mark.asyncio
async def test_the_editor_option_trusts_its_workspace_folders(trusting_client: LanguageClient, project: Path,
                                                             tmp_path: Path) -> None:
    path = project / "founding.py"
    path.write_text(MARKING)
    open_file(trusting_client, path)
    assert [d.code for d in await diagnostics_for(trusting_client, uri_of(path))] == ["JX101"]
    assert (project / "RAN").exists()

    elsewhere = tmp_path / "elsewhere"  # a file outside the workspace the editor trusts
    elsewhere.mkdir()
    outside = elsewhere / "founding.py"
    outside.write_text(MARKING)
    open_file(trusting_client, outside)
    assert len(notices(await diagnostics_for(trusting_client, uri_of(outside)))) == 1
    assert not (elsewhere / "RAN").exists()


@pytest.mark.asyncio
async def test_rerun_tests_runs_the_tests_only_in_a_trusted_folder(client: LanguageClient, project: Path) -> None:
    tests_ran = project / "TESTS_RAN"  # pytest loads the conftest.py of every run
    (project / "conftest.py").write_text(f"open({str(tests_ran)!r}, 'a').write('ran\\n')\n")
    path = write_tested_noisy_module(project)
    tests_ran.unlink()
    (project / "jaxlint.toml").write_text("infer-arguments = false\nrerun-tests = true\n")
    open_file(client, path)
    stored = await diagnostics_for(client, uri_of(path))  # what the test run stored needs no code run
    assert [d.code for d in stored] == ["JX401", None] and stored[0].range.start.line == 5

    path.write_text("# moved down a line\n" + path.read_text())
    save(client, path)
    assert len(notices(await diagnostics_for(client, uri_of(path)))) == 1  # stale, and no test ran
    assert not tests_ran.exists()
    assert not any("reached it again" in m.message for m in client.log_messages)

    assert jaxlint_trust(str(project)).returncode == 0
    save(client, path)
    [fresh] = await diagnostics_for(client, uri_of(path))
    assert fresh.code == "JX401" and fresh.range.start.line == 6
    assert tests_ran.exists()
    assert any("running the 1 test that reached it again" in m.message for m in client.log_messages)


@pytest.mark.asyncio
async def test_a_configuration_above_the_trusted_folder_runs_no_examples_file(client: LanguageClient,
                                                                             tmp_path: Path) -> None:
    """`examples` runs a file of its own: it applies only from a configuration file in a trusted folder."""
    outer = tmp_path / "outer"
    inner = outer / "inner"
    inner.mkdir(parents=True)
    (outer / "examples.py").write_text('import pathlib\n\npathlib.Path(__file__).with_name("EXAMPLES_RAN").touch()\n')
    (outer / "jaxlint.toml").write_text('examples = ["examples.py"]\n')
    path = inner / "founding.py"
    path.write_text(MARKING)
    assert jaxlint_trust(str(inner)).returncode == 0
    open_file(client, path)
    assert [d.code for d in await diagnostics_for(client, uri_of(path))] == ["JX101"]
    assert (inner / "RAN").exists() and not (outer / "EXAMPLES_RAN").exists()

    assert jaxlint_trust(str(outer)).returncode == 0
    save(client, path)
    assert [d.code for d in await diagnostics_for(client, uri_of(path))] == ["JX101"]
    assert (outer / "EXAMPLES_RAN").exists()


@pytest.mark.asyncio
async def test_an_unreadable_trust_list_trusts_nothing_and_says_why(client: LanguageClient, project: Path,
                                                                    user_config: Path) -> None:
    listed = user_config / "jaxlint" / "trusted.toml"
    listed.parent.mkdir(parents=True)
    listed.write_text(f'trusted = ["{project}"\n')  # no closing bracket
    path = project / "founding.py"
    path.write_text(MARKING)
    open_file(client, path)
    assert len(notices(await diagnostics_for(client, uri_of(path)))) == 1
    assert not (project / "RAN").exists()
    [said] = [m.message for m in client.messages if "trust list" in m.message]
    assert said.startswith("jaxlint: the trust list is ignored until it is fixed: ") and str(listed) in said

    listed.write_text(f'trusted = ["{project}"]\n')  # fixed by hand: the next check follows it
    save(client, path)
    assert [d.code for d in await diagnostics_for(client, uri_of(path))] == ["JX101"]
    assert (project / "RAN").exists()
