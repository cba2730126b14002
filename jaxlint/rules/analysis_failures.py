"""Analysis failures are findings, not tracebacks. The pipeline reports these itself."""
from __future__ import annotations

from jaxlint.rules.base import Rule


class SyntaxErrorRule(Rule):
    code, name, severity = "JX900", "syntax-error", "error"
    summary = "The file does not parse; nothing in it was analyzed."
    checks_ir = False


class ImportErrorRule(Rule):
    code, name, severity = "JX901", "import-error", "error"
    summary = "Importing the module raised (or exited); its functions were not traced."
    checks_ir = False


class AnalysisTimeoutRule(Rule):
    code, name, severity = "JX902", "analysis-timeout", "error"
    summary = "Importing or tracing the module took longer than the time limit."
    checks_ir = False


class WorkerCrashedRule(Rule):
    code, name, severity = "JX903", "worker-crashed", "error"
    summary = "The process analyzing the module died (os._exit, a segfault, killed)."
    checks_ir = False



class InvalidHintRule(Rule):
    code, name, severity = "JX905", "invalid-hint", "error"
    summary = "A `# jaxlint: args` hint comment is malformed or does not match the signature."
    checks_ir = False


class InternalErrorRule(Rule):
    code, name, severity = "JX906", "internal-error", "error"
    summary = "jaxlint itself failed on this function (a bug in jaxlint); other functions were checked."
    checks_ir = False
