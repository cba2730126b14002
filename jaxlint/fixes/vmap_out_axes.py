"""The JX101 fix: ``out_axes`` with None at the unbatched outputs, and ``x[0]`` -> ``x``.

Built only when the source makes it safe: the vmap application ``jax.vmap(f, ...)(args)`` is the
whole right-hand side of an assignment whose targets (a name, or tuples/lists of names) reach each
unbatched output, and every use of that output up to the next rebinding, in straight-line code of
the same function, selects a single row with a constant index. Anything else (loops, closures,
comprehensions, ``global``, rebinding in a branch, a use of the whole value) gives no fix.

Works on Python's ``ast``, parsed once per source text. ast and ``co_positions`` (the vmap
record's span) count columns in UTF-8 bytes; ``Span`` counts characters: ``ast_spans.node_span``
and ``jaxlint.text.char_span`` convert.
"""
from __future__ import annotations

import ast
import functools
from dataclasses import dataclass
from typing import Any, Union

from jaxlint.fixes.ast_spans import node_span, node_text
from jaxlint.model import Edit, Fix, Span
from jaxlint.scan.index import parse as parse_source

_NESTED_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.ListComp,
                  ast.SetComp, ast.DictComp, ast.GeneratorExp)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_NOT_CONSTANT = object()  # a subscript whose key is not an int or str literal

Key = Union[int, str]


@dataclass(frozen=True)
class _Parsed:
    tree: ast.Module
    parents: dict[ast.AST, ast.AST]
    calls: dict[tuple[int, int, int, int], ast.Call]  # by (line, byte col, end line, end byte col)
    source: str


@functools.lru_cache(maxsize=8)
def _parse(source: str) -> _Parsed | None:
    """The source's calls by byte position, on the shared parse of the text (jaxlint.scan.index)."""
    parsed = parse_source(source)
    if parsed is None:
        return None
    calls = {(node.lineno, node.col_offset, node.end_lineno, node.end_col_offset): node
             for node in ast.walk(parsed.tree) if isinstance(node, ast.Call)}
    return _Parsed(parsed.tree, parsed.parents, calls, source)


def _node_span(parsed: _Parsed, node: ast.AST) -> Span:
    return node_span(parsed.source, node)


def build_fix(source: str, record: Any, leaves: list[int]) -> Fix | None:
    """The fix declaring ``leaves`` of the vmap ``record`` unbatched, or None when not provably safe.

    The caller guarantees each leaf's batch axis is its first axis (so ``x[k]`` selects a row).
    """
    parsed = _parse(source)
    if parsed is None or not leaves:
        return None
    span = record.span  # byte columns, from co_positions
    application = parsed.calls.get((span.start_line, span.start_col, span.end_line, span.end_col))
    if application is None or not isinstance(application.func, ast.Call):
        return None  # e.g. ``vf = jax.vmap(f)`` applied later: no out_axes to extend here
    assign = parsed.parents.get(application)
    if not isinstance(assign, ast.Assign) or len(assign.targets) != 1 or assign.value is not application:
        return None
    axes_text = _render_axes(record, leaves)
    leaf_keys = _leaf_keys(record)
    if axes_text is None or leaf_keys is None:
        return None
    axes_edit = _out_axes_edit(parsed, application.func, axes_text)
    if axes_edit is None:
        return None
    index_tree = _index_tree(record)
    edits = [axes_edit]
    names = []
    for leaf in leaves:
        bound = _bound_name(assign.targets[0], leaf_keys[leaf], index_tree)
        if bound is None:
            return None
        name, path, subtree = bound
        uses = _row_uses(parsed, assign, name, path, subtree)
        if not uses:
            return None
        edits += [Edit(_node_span(parsed, row), node_text(source, whole)) for row, whole in uses]
        names.append(node_text(source, uses[0][1]))
    shown = ", ".join(f"`{n}`" for n in dict.fromkeys(names))
    return Fix("safe", f"Add out_axes={axes_text} and use {shown} directly", tuple(edits))


# ---------------------------------------------------------------------------------------------
# The output tree


def _index_tree(record: Any) -> Any:
    """The output's structure with each leaf replaced by its flat index."""
    import jax

    return jax.tree_util.tree_unflatten(record.out_treedef, list(range(len(record.leaf_axes))))


