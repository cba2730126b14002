"""``jaxlint server``: a language server over stdio (pygls).

- Diagnostics when a Python file is opened or saved: the file on disk is checked with the
  configuration ``check`` would use, through the result cache (an unchanged module answers at
  once) and one warm worker, started with the server so JAX is imported before the first save.
  A worker that crashes or times out is replaced by the pool; the finding says what happened.
- Code actions on a diagnostic: its fix (a safe one is the preferred quick fix; an unsafe one
  says so in its title) and "add ``# noqa: CODE``"; the source action ``source.fixAll.jaxlint``
  applies the fixes ``--fix`` would, verified on values first (computed when the editor resolves
  the action, since verification starts fresh workers).
- Hover on a code in a ``# noqa:`` comment: the rule's name and summary.
- With ``rerun-tests = true`` in the configuration, a save of a module whose test-run entry is
  stale runs the recorded tests that reached it first (``check --rerun-tests``), so the diagnostics
  include what only the tests trace; what ran is logged to the editor, a failure shown.
- The setting ``showUntraced`` (initialization options or workspace configuration ``jaxlint``):
  JAX functions the check did not lint, as information diagnostics.
- All of the above that runs code (importing, tracing, verifying fixes, running tests) only in a
  folder the user trusts (gate.py); elsewhere what needs no code run, and a notice per JAX file.

Checks run on pygls's thread pool, one at a time (one worker), so the editor never waits on one.
"""
from __future__ import annotations

import io
import json
import logging
import os
import threading
import time
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from jaxlint.about import __version__
from jaxlint.config import Config, ConfigError, Layer, load_config
from jaxlint.config.keys import parse_snippet
from jaxlint.engine.add_noqa import add_noqa
from jaxlint.engine.cache import ResultCache
from jaxlint.engine.check import check
from jaxlint.engine.pool import WorkerPool, kill_every_worker
from jaxlint.engine.rerun import check_rerunning_stale, stale_in_store
from jaxlint.engine.results import CheckResult
from jaxlint.model import Finding, Span
from jaxlint.rules import all_rules, codes_by_name
from jaxlint.scan.noqa import read_comments
from jaxlint.server.convert import diagnostic, text_edits, to_range, whole_text_edit
from jaxlint.server.gate import Gate, notice, without_code_running_keys
from jaxlint.text import split_lines

LOG = logging.getLogger(__name__)
FIX_ALL = "source.fixAll.jaxlint"


class JaxlintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("jaxlint", __version__)
        self.pool: WorkerPool | None = None
        self.lock = threading.Lock()  # one check at a time: one warm worker
        self.findings: dict[str, list[Finding]] = {}  # uri -> the last check's findings
        self.show_untraced = False
        self.target_override: list[Layer] = []  # `jaxlint server --target`: over each project's target
        self.gate = Gate()
        self.workspace_folders: list[str] = []  # as the editor named them at initialize
        self.trust_error_said: str | None = None

    def start_worker(self) -> None:
        """Import JAX in the worker now, not on the first save."""
        with self.lock:
            self.pool = self.pool or WorkerPool()
            try:
                self.pool.warm()
            except Exception as error:  # a worker that cannot start: checks report it later
                LOG.warning("jaxlint worker did not start: %s", error)

    def stop_worker(self) -> None:
        """Kill the warm worker now, with what the user's modules started, even in the middle of
        a check (which then ends, its module reported as crashed to an editor that is leaving)."""
        while not self.lock.acquire(blocking=False):
            # Again while the check ends: it may have started a worker since (a fix verifier's too).
            kill_every_worker()
            time.sleep(0.02)
        try:
            if self.pool is not None:
                self.pool.close()
                self.pool = None
        finally:
            self.lock.release()

    def shutdown(self) -> None:
        """The connection ends (the editor's exit, its stdin closed, the editor killed), with or
        without the shutdown request: the worker first, then pygls waits for the running handlers."""
        self.stop_worker()
        super().shutdown()

    def runs(self, path: str) -> bool:
        """The gate lets the server run ``path``'s code; a trust list that cannot be read is said once."""
        runs = self.gate.runs(path)
        if self.gate.error is not None and self.gate.error != self.trust_error_said:
            self.window_show_message(types.ShowMessageParams(types.MessageType.Error, self.gate.error))
        self.trust_error_said = self.gate.error
        return runs

    def load_config(self, path: str) -> Config | None:
        """The file's configuration; None when it is invalid (said in the editor)."""
        try:
            config = load_config([path], overrides=self.target_override)
        except ConfigError as error:
            self.window_show_message(types.ShowMessageParams(types.MessageType.Error,
                                                             f"jaxlint: configuration error: {error}"))
            return None
        return config

    def check_file(self, path: str, config: Config, runs: bool, rerun: bool = False,
                   **options: Any) -> CheckResult:
        """``jaxlint check PATH`` with the file's configuration, the cache and the warm worker (and
        with ``rerun`` and ``rerun-tests`` configured, ``--rerun-tests``); unless ``runs``, with
        nothing imported or run and the cache only read. The keys that run more than the module
        apply only from a configuration file in a trusted folder."""
        if not runs:
            with self.lock:
                return check([path], config.rules(), timeout=config.timeout, config=config, run_code=False,
                             cache=ResultCache(config.cache_dir, config.root, writes=False), **options)
        if not self.gate.configuration_runs(config):
            without_code_running_keys(config)
        with self.lock:
            self.pool = self.pool or WorkerPool(config.timeout)
            self.pool.timeout = config.timeout
            cache = ResultCache(config.cache_dir, config.root)

            def run_check(fixing: bool = True) -> CheckResult:
                return check([path], config.rules(), timeout=config.timeout, config=config, cache=cache,
                             pool=self.pool, **options)

            if not (rerun and config.rerun_tests):
                return run_check()
            said = io.StringIO()
            stale = stale_in_store([path], config, [rule.code for rule in config.rules()], cache)
            result, ran = check_rerunning_stale(run_check, stale, cache, config.root, config.rerun_timeout, said)
        if said.getvalue():
            self.window_log_message(types.LogMessageParams(types.MessageType.Info, said.getvalue().strip()))
        if ran is not None and ran.outcome != "ran":
            self.window_show_message(types.ShowMessageParams(types.MessageType.Warning, said.getvalue().strip()))
        return result

    def publish(self, uri: str, rerun: bool = False) -> None:
        document = self.workspace.get_text_document(uri)
        path = document.path
        if not path.endswith(".py") or not os.path.isfile(path):
            return
        config = self.load_config(path)
        if config is None:
            return
        runs = self.runs(path)
        result = self.check_file(path, config, runs, rerun=rerun)
        findings = [f for f in result.findings if os.path.realpath(f.path) == os.path.realpath(path)]
        self.findings[uri] = findings
        text = result.files[0].source.text if result.files else document.source
        lines, codec = split_lines(text), self.workspace.position_codec
        diagnostics = [diagnostic(f, lines, codec) for f in findings]
        if not runs and result.files and (result.files[0].functions or result.files[0].targets):
            diagnostics.append(notice(path, config, text, codec))
        if self.show_untraced and runs:
            diagnostics += _untraced(result, lines, codec)
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics))


server = JaxlintServer()


@server.feature(types.INITIALIZED)
def initialized(ls: JaxlintServer, params: types.InitializedParams) -> None:
    """The worker starts now (JAX imported before the first save) when a workspace folder is trusted."""
    if any(ls.gate.trusts_folder(folder) for folder in ls.workspace_folders or [os.getcwd()]):
        ls.thread_pool.submit(ls.start_worker)


@server.feature(types.INITIALIZE)
def initialize(ls: JaxlintServer, params: types.InitializeParams) -> None:
    options = params.initialization_options if isinstance(params.initialization_options, dict) else {}
    ls.show_untraced = bool(options.get("showUntraced", False))
    if params.workspace_folders:
        ls.workspace_folders = [to_fs_path(folder.uri) for folder in params.workspace_folders]
    elif params.root_uri or params.root_path:
        ls.workspace_folders = [to_fs_path(params.root_uri) if params.root_uri else params.root_path]
    ls.workspace_folders = [os.path.realpath(folder) for folder in ls.workspace_folders if folder]
    if options.get("trusted") is True:  # the editor trusts its workspace (VS Code's Workspace Trust)
        ls.gate.editor_folders = list(ls.workspace_folders)


@server.feature(types.SHUTDOWN)
def shutdown(ls: JaxlintServer, params: None) -> None:
    """Stop the worker (and what the user's modules started) before the editor's exit."""
    ls.stop_worker()


@server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
def configuration(ls: JaxlintServer, params: types.DidChangeConfigurationParams) -> None:
    settings = params.settings.get("jaxlint", params.settings) if isinstance(params.settings, dict) else {}
    if isinstance(settings, dict) and "showUntraced" in settings:
        ls.show_untraced = bool(settings["showUntraced"])


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
@server.thread()
def did_open(ls: JaxlintServer, params: types.DidOpenTextDocumentParams) -> None:
    ls.publish(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
@server.thread()
def did_save(ls: JaxlintServer, params: types.DidSaveTextDocumentParams) -> None:
    ls.publish(params.text_document.uri, rerun=True)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: JaxlintServer, params: types.DidCloseTextDocumentParams) -> None:
    ls.findings.pop(params.text_document.uri, None)
    ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[]))


@server.feature(types.TEXT_DOCUMENT_CODE_ACTION,
                types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL],
                                        resolve_provider=True))
