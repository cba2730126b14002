"""``jaxlint server`` end to end: pytest-lsp starts it over stdio as an editor would and drives it
with a real LSP client; the analyses are real (worker, JAX, cache)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest_lsp = pytest.importorskip("pytest_lsp")  # the `test` extra installs it (and pygls)
from lsprotocol import types  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
FOUNDING = (REPO / "examples" / "founding.py").read_text().replace(
    "print(my_mapped_function.lower(x, y).compile().as_text())", "my_mapped_function(x, y)")
CRASHING = "import os\nimport jax\n\n\n@jax.jit\ndef f(x):\n    return x\n\n\nos._exit(3)\n"

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def trusted_tmp_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The server runs code only in folders the user trusts (test_server_trust.py): each test's
    folder is, in a user configuration of its own, which the server inherits when it starts."""
    from jaxlint.cli.main import main

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "user-config"))
    assert main(["trust", str(tmp_path)]) == 0


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "jaxlint", "server"]))
async def client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(types.InitializeParams(capabilities=client_capabilities("neovim")))
    yield
    await lsp_client.shutdown_session()


def uri_of(path: Path) -> str:
    return path.as_uri()


async def diagnostics_for(client: LanguageClient, uri: str) -> list[types.Diagnostic]:
    """The next diagnostics published for ``uri`` (others are skipped)."""
    while True:
        params = await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        if params.uri == uri:
            return list(params.diagnostics)


def open_file(client: LanguageClient, path: Path) -> None:
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(
        uri=uri_of(path), language_id="python", version=1, text=path.read_text())))


def apply(text: str, edits: list[types.TextEdit]) -> str:
    """The client's side of a workspace edit (ASCII text: UTF-16 units are characters)."""
    lines = text.splitlines(keepends=True) + [""]
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        start = offsets[edit.range.start.line] + edit.range.start.character
        end = offsets[edit.range.end.line] + edit.range.end.character
        text = text[:start] + edit.new_text + text[end:]
    return text


@pytest.mark.asyncio
async def test_diagnostics_quick_fix_and_a_clean_save(client: LanguageClient, tmp_path: Path) -> None:
    (tmp_path / "jaxlint.toml").write_text("")
    path = tmp_path / "founding.py"
    path.write_text(FOUNDING)
    open_file(client, path)
    [shown] = await diagnostics_for(client, uri_of(path))
    assert shown.code == "JX101" and shown.source == "jaxlint"
    assert shown.severity == types.DiagnosticSeverity.Warning
    assert shown.code_description.href.endswith("rules/JX101.md")
    # The span: `jax.vmap(...)(x, y)` on line 13 (0-based 12), from column 11.
    assert (shown.range.start.line, shown.range.start.character) == (12, 11)

    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri_of(path)), range=shown.range,
        context=types.CodeActionContext(diagnostics=[shown])))
    titles = [a.title for a in actions]
    fix = next(a for a in actions if a.kind == types.CodeActionKind.QuickFix and "out_axes" in a.title)
    assert fix.is_preferred and "unsafe" not in fix.title
    assert "jaxlint: add `# noqa: JX101`" in titles and "jaxlint: apply all verified safe fixes" in titles
    fixed = apply(FOUNDING, fix.edit.changes[uri_of(path)])
    assert "out_axes=(None, 0)" in fixed and "return x, y" in fixed

    path.write_text(fixed)  # the editor saves the fixed buffer
    client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri_of(path))))
    assert await diagnostics_for(client, uri_of(path)) == []


@pytest.mark.asyncio
async def test_fix_all_is_the_verified_fix_and_hover_explains_a_noqa_code(client: LanguageClient,
                                                                          tmp_path: Path) -> None:
    (tmp_path / "jaxlint.toml").write_text("")
    path = tmp_path / "founding.py"
    text = FOUNDING.replace("import jax.numpy as jnp\n", "import jax.numpy as jnp  # noqa: JX202\n")
    path.write_text(text)
    open_file(client, path)
    diagnostics = await diagnostics_for(client, uri_of(path))
    assert [d.code for d in diagnostics] == ["JX101"]
    jx101 = next(d for d in diagnostics if d.code == "JX101")
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri_of(path)), range=jx101.range,
        context=types.CodeActionContext(diagnostics=[jx101])))
    fix_all = next(a for a in actions if a.kind == "source.fixAll.jaxlint")
    resolved = await client.code_action_resolve_async(fix_all)
    fixed = apply(text, resolved.edit.changes[uri_of(path)])
    assert "out_axes=(None, 0)" in fixed and "return x, y" in fixed and path.read_text() == text  # nothing written

    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri_of(path)),
        position=types.Position(line=1, character=text.splitlines()[1].index("JX202") + 2)))
    assert hover.contents.value.startswith("**JX202** `python-loop-unrolled`")


