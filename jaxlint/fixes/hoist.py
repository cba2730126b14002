"""The JX203 fix: evaluate ``jax.jit(lambda ...)`` or ``jax.jit(f)`` once, before the outermost loop it
does not depend on.

When the fix is offered is decided on the ``ast`` (free and bound names, literal arguments, no
defaults). The edit is computed with libcst on the affected statement only, never the module: the
loop statement hoisted out of, with the comment lines directly above it (the loop's leading lines
in libcst), parsed on its own inside a one-line wrapper (``if True:`` for an indented loop). In
that tree the assignment goes before the loop and its leading comments, and the jit call becomes
the new name; or the ``name = jax.jit(...)`` statement leaves the loop body with its own leading
comments and its trailing one. libcst renders the hoisted statement with the loop's indentation
(continuation lines keep their indentation relative to it) and line endings. The result is
emitted as plain text edits, ruff's way (compute on one statement's CST, emit text edits): the
inserted lines, and the replaced call or the deleted lines, checked against libcst's rendering of
the loop. Small edits do not conflict with other fixes inside the same loop.

Cost (2 shared cores, Python 3.11, libcst 1.9): importing libcst takes about 0.2 s, once per
process and only when a fix is built (the rule imports this module lazily); the edits take about
1 ms for a 3-line loop and 6 ms for a 33-line one, against well under 1 ms for the former
string slicing.
"""
from __future__ import annotations

import ast
import functools

import libcst as cst

from jaxlint.fixes.ast_spans import node_span
from jaxlint.model import Edit, Fix, Span
from jaxlint.scan.index import SourceIndex, bound_names, free_names
from jaxlint.text import apply_edits, newline_of, physical_lines


def hoist_fix(index: SourceIndex, call: ast.Call, function: ast.Lambda | ast.Name, loops: list[ast.AST],
              preferred: str = "jitted") -> Fix | None:
    """The fix for ``jax.jit(function, ...)`` (``call``) in the file ``index`` describes, run in
    ``loops`` (innermost first), or None when moving it could change what the program does.
    ``function`` is a lambda written in the call or the name of a function; a new name for the
    jitted function is ``preferred`` (suffixed when taken or when the file has several such calls)."""
    source, parents = index.source, index.parents
    if isinstance(function, ast.Lambda):
        a = function.args
        if a.defaults or any(d is not None for d in a.kw_defaults):
            return None  # defaults are evaluated when the lambda is created
    others = [*call.args[1:], *call.keywords]
    if any(k.arg is None for k in call.keywords) or not all(_literal(n) or _plain_name(n) for n in others):
        return None  # static_argnums=..., in_shardings=rows: literals and plain names only, no calls moved
    free = {n.id for n in ast.walk(call.func) if isinstance(n, ast.Name)} | free_names(function)
    free |= {n.id for o in others for n in ast.walk(o) if isinstance(n, ast.Name)}  # the loop must not bind them
    target = None
    for loop in loops:  # innermost first; bindings of an outer loop include the inner one's
        bound = bound_names(loop)
        if bound is None or free & bound:
            break
        target = loop
    if target is None:
        return None
    lines = physical_lines(source, keepends=True)
    loop_span = node_span(source, target)
    indent = lines[loop_span.start_line - 1][:loop_span.start_col]
    if indent.strip():
        return None
    moved = _movable_assignment(source, call, target, parents, free)
    if moved is not None:
        statement, name = moved
        message = f"Move `{name} = jax.jit(...)` before the loop"
    else:
        statement, name = None, _fresh_name(index, call, preferred)
        message = f"Create the jitted function once before the loop, as `{name}`"
    edits = _hoist_edits(source, lines, target, parents, indent, call, statement, name)
    return None if edits is None else Fix("safe", message, edits)


def _literal(node: ast.AST) -> bool:
    value = node.value if isinstance(node, ast.keyword) else node
    try:
        ast.literal_eval(value)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def _plain_name(node: ast.AST) -> bool:
    """A name read as it is (``in_shardings=rows``): evaluated before the loop it is the same value,
    since no loop the jit leaves binds it."""
    return isinstance(node.value if isinstance(node, ast.keyword) else node, ast.Name)


def _movable_assignment(source: str, call: ast.Call, loop: ast.AST, parents: dict,
                        free: set[str]) -> tuple[ast.Assign, str] | None:
    """``name = jax.jit(...)`` alone on its lines, directly in the loop body, the only binding of
    ``name`` in the loop and not read before it: the whole statement can move before the loop."""
    statement = parents.get(call)
    if not (isinstance(statement, ast.Assign) and statement.value is call and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name) and parents.get(statement) is loop
            and any(s is statement for s in loop.body) and len(loop.body) > 1):
        return None
    name = statement.targets[0].id
    if name in free:
        return None
    span = node_span(source, statement)
    lines = physical_lines(source)
    rest = lines[span.end_line - 1][span.end_col:].strip()
    if lines[span.start_line - 1][:span.start_col].strip() or (rest and not rest.startswith("#")):
        return None  # shares its lines with another statement
    for node in ast.walk(loop):
        if isinstance(node, ast.Name) and node.id == name and node is not statement.targets[0]:
            if not isinstance(node.ctx, ast.Load) or (node.lineno, node.col_offset) < (
                    statement.end_lineno, statement.end_col_offset):
                return None
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            return None
    return statement, name


