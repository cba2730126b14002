"""The JX101 fix: ``out_axes`` with None at the unbatched output, and ``x[0]`` -> ``x``.

Built only when the source makes it safe: the vmap application is the whole right-hand side of
an assignment to a name (or a tuple of names), and every use of that name up to its next
rebinding, in straight-line code of the same function, is a single constant index.
"""
from __future__ import annotations

from typing import Any

import libcst as cst
from libcst.metadata import ExpressionContext, ExpressionContextProvider, ParentNodeProvider, PositionProvider

from jaxlint.model import Edit, Fix, Span


def build_fix(source: str, record: Any, leaf: int) -> Fix | None:
    try:
        wrapper = cst.metadata.MetadataWrapper(cst.parse_module(source), unsafe_skip_copy=True)
        positions = wrapper.resolve(PositionProvider)
        parents = wrapper.resolve(ParentNodeProvider)
        contexts = wrapper.resolve(ExpressionContextProvider)
    except Exception:
        return None
    span_of = lambda node: _span(positions[node])  # noqa: E731
    application = next((n for n, r in positions.items()
                        if isinstance(n, cst.Call) and _span(r) == record.span), None)
    if application is None or not isinstance(application.func, cst.Call):
        return None  # e.g. a decorated function: no out_axes argument to extend here
    axes_text = _render_axes(record, leaf)
    name = _bound_name(application, parents, record, leaf)
    if axes_text is None or name is None:
        return None
    edits = [_out_axes_edit(application.func, axes_text, span_of)]
    uses = _index_uses(name, application, parents, contexts, span_of)
    if not uses:
        return None
    edits += [Edit(span_of(use), name) for use in uses]
    return Fix("safe", f"Add out_axes={axes_text} and use `{name}` directly", tuple(edits))


def _span(code_range: Any) -> Span:
    return Span(code_range.start.line, code_range.start.column, code_range.end.line, code_range.end.column)


def _render_axes(record: Any, leaf: int) -> str | None:
    """out_axes as Python source, following the output's tuple/list/dict structure."""
    import jax

    axes = list(record.leaf_axes)
    axes[leaf] = None
    tree = jax.tree_util.tree_unflatten(record.out_treedef, axes)

    def render(node: Any) -> str:
        if node is None or isinstance(node, int):
            return repr(node)
        if type(node) is tuple:
            items = [render(n) for n in node]
            return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
        if type(node) is list:
            return "[" + ", ".join(render(n) for n in node) + "]"
        if type(node) is dict:
            return "{" + ", ".join(f"{k!r}: {render(v)}" for k, v in node.items()) + "}"
        raise TypeError(type(node))  # NamedTuples and custom nodes: no fix

    try:
        return render(tree)
    except TypeError:
        return None


def _bound_name(application: cst.Call, parents: Any, record: Any, leaf: int) -> str | None:
    assign = parents.get(application)
    if not isinstance(assign, cst.Assign) or len(assign.targets) != 1 or assign.value is not application:
        return None
    target = assign.targets[0].target
    if isinstance(target, cst.Name):
        return target.value if len(record.leaf_axes) == 1 else None
    if isinstance(target, (cst.Tuple, cst.List)) and record.leaf_paths[leaf] == f"[{leaf}]" \
            and len(target.elements) == len(record.leaf_axes) \
            and all(isinstance(e, cst.Element) and isinstance(e.value, cst.Name) for e in target.elements):
        return target.elements[leaf].value.value
    return None


def _out_axes_edit(vmap_call: cst.Call, axes_text: str, span_of: Any) -> Edit:
    # Arg ranges include an argument's parentheses (a bare Tuple's range does not).
    for position, arg in enumerate(vmap_call.args):
        if arg.keyword is not None and arg.keyword.value == "out_axes":
            return Edit(span_of(arg), f"out_axes={axes_text}")
        if arg.keyword is None and arg.star == "" and position == 2:
            return Edit(span_of(arg), axes_text)
    last = span_of(vmap_call.args[-1])
    return Edit(Span(last.end_line, last.end_col, last.end_line, last.end_col), f", out_axes={axes_text}")


def _index_uses(name: str, application: cst.Call, parents: Any, contexts: Any, span_of: Any) -> list | None:
    """The ``name[k]`` subscripts using the binding, or None when any use is not one."""
    statement = parents[parents[application]]  # SimpleStatementLine holding the assignment
    function = _enclosing(statement, parents, (cst.FunctionDef, cst.Module))
    if _enclosing(statement, parents, (cst.For, cst.While, cst.FunctionDef, cst.Module)) is not function:
        return None  # inside a loop, earlier uses could see this binding too
    after = span_of(statement)
    names = sorted(
        (n for n in contexts if isinstance(n, cst.Name) and n.value == name
         and (span_of(n).start_line, span_of(n).start_col) > (after.end_line, after.end_col)
         and _inside(n, function, parents)),
        key=lambda n: (span_of(n).start_line, span_of(n).start_col))
    uses = []
    for node in names:
        if contexts[node] != ExpressionContext.LOAD:
            # A rebinding ends the uses, if it is straight-line code beside the assignment.
            if parents[_statement_of(node, parents)] is not parents[statement]:
                return None
            break
        if _enclosing(node, parents, (cst.Lambda, cst.FunctionDef, cst.ListComp, cst.SetComp,
                                      cst.DictComp, cst.GeneratorExp, cst.Module)) is not function:
            return None  # a closure or comprehension: leave it to a human
        subscript = parents.get(node)
        if not (isinstance(subscript, cst.Subscript) and subscript.value is node
                and len(subscript.slice) == 1 and isinstance(subscript.slice[0].slice, cst.Index)
                and _is_int_literal(subscript.slice[0].slice.value)):
            return None
        uses.append(subscript)
    return uses


def _is_int_literal(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        node = node.expression
    return isinstance(node, cst.Integer)


def _enclosing(node: cst.CSTNode, parents: Any, kinds: tuple) -> cst.CSTNode | None:
    node = parents.get(node)
    while node is not None and not isinstance(node, kinds):
        node = parents.get(node)
    return node


def _inside(node: cst.CSTNode, ancestor: cst.CSTNode, parents: Any) -> bool:
    while node is not None and node is not ancestor:
        node = parents.get(node)
    return node is ancestor


def _statement_of(node: cst.CSTNode, parents: Any) -> cst.CSTNode:
    while not isinstance(node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
        node = parents[node]
    return node
