"""The MCP server: the tools ``check``, ``fix``, ``explain`` and ``rule``, and one resource per rule
page (``jaxlint://rules/JX101``), served over stdio by the SDK's ``MCPServer``.

``check``, ``fix`` and ``explain`` run jaxlint's command line (calls.py), so what they return is
what ``jaxlint check --output-format json``, ``check --diff`` and ``explain`` print; ``rule`` and
the resources read the pages through report/ruledocs.py, as ``jaxlint rule`` does.
"""
from __future__ import annotations

import json
from typing import Annotated, Any, Callable

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.resources import FunctionResource
from mcp_types import ToolAnnotations
from pydantic import Field

from jaxlint.about import __version__
from jaxlint.mcp_server.calls import Project, Ran, refused, run_jaxlint
from jaxlint.report.ruledocs import UnknownRule, doc_text, find_rule, rule_text
from jaxlint.rules import RuleInfo, rule_infos

INSTRUCTIONS = (
    "jaxlint traces JAX functions to jaxprs and reports what only shows there (vmap waste, "
    "recompilation, memory, PRNG key reuse, wrong values, unstable numerics). `check` lints paths "
    "of the project; `fix` shows the fixes jaxlint verified on values as a unified diff and writes "
    "them only with write=true; `explain` shows what one function compiles to; `rule` prints a "
    "rule's page. jaxlint imports the modules it checks: their top-level code runs.")

Paths = Annotated[list[str] | None, Field(
    description="files or folders, relative to the project folder (default: the whole project)")]
Selectors = Annotated[list[str] | None, Field(
    description="rule codes, prefixes (JX1) or names, as `--select`/`--ignore` take them; "
                "default: the project's configuration")]
Target = Annotated[str | None, Field(
    description="compile for this chip: cpu, tpu-v5e, tpu-v6e, tpu-v5p, tpu-v4 or a slice such as tpu-v5e:2x4 "
                "(default: the configured target)")]


class Tools:
    """The tools of one server, bound to its project folder."""

    def __init__(self, project: Project) -> None:
        self.project = project

    async def check(self, paths: Paths = None, select: Selectors = None, ignore: Selectors = None,
                    target: Target = None) -> dict[str, Any]:
        """Lint Python files or folders as `jaxlint check --output-format json` does: `findings` is its
        JSON array (each with code, message, location, fix, cost), `summary` what it wrote on stderr
        (the summary line and warnings), `not_linted` each JAX function it did not lint with why and
        the hint comment that would trace it, `coverage` the counts, `exit_status` 0 (clean) or 1."""
        argv = ["check", "--output-format=json", *self._selection(select, ignore, target), *self._paths(paths)]
        ran = _accepted(await run_jaxlint(self.project, argv, coverage=True))
        coverage = _json(ran.side, "the coverage report")
        return {"findings": _json(ran.stdout, "the findings"), "summary": ran.stderr.strip(),
                "not_linted": coverage["untraced"] + coverage["untraced_targets_defined_elsewhere"],
                "coverage": coverage["summary"], "exit_status": ran.status}

    async def fix(self, paths: Paths = None, select: Selectors = None, ignore: Selectors = None,
                  target: Target = None, unsafe_fixes: bool = False, write: bool = False) -> dict[str, Any]:
        """The fixes jaxlint verified (re-traced, same shapes, same values on generated inputs), as the
        unified diff `jaxlint check --diff` prints (`diff`, empty when there is none; `summary`: its
        stderr, with each fix it rejected and why). Nothing is written unless `write` is true: then
        `jaxlint check --fix` applies them, verifying again, and `fixed` holds the findings that
        remain and its summary. `unsafe_fixes` also includes unsafe fixes (`--unsafe-fixes`)."""
        flags = [*self._selection(select, ignore, target), *(["--unsafe-fixes"] if unsafe_fixes else [])]
        checked = self._paths(paths)
        shown = _accepted(await run_jaxlint(self.project, ["check", "--diff", *flags, *checked]))
        result: dict[str, Any] = {"diff": shown.stdout, "summary": shown.stderr.strip(), "written": False}
        if write and shown.stdout:
            argv = ["check", "--fix", "--output-format=json", *flags, *checked]
            applied = _accepted(await run_jaxlint(self.project, argv))
            result["written"] = True
            result["fixed"] = {"findings": _json(applied.stdout, "the findings"), "summary": applied.stderr.strip(),
                               "exit_status": applied.status}
        return result

    async def explain(self, function: Annotated[str, Field(
                          description="PATH::FUNCTION, e.g. examples/founding.py::my_mapped_function")],
                      args: Annotated[str | None, Field(
                          description='abstract arguments in the hint syntax, e.g. "x=f32[8,128], n=3"')] = None,
                      target: Target = None, full: bool = False) -> str:
        """What one function compiles to, as `jaxlint explain` prints it: its jaxpr, XLA's optimized
        HLO, what is computed twice and what each fix saves: by default the summary page (long
        listings condensed, a loop shown once with its trip count); `full`: everything."""
        argv = ["explain", *(["--full"] if full else []),
                *([f"--args={args}"] if args is not None else []),
                *([f"--target={target}"] if target is not None else []), self.project.function(function)]
        return _accepted(await run_jaxlint(self.project, argv), ok=(0,)).stdout

    def rule(self, rule: Annotated[str, Field(description="a code (JX101) or a name (vmap-unbatched-output)")]) -> str:
        """A rule's page as `jaxlint rule` prints it: what it finds, why it matters, its fix and options."""
        try:
            return rule_text(find_rule(rule), color=False)
        except UnknownRule as error:
            raise ToolError(str(error)) from None

    def _paths(self, paths: list[str] | None) -> list[str]:
        return [self.project.path(given) for given in (paths if paths else ["."])]

    def _selection(self, select: list[str] | None, ignore: list[str] | None, target: str | None) -> list[str]:
        flags = [f"--{name}={','.join(values)}" for name, values in (("select", select), ("ignore", ignore))
                 if values is not None]
        return flags + ([f"--target={target}"] if target is not None else [])


def _accepted(ran: Ran, ok: tuple[int, ...] = (0, 1)) -> Ran:
    """``ran`` when it exited with one of ``ok`` (1: findings remain); else jaxlint's message as a tool error."""
    if ran.status not in ok:
        raise refused(ran)
    return ran


def _json(text: str, what: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        raise ToolError(f"jaxlint did not write {what} as JSON: {text[:500]!r}") from None


def _page(rule: RuleInfo) -> Callable[[], str]:
    def page() -> str:
        return doc_text(rule)

    return page


def build_server(project: Project) -> MCPServer:
    """The server with its tools and a resource per rule page."""
    server = MCPServer("jaxlint", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING")
    tools = Tools(project)
    reading = ToolAnnotations(read_only_hint=True, open_world_hint=False)
    server.add_tool(tools.check, annotations=reading)
    server.add_tool(tools.fix, annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False,
                                                           open_world_hint=False))
    server.add_tool(tools.explain, annotations=reading)
    server.add_tool(tools.rule, annotations=reading)
    for rule in rule_infos():
        server.add_resource(FunctionResource.from_function(
            _page(rule), uri=f"jaxlint://rules/{rule.code}", name=rule.code, title=f"{rule.code} {rule.name}",
            description=rule.summary, mime_type="text/markdown"))
    return server


def serve(root: str) -> None:
    """Serve the project folder ``root`` over stdio until the client closes the connection."""
    build_server(Project(root)).run("stdio")