@pytest.mark.asyncio
async def test_a_crashing_module_does_not_stop_the_server(client: LanguageClient, tmp_path: Path) -> None:
    (tmp_path / "jaxlint.toml").write_text("")
    crash, good = tmp_path / "crash.py", tmp_path / "good.py"
    crash.write_text(CRASHING)
    good.write_text(FOUNDING)
    open_file(client, crash)
    [died] = await diagnostics_for(client, uri_of(crash))
    assert died.code == "JX903" and "exited with status 3" in died.message
    open_file(client, good)
    assert [d.code for d in await diagnostics_for(client, uri_of(good))] == ["JX101"]


@pytest.mark.asyncio
async def test_untraced_functions_are_information_only_when_asked(client: LanguageClient, tmp_path: Path) -> None:
    (tmp_path / "jaxlint.toml").write_text("infer-arguments = false\n")  # so that `norm` is untraced
    path = tmp_path / "plain.py"
    path.write_text("import jax.numpy as jnp\n\n\ndef norm(x):\n    return jnp.sqrt(jnp.sum(x * x))\n")
    open_file(client, path)
    assert await diagnostics_for(client, uri_of(path)) == []
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"jaxlint": {"showUntraced": True}}))
    client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri_of(path))))
    [shown] = await diagnostics_for(client, uri_of(path))
    assert shown.severity == types.DiagnosticSeverity.Information and shown.range.start.line == 3
    assert shown.message.startswith("norm not linted (not-a-target)") and "# jaxlint: args x=f32[...]" in shown.message


def write_tested_noisy_module(root: Path) -> Path:
    """A module whose function no target names (a key drawn twice, line 6), and a test of it run
    under `pytest --jaxlint`, which stores the finding."""
    import os
    import subprocess

    # Without inference, only the test run traces `noisy`: the editor shows what it stored.
    (root / "jaxlint.toml").write_text("infer-arguments = false\n")
    path = root / "noisy.py"
    path.write_text("import jax\n\n\ndef noisy(key, x):\n    a = jax.random.normal(key, x.shape)\n"
                    "    return a + jax.random.normal(key, x.shape)\n")
    (root / "test_noisy.py").write_text("import jax\nimport jax.numpy as jnp\nfrom noisy import noisy\n\n\n"
                                        "def test_noisy():\n    noisy(jax.random.PRNGKey(0), jnp.ones(3))\n")
    # The server's environment (the JAX_* variables are part of the store's key).
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    subprocess.run([sys.executable, "-m", "pytest", "-p", "no:xdist", "--jaxlint", "-q"], cwd=root, env=env,
                   capture_output=True, timeout=600)
    return path


@pytest.mark.asyncio
async def test_what_the_test_run_linted_shows_in_the_editor(client: LanguageClient, tmp_path: Path) -> None:
    """A function no target names, linted by `pytest --jaxlint`: its finding is a diagnostic."""
    path = write_tested_noisy_module(tmp_path)
    open_file(client, path)
    [reused] = await diagnostics_for(client, uri_of(path))
    assert reused.code == "JX401" and reused.range.start.line == 5


@pytest.mark.asyncio
async def test_a_save_runs_the_tests_again_when_configured(client: LanguageClient, tmp_path: Path) -> None:
    """`rerun-tests = true`: a save that makes the test run's entry stale runs the recorded test
    first, so the finding only the test traces follows the edit; without it, the module is stale."""
    path = write_tested_noisy_module(tmp_path)
    body = path.read_text()
    open_file(client, path)
    [reused] = await diagnostics_for(client, uri_of(path))
    assert reused.code == "JX401" and reused.range.start.line == 5

    path.write_text("# moved down a line\n" + body)
    client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri_of(path))))
    assert await diagnostics_for(client, uri_of(path)) == []  # stale, and no target traces it here

    (tmp_path / "jaxlint.toml").write_text("infer-arguments = false\nrerun-tests = true\n")
    client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri_of(path))))
    [fresh] = await diagnostics_for(client, uri_of(path))
    assert fresh.code == "JX401" and fresh.range.start.line == 6
    assert any("running the 1 test that reached it again" in m.message for m in client.log_messages)