def _leaf_keys(record: Any) -> list[list[Key]] | None:
    """Per leaf, the subscripts reaching it from the whole output: ``[0, 'a']`` for out[0]['a']."""
    import jax

    paths, _ = jax.tree_util.tree_flatten_with_path(_index_tree(record))
    keys = []
    for path, _ in paths:
        leaf_keys: list[Key] = []
        for entry in path:
            if isinstance(entry, jax.tree_util.SequenceKey):
                leaf_keys.append(entry.idx)
            elif isinstance(entry, jax.tree_util.DictKey) and isinstance(entry.key, (int, str)):
                leaf_keys.append(entry.key)
            else:
                return None  # attributes (NamedTuples, dataclasses): not handled
        keys.append(leaf_keys)
    return keys


def _render_axes(record: Any, leaves: list[int]) -> str | None:
    """out_axes as Python source, following the output's tuple/list/dict structure."""
    import jax

    axes = list(record.leaf_axes)
    for leaf in leaves:
        axes[leaf] = None
    tree = jax.tree_util.tree_unflatten(record.out_treedef, axes)

    def render(node: Any) -> str:
        if node is None or (isinstance(node, int) and not isinstance(node, bool)):
            return repr(node)
        if type(node) is tuple:
            items = [render(n) for n in node]
            return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
        if type(node) is list:
            return "[" + ", ".join(render(n) for n in node) + "]"
        if type(node) is dict and all(isinstance(k, (int, str)) for k in node):
            return "{" + ", ".join(f"{k!r}: {render(v)}" for k, v in node.items()) + "}"
        raise TypeError(type(node))  # NamedTuples and custom nodes: no fix

    try:
        return render(tree)
    except TypeError:
        return None


# ---------------------------------------------------------------------------------------------
# The vmap call


def _out_axes_edit(parsed: _Parsed, vmap_call: ast.Call, axes_text: str) -> Edit | None:
    if any(isinstance(a, ast.Starred) for a in vmap_call.args) or any(k.arg is None for k in vmap_call.keywords):
        return None  # *args / **kwargs may carry out_axes
    for keyword in vmap_call.keywords:
        if keyword.arg == "out_axes":
            # The value's own span: any parentheses around it stay and remain balanced.
            return Edit(_node_span(parsed, keyword.value), axes_text)
    if len(vmap_call.args) >= 3:  # vmap(fun, in_axes, out_axes)
        return Edit(_node_span(parsed, vmap_call.args[2]), axes_text)
    arguments = [*vmap_call.args, *vmap_call.keywords]
    if not arguments:
        return None
    last = max(arguments, key=lambda n: (n.end_lineno, n.end_col_offset))
    end = _node_span(parsed, last)
    return Edit(Span(end.end_line, end.end_col, end.end_line, end.end_col), f", out_axes={axes_text}")


# ---------------------------------------------------------------------------------------------
# The bound name and its uses


def _bound_name(target: ast.expr, keys: list[Key], tree: Any) -> tuple[str, list[Key], Any] | None:
    """(name, keys still to apply to it, its part of the output tree) for the name the leaf lands in."""
    while isinstance(target, (ast.Tuple, ast.List)):
        if not keys or type(tree) not in (tuple, list) or len(tree) != len(target.elts) \
                or any(isinstance(e, ast.Starred) for e in target.elts):
            return None
        target, tree, keys = target.elts[keys[0]], tree[keys[0]], keys[1:]
    if isinstance(target, ast.Name):
        return target.id, keys, tree
    return None


def _row_uses(parsed: _Parsed, assign: ast.Assign, name: str, path: list[Key],
              tree: Any) -> list[tuple[ast.Subscript, ast.expr]] | None:
    """(``name...[k]``, ``name...``) for each use reaching the leaf, or None if any use is unsafe."""
    parents = parsed.parents
    block_owner = parents.get(assign)
    block = next((value for _, value in ast.iter_fields(block_owner)
                  if isinstance(value, list) and any(s is assign for s in value)), None)
    function = block_owner
    while function is not None and not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        if isinstance(function, _LOOPS + _NESTED_SCOPES):
            return None  # in a loop, earlier uses in the body see this binding too
        function = parents.get(function)
    if function is None or block is None or _bound_elsewhere(function, name):
        return None
    occurrences = sorted(_occurrences(function, name), key=lambda o: (o[0].lineno, o[0].col_offset))
    after = (assign.end_lineno, assign.end_col_offset)
    uses = []
    for node, nested in occurrences:
        if (node.lineno, node.col_offset) < after:
            continue
        if nested:
            return None  # a closure or comprehension: leave it to a human
        statement = _statement_in(block, block_owner, node, parents)
        if statement is None:
            return None  # after the assignment's block: another binding may reach it
        if not isinstance(node.ctx, ast.Load):
            return None if _conditional_rebinding(statement, node, name) else uses
        use = _classify(node, path, tree, parents)
        if use is None:
            return None
        if use is not _OTHER_PART:
            uses.append(use)
    return uses


