"""JX302 missing-donation: a large jit input an output replaces, not donated, though callers rebind it."""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Iterable

from jaxlint.ir import Value, costs, shards
from jaxlint.model import Cost, Edit, Finding, Fix, Span, Target
from jaxlint.rules.base import Option, ProgramContext, Rule
from jaxlint.scan.index import SourceIndex
from jaxlint.text import char_span, top_level_items


class MissingDonation(Rule):
    code = "JX302"
    name = "missing-donation"
    summary = "A large input an output replaces, not donated, though callers rebind it."
    severity = "warning"
    fix = "display-only"
    reads_helpers = False  # about the target's own jit call
    # A parameter whose replaced leaves total at least this many bytes is reported.
    threshold_bytes = 1 << 20
    options = {"min-bytes": Option(int, threshold_bytes, "bytes a parameter's replaced leaves must total to be "
                                   "reported", minimum=0)}

    @classmethod
    def check_program(cls, ctx: ProgramContext) -> Iterable[Finding]:
        target = ctx.target
        if target.kind not in ("jit-decorated", "jit-bound"):
            return
        tree = ctx.index.tree
        if tree is None:
            return
        jit = _find_jit(ctx.index, target)
        donated = _donated(jit.keywords, target.params) if jit is not None else None
        if donated is None:
            return  # no jit call in the source we understand, or a donation we cannot evaluate
        leaves = _leaves_per_parameter(ctx.signature, target.params, len(ctx.program.top.inputs))
        if leaves is None:
            return
        rebound = _rebound_parameters(ctx.index, target)
        inputs = ctx.program.top.inputs
        # Outputs that are an input unchanged are forwarded by jit without a new buffer.
        free = [out for out in ctx.program.top.outputs if not any(out is v for v in inputs)]
        found: list[_Replaced] = []
        start = 0
        for param, count in leaves:
            values = inputs[start:start + count]
            start += count
            if param not in target.params or param in donated or param not in rebound:
                continue
            replaced = _replaced(values, free)
            total = sum(costs.nbytes(v) for v in replaced)
            if replaced and total >= ctx.option(cls, "min-bytes"):
                found.append(_Replaced(param, target.params.index(param), replaced, count, total,
                                       rebound[param]))
        if not found:
            return
        # One finding per jit (they would share its place): every parameter it should donate.
        assert jit is not None  # donated is None without a jit
        argnums = [r.argnum for r in found]
        total = sum(_per_device(r) for r in found)
        cost = Cost(basis="shapes", flops=0.0, bytes=float(total), equations=None,
                    note="device memory, per device: a second buffer the size of each replaced "
                         "input (a sharded input's share) is live while the function runs")
        yield ctx.finding(cls, _message(found), jit.span, _fix(ctx.source, tree, jit, argnums), cost=cost)


@dataclass
class _Replaced:
    """A parameter whose large leaves an output repeats."""

    param: str
    argnum: int
    leaves: list[Value]  # the replaced input leaves
    count: int  # all array leaves of the parameter
    total: int  # bytes of the replaced leaves
    line: int  # the first call site rebinding it


@dataclass
class _Jit:
    """The source of the jit: ``jax.jit`` written as a decorator or a call."""

    span: Span  # where the finding points: the def's name, or the jax.jit(...) call
    node: ast.expr  # the decorator expression or the call that carries jit's keywords
    keywords: dict[str, ast.expr]


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def _is_jit(node: ast.expr) -> bool:
    return _dotted(node).split(".")[-1] == "jit"


def _jit_keywords(node: ast.expr) -> dict[str, ast.expr] | None:
    """Keywords of ``jit``, ``jit(...)``, ``partial(jit, ...)``, ``jit(f, ...)`` or ``partial(jit, ...)(f)``."""
    if _is_jit(node):
        return {}
    if not isinstance(node, ast.Call):
        return None
    own = {k.arg: k.value for k in node.keywords if k.arg}
    if _is_jit(node.func):
        return own
    if _dotted(node.func).split(".")[-1] == "partial" and node.args and _is_jit(node.args[0]):
        return own
    inner = _jit_keywords(node.func)  # partial(jax.jit, ...)(f) / jax.jit(...)(f)
    return None if inner is None else inner | own


def _find_jit(index: SourceIndex, target: Target) -> _Jit | None:
    defs, assignments = index.memo("jx302.definitions", lambda: _definitions(index.tree))
    if target.kind == "jit-decorated":
        node = defs.get((target.name, target.name_span.start_line))
        for decorator in node.decorator_list if node is not None else ():
            keywords = _jit_keywords(decorator)
            if keywords is not None:
                return _Jit(target.name_span, decorator, keywords)
    if target.kind == "jit-bound":
        for node in assignments.get(target.span.start_line, ()):
            keywords = _jit_keywords(node.value)
            if keywords is not None:
                return _Jit(index.span(node.value), node.value, keywords)
    return None