def code_actions(ls: JaxlintServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    uri = params.text_document.uri
    document = ls.workspace.get_text_document(uri)
    lines, codec = split_lines(document.source), ls.workspace.position_codec
    actions = []
    for finding in ls.findings.get(uri, []):
        shown = diagnostic(finding, lines, codec)
        if not _overlaps(shown.range, params.range):
            continue
        if finding.fix is not None and finding.fix.applicability in ("safe", "unsafe"):
            unsafe = finding.fix.applicability == "unsafe"
            actions.append(types.CodeAction(
                title=f"jaxlint ({finding.code}): {finding.fix.message}" + (" (unsafe fix)" if unsafe else ""),
                kind=types.CodeActionKind.QuickFix, diagnostics=[shown], is_preferred=not unsafe,
                edit=types.WorkspaceEdit(changes={uri: text_edits(finding.fix.edits, lines, codec)})))
        if not finding.code.startswith("JX8"):
            noqa, added = add_noqa(finding.path, document.source, [finding])
            if added:
                actions.append(types.CodeAction(
                    title=f"jaxlint: add `# noqa: {finding.code}`", kind=types.CodeActionKind.QuickFix,
                    diagnostics=[shown], edit=types.WorkspaceEdit(changes={uri: whole_text_edit(
                        document.source, noqa, codec)})))
    if any(f.fix is not None and f.fix.applicability == "safe" for f in ls.findings.get(uri, [])) \
            and ls.runs(document.path):  # fixes are verified by running the module
        actions.append(types.CodeAction(title="jaxlint: apply all verified safe fixes", kind=FIX_ALL,
                                        data={"uri": uri}))
    return actions


@server.feature(types.CODE_ACTION_RESOLVE)
@server.thread()
def resolve_fix_all(ls: JaxlintServer, action: types.CodeAction) -> types.CodeAction:
    """The fix-all action's edit: the fixes ``--fix`` would write, verified on values (``--diff``)."""
    uri = (action.data or {}).get("uri") if isinstance(action.data, dict) else None
    if action.kind != FIX_ALL or uri is None:
        return action
    document = ls.workspace.get_text_document(uri)
    config = ls.load_config(document.path)
    if config is None or not ls.runs(document.path):  # revoked since the action was offered
        return action
    result = ls.check_file(document.path, config, True, diff=True)
    fixed = result.fixed_texts.get(document.path) or document.source
    action.edit = types.WorkspaceEdit(changes={uri: whole_text_edit(document.source, fixed,
                                                                    ls.workspace.position_codec)})
    return action


@server.feature(types.TEXT_DOCUMENT_HOVER)
def hover(ls: JaxlintServer, params: types.HoverParams) -> types.Hover | None:
    """On a code (or rule name) in a suppression comment: the rule's name and summary. The
    comment is read as suppressions read it (scan/noqa.py)."""
    document = ls.workspace.get_text_document(params.text_document.uri)
    position = ls.workspace.position_codec.position_from_client_units(document.lines, params.position)
    for directive in read_comments(document.source, codes_by_name()).line_directives(position.line + 1):
        for item in directive.items or []:
            if item.start <= position.character <= item.end and item.code is not None:
                rule = next((r for r in all_rules() if r.code == item.code), None)
                if rule is None:
                    return None
                return types.Hover(contents=types.MarkupContent(
                    kind=types.MarkupKind.Markdown,
                    value=f"**{rule.code}** `{rule.name}` ({rule.severity})\n\n{rule.summary}"))
    return None


def _overlaps(a: types.Range, b: types.Range) -> bool:
    return (a.start.line, a.start.character) <= (b.end.line, b.end.character) and \
        (b.start.line, b.start.character) <= (a.end.line, a.end.character)


def _untraced(result: CheckResult, lines: list[str], codec: object) -> list[types.Diagnostic]:
    """JAX functions the check did not lint, as information (the ``showUntraced`` setting)."""
    from jaxlint.report.coverage import coverage

    shown = []
    for entry in coverage(result).untraced:
        text = lines[entry.line - 1] if 0 < entry.line <= len(lines) else ""
        span = Span(max(entry.line, 1), len(text) - len(text.lstrip()), max(entry.line, 1), len(text))
        shown.append(types.Diagnostic(range=to_range(span, lines, codec), source="jaxlint",
                                      severity=types.DiagnosticSeverity.Information,
                                      message=f"{entry.target} not linted ({entry.kind}): {entry.reason}"
                                              + (f"\n{entry.hint}" if entry.hint else "")))
    return shown


def main(target: str | None = None) -> None:
    """Serve over stdio; ``target``: ``--target``, over each project's configured one."""
    if target is not None:
        server.target_override = [parse_snippet(f"target = {json.dumps(target)}", os.getcwd())]
    server.start_io()