_OTHER_PART = object()  # a use of another output reached through the same name


def _classify(name_node: ast.Name, path: list[Key], tree: Any, parents: dict) -> Any:
    """The (row subscript, its value) pair, _OTHER_PART, or None for a use that blocks the fix."""
    node: ast.expr = name_node
    for want in path:
        subscript = parents.get(node)
        if not (isinstance(subscript, ast.Subscript) and subscript.value is node
                and isinstance(subscript.ctx, ast.Load)):
            return None  # the leaf, or a container holding it, is used whole
        key = _constant_key(subscript.slice)
        if isinstance(tree, (tuple, list)) and isinstance(key, int) and -len(tree) <= key < 0:
            key += len(tree)
        if key is _NOT_CONSTANT or not _has_key(tree, key):
            return None
        if key != want:
            return _OTHER_PART
        node, tree = subscript, tree[key]
    row = parents.get(node)
    if not (isinstance(row, ast.Subscript) and row.value is node and isinstance(row.ctx, ast.Load)
            and isinstance(_constant_key(row.slice), int)):
        return None
    return row, node


def _constant_key(node: ast.expr) -> Any:
    """The int or str literal a subscript uses (``-1`` included), else _NOT_CONSTANT."""
    sign = 1
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node, sign = node.operand, -1
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return sign * node.value
    if isinstance(node, ast.Constant) and type(node.value) is str and sign == 1:
        return node.value
    return _NOT_CONSTANT


def _has_key(tree: Any, key: Any) -> bool:
    if isinstance(tree, (tuple, list)):
        return isinstance(key, int) and 0 <= key < len(tree)
    return isinstance(tree, dict) and key in tree


def _occurrences(function: ast.AST, name: str) -> list[tuple[ast.Name, bool]]:
    """Every ``Name`` node for ``name`` in the function's body, and whether it sits in a nested scope."""
    found = []
    stack = [(statement, False) for statement in function.body]
    while stack:
        node, nested = stack.pop()
        if isinstance(node, ast.Name) and node.id == name:
            found.append((node, nested))
        inner = nested or isinstance(node, _NESTED_SCOPES)
        stack.extend((child, inner) for child in ast.iter_child_nodes(node))
    return found


def _bound_elsewhere(function: ast.AST, name: str) -> bool:
    """``name`` declared global/nonlocal or bound without a Name node (import, def, except, match)."""
    for node in ast.walk(function):
        if isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            return True
        if isinstance(node, ast.alias) and (node.asname or node.name.partition(".")[0]) == name:
            return True
        if node is not function and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                and node.name == name:
            return True
        if isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and node.name == name:
            return True
        if isinstance(node, ast.MatchMapping) and node.rest == name:
            return True
    return False


def _statement_in(block: list[ast.stmt], owner: ast.AST, node: ast.AST, parents: dict) -> ast.stmt | None:
    """The statement of ``block`` containing ``node``, or None when ``node`` is outside the block."""
    while node is not None and parents.get(node) is not owner:
        node = parents.get(node)
    if node is None or not any(s is node for s in block):
        return None
    return node


def _conditional_rebinding(statement: ast.stmt, store: ast.Name, name: str) -> bool:
    """True unless ``statement`` is a plain assignment that rebinds ``name`` without reading it."""
    if isinstance(statement, ast.Assign):
        targets = statement.targets
    elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
        targets = [statement.target]
    else:
        return True  # for/with/del/augmented assignment/walrus: not a plain rebinding
    if not any(n is store for t in targets for n in ast.walk(t)):
        return True
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
               for n in ast.walk(statement))