def _definitions(tree: ast.Module) -> tuple[dict[tuple[str, int], ast.AST], dict[int, list[ast.AST]]]:
    """The file's defs by (name, line) and its assignments of a call by line, found in one walk."""
    defs: dict[tuple[str, int], ast.AST] = {}
    assignments: dict[int, list[ast.AST]] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            defs.setdefault((node.name, node.lineno), node)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Call):
            assignments.setdefault(node.lineno, []).append(node)
    return defs, assignments


def _donated(keywords: dict[str, ast.expr], params: list[str]) -> set[str] | None:
    """Parameter names jit donates; None when the source's donation cannot be evaluated."""
    names: set[str] = set()
    for key in ("donate_argnums", "donate_argnames"):
        if key not in keywords:
            continue
        try:
            value = ast.literal_eval(keywords[key])
        except ValueError:
            return None
        for item in value if isinstance(value, (tuple, list)) else (value,):
            if isinstance(item, int) and -len(params) <= item < len(params):
                names.add(params[item])
            elif isinstance(item, str):
                names.add(item)
            else:
                return None
    return names


# An array leaf in a signature: ``f32[4,3]``, ``bf16[]``, ``key<fry>[]``.
_LEAF = re.compile(r"(?<![\w\]\)])[A-Za-z][\w<>]*\[[^\[\]]*\]")
_STRING = re.compile(r"'(?:\\.|[^'\\])*'|\"(?:\\.|[^\"\\])*\"")
_KEYWORD = re.compile(r"([A-Za-z_]\w*)=(?!=)")


def _leaves_per_parameter(signature: str, params: list[str], total: int) -> list[tuple[str | None, int]] | None:
    """(parameter, number of array leaves) in the order JAX flattens the arguments: positional
    arguments, then keyword arguments sorted by name. None when they do not add up to ``total``."""
    # Strings blanked first: no leaf pattern, bracket or comma inside a static string value counts
    # (and a lone quote of some object's repr opens nothing).
    text = _STRING.sub("''", signature)
    positional, keyword = [], []
    for index, part in enumerate(top_level_items(text, quotes="", strict=False)):
        named = _KEYWORD.match(part)
        if named:
            keyword.append((named.group(1), len(_LEAF.findall(part[named.end():]))))
        else:
            positional.append((params[index] if index < len(params) else None, len(_LEAF.findall(part))))
    result = positional + sorted(keyword)
    return result if sum(count for _, count in result) == total else None


def _rebound_parameters(index: SourceIndex, target: Target) -> dict[str, int]:
    """Parameters some call site passes and rebinds to the result (``state = step(state, x)``),
    with the line of the first such call site."""
    callee = target.bound_name or target.name
    is_method = "." in target.qualname and "<locals>" not in target.qualname
    offset = 1 if is_method and target.params[:1] in (["self"], ["cls"]) else 0
    by_callee = index.memo("jx302.call_assignments", lambda: _call_assignments(index.tree))
    rebound: dict[str, int] = {}
    sites = by_callee.get(("attribute", callee), []) + ([] if is_method else by_callee.get(("name", callee), []))
    for node in sorted(sites, key=lambda n: n.lineno):
        assigned = {ast.unparse(t) for target_node in node.targets for t in _flatten(target_node)}
        for position, arg in enumerate(node.value.args):
            if isinstance(arg, ast.Starred):
                break
            if position + offset < len(target.params) and ast.unparse(arg) in assigned:
                rebound.setdefault(target.params[position + offset], node.lineno)
        for keyword in node.value.keywords:
            if keyword.arg and ast.unparse(keyword.value) in assigned:
                rebound.setdefault(keyword.arg, node.lineno)
    return rebound


def _call_assignments(tree: ast.Module) -> dict[tuple[str, str], list[ast.Assign]]:
    """``x = f(...)`` and ``x = obj.f(...)`` outside jitted functions, by ("name", f) or
    ("attribute", f): a call inside another jitted function is inlined into it, where its
    donation would be ignored."""
    traced = {id(inner) for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
              and any(_jit_keywords(d) is not None for d in node.decorator_list) for inner in ast.walk(node)}
    found: dict[tuple[str, str], list[ast.Assign]] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Assign) or not isinstance(node.value, ast.Call) or id(node) in traced:
            continue
        func = node.value.func
        if isinstance(func, ast.Name):
            found.setdefault(("name", func.id), []).append(node)
        elif isinstance(func, ast.Attribute):
            found.setdefault(("attribute", func.attr), []).append(node)
    return found