def _fresh_name(index: SourceIndex, call: ast.Call, preferred: str) -> str:
    """``preferred`` (``jitted``); with several jit calls in loops in the file, ``jitted_<line>``
    so that two fixes never bind the same name."""
    used, in_loops = _names_and_jits_in_loops(index)
    name = preferred if in_loops == 1 else f"{preferred}_{call.lineno}"
    while name in used:
        name += "_"
    return name


@functools.lru_cache(maxsize=4)  # every fix of a file asks
def _names_and_jits_in_loops(index: SourceIndex) -> tuple[frozenset, int]:
    """(every name the file uses or binds, how many ``jax.jit`` calls run in loops)."""
    used: set = set()
    for n in ast.walk(index.tree):
        used.add(getattr(n, "name", None))
        if isinstance(n, ast.Name):
            used.add(n.id)
        elif isinstance(n, ast.arg):
            used.add(n.arg)
        elif isinstance(n, ast.alias):
            used.add(n.asname or n.name.partition(".")[0])
    in_loops = sum(1 for n in index.calls if "jax.jit" in index.call_names(n) and index.loops_around(n)[0])
    return frozenset(used), in_loops


# ---------------------------------------------------------------------------------------------
# The edits, computed on the loop statement's own CST


def _hoist_edits(source: str, lines: list[str], loop: ast.AST, parents: dict, indent: str, call: ast.Call,
                 statement: ast.Assign | None, name: str) -> tuple[Edit, ...] | None:
    """Insert ``name = <call>`` (or move ``statement``) before ``loop``, above the comment lines
    directly over it, and replace ``call`` by ``name`` (or delete ``statement``)."""
    loop_line, end_line = loop.lineno, loop.end_lineno
    first = _first_leading_comment(lines, loop, parents, indent)
    chunk = "".join(lines[first - 1:end_line])
    newline = _ending(lines[loop_line - 1]) or newline_of(source)
    # A one-line wrapper makes the chunk a module libcst parses unchanged: its lines start at line 2.
    prefix = ("if True:" if indent else "pass") + newline
    try:
        module = cst.parse_module(prefix + chunk)
    except cst.ParserSyntaxError:
        return None
    body = list(module.body[0].body.body) if indent else list(module.body[1:])
    if len(body) != 1 or not isinstance(body[0], (cst.For, cst.While)):
        return None
    old_loop = body[0]
    # Nodes are found by their order (no position metadata: computing it would double the cost);
    # the check on the rendered text below proves the right one changed.
    moved = _call_moved(source, module, old_loop, loop, call, name) if statement is None \
        else _statement_moved(old_loop, loop, statement)
    if moved is None:
        return None
    hoisted, new_loop, change = moved
    body = [hoisted, new_loop]
    if indent:
        new = module.with_changes(body=(module.body[0].with_changes(
            body=module.body[0].body.with_changes(body=body)),))
    else:
        new = module.with_changes(body=(module.body[0], *body))
    new_code = new.code
    if not new_code.startswith(prefix):
        return None
    new_chunk = new_code[len(prefix):]
    # The loop as libcst rendered it must be the old text with ``change`` applied.
    rest_text = _apply(chunk, first, change)
    if not new_chunk.endswith(rest_text):
        return None
    inserted = new_chunk[:len(new_chunk) - len(rest_text)]
    return Edit(Span(first, 0, first, 0), inserted), change


def _call_moved(source: str, module: cst.Module, old_loop: cst.CSTNode, loop: ast.AST, call: ast.Call,
                name: str) -> tuple[cst.CSTNode, cst.CSTNode, Edit] | None:
    """(``name = <call>``, the loop with ``name`` in the call's place, that replacement as an edit)."""
    replace = _ReplaceCall(loop, call, name)
    new_loop = old_loop.visit(replace)
    old_call = replace.found
    if old_call is None or replace.seen != replace.expected:
        return None
    value = old_call.with_changes(lpar=(), rpar=())
    if not _statement_parses(f"{name} = {module.code_for_node(value)}"):
        # A line break the enclosing brackets allowed needs the call's own parentheses now.
        value = old_call.with_changes(lpar=(cst.LeftParen(),), rpar=(cst.RightParen(),))
    hoisted = cst.SimpleStatementLine(body=(cst.Assign(targets=(cst.AssignTarget(cst.Name(name)),),
                                                       value=value),))
    return hoisted, new_loop, Edit(node_span(source, call), name)