def _flatten(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, (ast.Tuple, ast.List)):
        return [leaf for element in node.elts for leaf in _flatten(element)]
    if isinstance(node, ast.Starred):
        return []
    return [node]


def _replaced(values: list[Value], free: list[Value]) -> list[Value]:
    """The large input leaves an output repeats (shape and dtype); each output matches once."""
    replaced = []
    for value in values:
        if costs.nbytes(value) is None:
            continue
        for out in free:
            if out.shape == value.shape and out.dtype == value.dtype:
                free.remove(out)
                replaced.append(value)
                break
    return replaced


def _argnums_text(argnums: list[int]) -> str:
    return f"({argnums[0]},)" if len(argnums) == 1 else f"({', '.join(map(str, argnums))})"


def _message(found: list[_Replaced]) -> str:
    described = []
    for r in found:
        if r.count == 1:
            value = r.leaves[0]
            what = f"{getattr(value.dtype, 'name', value.dtype)}[{','.join(str(d) for d in value.shape)}]"
        else:
            what = f"{len(r.leaves)} of its {r.count} arrays"
        share = _per_device(r)
        each = f", {share / 2**20:.2f} MiB per device" if share != r.total else ""
        described.append(f"'{r.param}' ({what}, {r.total / 2**20:.1f} MiB{each}, rebound by the call on "
                         f"line {r.line})")
    total = sum(_per_device(r) for r in found)
    where = " on each device" if total != sum(r.total for r in found) else ""
    subject = (f"argument {described[0]} is" if len(found) == 1
               else f"arguments {', '.join(described[:-1])} and {described[-1]} are")
    return (f"{subject} replaced by an output of the same shape and dtype, but not donated; add "
            f"donate_argnums={_argnums_text(sorted(r.argnum for r in found))} so XLA can write the "
            "output into the input's buffer. Cost: without donation the input and the output are both "
            f"live: {total} bytes of extra device memory{where} per call (and no in-place update).")


def _per_device(replaced: _Replaced) -> int:
    """The bytes of the replaced leaves one device holds: a leaf whose type is sharded over the
    mesh (Explicit axes) is split among the devices; the whole of any other."""
    return sum((costs.nbytes(v) or 0) // shards(v) for v in replaced.leaves)


def _fix(source: str, tree: ast.Module, jit: _Jit, argnums: list[int]) -> Fix | None:
    node = jit.node
    keyword = f"donate_argnums={_argnums_text(sorted(argnums))}"

    def span(start: ast.AST, end: ast.AST | None = None, at_end: bool = False) -> Span:
        end = end or start
        if at_end:
            return char_span(source, Span(end.end_lineno, end.end_col_offset, end.end_lineno, end.end_col_offset))
        return char_span(source, Span(start.lineno, start.col_offset, end.end_lineno, end.end_col_offset))

    if isinstance(node, ast.Call):
        existing = [k for k in node.keywords if k.arg == "donate_argnums"]
        if existing:
            value = ast.literal_eval(existing[0].value)
            numbers = sorted({*(value if isinstance(value, (tuple, list)) else (value,)), *argnums})
            edit = Edit(span(existing[0].value), _argnums_text(numbers))
        else:
            last = max([*node.args, *node.keywords], key=lambda n: (n.end_lineno, n.end_col_offset),
                       default=None)
            if last is None:
                return None
            edit = Edit(span(last, at_end=True), f", {keyword}")
        return Fix("display-only", f"donate the argument: {keyword}", (edit,))
    # A bare ``@jax.jit``: wrap it in functools.partial.
    jit_text = ast.get_source_segment(source, node) or "jax.jit"
    edits = []
    imports = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    if any(isinstance(n, ast.ImportFrom) and n.module == "functools"
           and any(a.name == "partial" and a.asname is None for a in n.names) for n in imports):
        partial = "partial"
    else:
        partial = "functools.partial"
        if not any(isinstance(n, ast.Import) and any(a.name == "functools" and a.asname is None
                                                    for a in n.names) for n in imports):
            after_future = [n for n in imports if not (isinstance(n, ast.ImportFrom) and n.module == "__future__")]
            first = after_future[0] if after_future else (tree.body[0] if tree.body else None)
            line = first.lineno if first is not None else 1
            edits.append(Edit(Span(line, 0, line, 0), "import functools\n"))
    edits.append(Edit(span(node), f"{partial}({jit_text}, {keyword})"))
    return Fix("display-only", f"donate the argument: {partial}({jit_text}, {keyword})", tuple(edits))