def _statement_moved(old_loop: cst.CSTNode, loop: ast.AST,
                     statement: ast.Assign) -> tuple[cst.CSTNode, cst.CSTNode, Edit] | None:
    """(the statement with the comment lines right above it, the loop without them, their deletion
    as an edit); the loop's other leading lines stay with the next statement."""
    block, index = old_loop.body, _line_index(loop.body, statement)
    if not isinstance(block, cst.IndentedBlock) or index >= len(block.body):
        return None
    old = block.body[index]
    kept, carried = _split_leading_lines(old.leading_lines)
    hoisted = old.with_changes(leading_lines=carried)
    rest = [*block.body[:index], *block.body[index + 1:]]
    footer = block.footer
    if index < len(rest):  # the lines above that stay in the loop go to the next statement
        rest[index] = rest[index].with_changes(leading_lines=(*kept, *rest[index].leading_lines))
    else:
        footer = (*kept, *footer)
    new_loop = old_loop.with_changes(body=block.with_changes(body=rest, footer=footer))
    return hoisted, new_loop, Edit(Span(statement.lineno - len(carried), 0, statement.end_lineno + 1, 0), "")


def _first_leading_comment(lines: list[str], loop: ast.AST, parents: dict, indent: str) -> int:
    """The first line of the comment lines directly above ``loop`` (no blank line between), not
    indented deeper than it (deeper ones end the block before) and after the code before it."""
    parent = parents.get(loop)
    code_above = max((n.end_lineno for n in ast.walk(parent) if getattr(n, "end_lineno", None)
                      and n.end_lineno < loop.lineno), default=0) if parent is not None else 0
    first = loop.lineno
    while first - 1 > code_above:
        text = lines[first - 2]
        stripped = text.lstrip(" \t\f")
        if not stripped.startswith("#") or not indent.startswith(text[:len(text) - len(stripped)]):
            break
        first -= 1
    return first


class _ReplaceCall(cst.CSTTransformer):
    """Replaces the CST node of ``call`` by ``name``, found in one pass: among the calls in the
    loop whose first argument is of the same kind (a lambda, or the same name) and with as many
    arguments, the one at ``call``'s rank in source order (outer calls before the calls they
    contain)."""

    def __init__(self, loop: ast.AST, call: ast.Call, name: str) -> None:
        super().__init__()
        self.arity = len(call.args) + len(call.keywords)
        self.kind = _first_argument_kind(call.args[0])
        ranked = sorted((n for n in ast.walk(loop) if isinstance(n, ast.Call) and n.args
                         and _first_argument_kind(n.args[0]) == self.kind
                         and len(n.args) + len(n.keywords) == self.arity),
                        key=lambda n: (n.lineno, n.col_offset, -n.end_lineno, -n.end_col_offset))
        self.expected, self.rank = len(ranked), next(i for i, n in enumerate(ranked) if n is call)
        self.name, self.seen, self.found = name, 0, None

    def visit_Call(self, node: cst.Call) -> bool:
        if node.args and _first_argument_kind(node.args[0].value) == self.kind \
                and node.args[0].keyword is None and not node.args[0].star and len(node.args) == self.arity:
            if self.seen == self.rank:
                self.found = node
            self.seen += 1
        return True

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if original_node is self.found:
            return cst.Name(self.name, lpar=original_node.lpar, rpar=original_node.rpar)
        return updated_node


def _first_argument_kind(node: ast.AST | cst.CSTNode) -> str | None:
    """"lambda", "name:<id>" or None, for an ``ast`` or a libcst expression alike."""
    if isinstance(node, (ast.Lambda, cst.Lambda)):
        return "lambda"
    if isinstance(node, ast.Name):
        return f"name:{node.id}"
    if isinstance(node, cst.Name):
        return f"name:{node.value}"
    return None


def _line_index(body: list[ast.stmt], statement: ast.stmt) -> int:
    """The index of ``statement`` in the CST's block: statements sharing a line (``a; b``) are one."""
    index, previous = -1, None
    for node in body:
        if previous is None or node.lineno != previous.end_lineno:
            index += 1
        if node is statement:
            return index
        previous = node
    return len(body)


def _split_leading_lines(leading: tuple[cst.EmptyLine, ...] | list[cst.EmptyLine]
                         ) -> tuple[tuple[cst.EmptyLine, ...], tuple[cst.EmptyLine, ...]]:
    """(lines that stay, the comment lines directly above the statement, which move with it)."""
    cut = len(leading)
    while cut and leading[cut - 1].comment is not None:
        cut -= 1
    return tuple(leading[:cut]), tuple(leading[cut:])


def _statement_parses(text: str) -> bool:
    if "\n" not in text and "\r" not in text:
        return True  # one line of an expression that parsed: a statement too
    try:
        ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def _ending(line: str) -> str:
    return line[len(line.rstrip("\r\n")):]


def _apply(chunk: str, first: int, edit: Edit) -> str:
    """``edit`` (in file lines) applied to ``chunk``, the file's text from line ``first`` on."""
    span = edit.span
    shifted = Span(span.start_line - first + 1, span.start_col, span.end_line - first + 1, span.end_col)
    return apply_edits(chunk, [Edit(shifted, edit.content)])

