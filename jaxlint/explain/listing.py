"""Worker side: the traced program as a compact listing, each equation with the line that made it.

Call-like equations (jit, custom_jvp, ...) are inlined by the IR builder's walk
(jaxlint.ir.build.JaxprWalker); control flow and ``jax.checkpoint`` (remat) stay nested blocks,
so a recomputation is visible where it happens.
Alongside: the computations written twice in the source (same primitive, same inputs, different
places) and what running the function op by op (without jit) materializes.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from jaxlint.ir import costs, primitives
from jaxlint.ir.build import JaxprWalker
from jaxlint.jaxapi import jaxprs, tracebacks

_TEXT_LIMIT = 160


class _Names:
    """a, b, ..., z, ba, bb, ...: the jaxpr printer's naming, one name per variable."""

    def __init__(self) -> None:
        self.count = 0

    def new(self) -> str:
        number, name = self.count, ""
        self.count += 1
        while True:
            name = chr(ord("a") + number % 26) + name
            number //= 26
            if number == 0:
                return name


class Listing:
    def __init__(self, path: str) -> None:
        self.path = path
        self.lines: list[dict[str, Any]] = []
        self.names = _Names()
        self.keys: dict[tuple, int] = {}  # value numbering: an equation's key -> its number
        self.places: dict[int, list[dict[str, Any]]] = {}  # value number -> lines computing it
        self.remat_blocks: list[dict[str, Any]] = []

    def add(self, **line: Any) -> dict[str, Any]:
        line["id"] = f"e{len(self.lines)}"
        self.lines.append(line)
        return line


def listing(closed_jaxpr: Any, path: str) -> dict[str, Any]:
    """``{"lines": [...], "source_duplicates": [...], "remat": [...]}`` for the target in ``path``."""
    jaxpr, consts = jaxprs.open_jaxpr(closed_jaxpr)
    state = Listing(path)
    env: dict[Any, tuple[str, Any]] = {}
    for index, var in enumerate(jaxpr.invars):
        env[var] = (state.names.new(), ("arg", index))
    for index, var in enumerate(jaxpr.constvars):
        env[var] = (state.names.new(), ("const", index))
    _Lister(state).walk(jaxpr, env, _Block(0, None, False))
    return {"lines": state.lines, "source_duplicates": _source_duplicates(state),
            "remat": state.remat_blocks, "remat_recomputes": _recomputes(state)}


def _literal(value: Any) -> str:
    """``1``, ``2.5``, ``True``: NumPy scalars and JAX's typed literals by their value."""
    try:
        item = value.item() if hasattr(value, "item") else value
    except Exception:  # an array literal, or a value that refuses
        item = value
    for kind in (bool, int, float, complex):  # JAX 0.7+ wraps them (TypedInt, TypedFloat)
        if isinstance(item, kind):
            item = kind(item)
            break
    text = str(item)
    return text if len(text) <= 24 else text[:21] + "..."


def _type(var: Any) -> str:
    aval = var.aval
    try:
        return aval.str_short(short_dtypes=True)
    except Exception:  # an abstract value without the short form (tokens, keys)
        return str(aval)


def _params(params: dict[str, Any]) -> str:
    shown = []
    for key, value in params.items():
        if value is None or key in ("jaxpr", "branches", "cond_jaxpr", "body_jaxpr", "call_jaxpr",
                                    "fun_jaxpr", "jvp_jaxpr_fun", "jvp_jaxpr_thunk", "fwd_jaxpr_thunk",
                                    "bwd", "out_trees", "num_consts", "linear", "unroll", "name",
                                    "sharding", "out_sharding", "accuracy", "debug_info", "symbolic_zeros",
                                    "preferred_element_type", "precision"):
            continue
        text = str(value)
        if len(text) <= 40 and "\n" not in text:
            shown.append(f"{key}={text}")
    return f"[{' '.join(shown)}]" if shown else ""


@dataclass(frozen=True)
class _Block:
    depth: int
    fallback: tuple[int, int] | None  # the enclosing equation's position
    in_remat: bool


@dataclass
class _Line:
    line: dict[str, Any]
    inputs: list[tuple[str, Any]]
    labelled: bool  # cond branches, while cond/body: each under a label line
    is_remat: bool
    first_block: int  # the index of the first line of its nested blocks


class _Lister(JaxprWalker[tuple[str, Any], _Block, tuple[int, int] | None]):
    """Names each value, numbers each computation, and lists the equations with their lines."""

    inlined = primitives.CALLS - primitives.REMATS

    def __init__(self, state: Listing) -> None:
        self.state = state

    def place(self, eqn: Any, ctx: _Block) -> tuple[int, int] | None:
        return tracebacks.user_position_in(eqn.source_info, self.state.path) or ctx.fallback

    def literal(self, atom: Any) -> tuple[str, Any]:
        text = _literal(atom.val)
        return text, ("literal", text, str(atom.aval))

    def constant(self, var: Any, value: Any = None) -> tuple[str, Any]:
        return self.state.names.new(), ("const", id(var))

    def inline_context(self, eqn: Any, inner: Any, here: tuple[int, int] | None, ctx: _Block) -> _Block:
        return _Block(ctx.depth, here, ctx.in_remat)

    def equation(self, eqn: Any, inputs: list[tuple[str, Any]], position: tuple[int, int] | None,
                 ctx: _Block) -> tuple[list[tuple[str, Any]], _Line]:
        state, primitive = self.state, eqn.primitive.name
        subs = list(jaxprs.subjaxprs(eqn.params))
        key = _key(primitive, eqn, inputs)
        number = state.keys.setdefault(key, len(state.keys))
        outputs, outs = [], []
        for index, var in enumerate(eqn.outvars):
            name = state.names.new()
            outputs.append((name, ("value", number, index)))
            outs.append(f"{name}:{_type(var)}")
        text = f"{' '.join(outs) or '_'} = {primitive}{_params(eqn.params)} {' '.join(n for n, _ in inputs)}"
        line = state.add(depth=ctx.depth, text=_clip(text.rstrip()), primitive=primitive,
                         line=position[0] if position else None, column=position[1] if position else None,
                         remat=ctx.in_remat)
        if primitive == "scan":
            line["trips"] = int(eqn.params.get("length", 0)) or None
        if primitive not in primitives.DATA_MOVEMENT and not subs and position is not None:
            state.places.setdefault(number, []).append(line)
        return outputs, _Line(line, inputs, len(subs) > 1, bool(subs) and primitive in primitives.REMATS,
                              len(state.lines))

    def enter_region(self, node: _Line, eqn: Any, name: str, jaxpr: Any, inputs: list[tuple[str, Any]],
                     position: tuple[int, int] | None, ctx: _Block) -> tuple[list[tuple[str, Any]], _Block]:
        state, in_remat = self.state, ctx.in_remat or node.is_remat
        if node.labelled:
            state.add(depth=ctx.depth + 1, text=f"{name}:", primitive="", line=None, column=None,
                      remat=in_remat, label=True)
        invars = [(state.names.new(), ("region", node.line["id"], name, index))
                  for index in range(len(jaxpr.invars))]
        if node.is_remat:  # the body recomputes from the remat's own inputs
            invars = list(inputs[:len(invars)]) + invars[len(inputs):]
        return invars, _Block(ctx.depth + 1 + node.labelled, position, in_remat)

    def done(self, node: _Line, eqn: Any, ctx: _Block) -> None:
        if not node.is_remat:
            return
        body = [entry for entry in self.state.lines[node.first_block:] if entry.get("line") is not None
                and not entry.get("label")]
        self.state.remat_blocks.append({
            "id": node.line["id"], "line": node.line["line"],
            "differentiated": bool(eqn.params.get("differentiated", False)),
            "primitives": sorted({entry["primitive"] for entry in body}),
            "lines": sorted({entry["line"] for entry in body})})


def _key(primitive: str, eqn: Any, inputs: list[tuple[str, Any]]) -> tuple:
    """Equal for two equations computing the same value: same primitive, parameters and inputs."""
    if eqn.effects or "random" in primitive or "callback" in primitive:
        return ("unique", id(eqn))  # effects: never the same computation twice
    params = tuple(sorted((k, str(v)) for k, v in eqn.params.items()
                          if not list(jaxprs.subjaxprs({k: v}))))
    return (primitive, params, tuple(number for _, number in inputs))


def _clip(text: str) -> str:
    return text if len(text) <= _TEXT_LIMIT else text[:_TEXT_LIMIT - 3] + "..."


def _source_duplicates(state: Listing) -> list[dict[str, Any]]:
    """Computations the user wrote twice: one value computed by equations at different places.

    A remat's recomputation or a transform's copy comes from the same place: not counted."""
    found = []
    for lines in state.places.values():
        places = {(entry["line"], entry["column"]) for entry in lines}
        if len(places) < 2:
            continue
        first_output = lines[0]["text"].split(" = ", 1)[0].split(" ")[0]
        found.append({"primitive": lines[0]["primitive"], "ids": [entry["id"] for entry in lines],
                      "lines": sorted({entry["line"] for entry in lines}), "text": lines[0]["text"],
                      "type": first_output.partition(":")[2]})
    return found


def _recomputes(state: Listing) -> list[dict[str, Any]]:
    """Equations a remat body computes again: the same value is also computed outside it."""
    found = []
    for lines in state.places.values():
        inside = [entry for entry in lines if entry["remat"]]
        if inside and len(inside) < len(lines):
            found.append({"primitive": lines[0]["primitive"], "line": inside[0]["line"],
                          "ids": [entry["id"] for entry in lines]})
    return found


def eager(closed_jaxpr: Any) -> dict[str, Any]:
    """What running the function op by op (no jax.jit around it) materializes: each top-level
    equation is one dispatch that writes its outputs to memory (a library jit, a loop or a
    ``checkpoint`` counts as one op); within jit, XLA fuses them and most are never written."""
    jaxpr, _ = jaxprs.open_jaxpr(closed_jaxpr)
    while len(jaxpr.eqns) == 1 and jaxpr.eqns[0].primitive.name in primitives.JITS:
        jaxpr, _ = jaxprs.open_jaxpr(next(iter(jaxprs.subjaxprs(jaxpr.eqns[0].params)))[1])
    ops, written, unknown = 0, 0, False
    largest: tuple[int, str] = (0, "")
    detail = []
    for eqn in jaxpr.eqns:
        ops += 1
        detail.append(f"{eqn.primitive.name} -> {' '.join(_type(v) for v in eqn.outvars)}")
        for var in eqn.outvars:
            size = costs.nbytes(var.aval)
            if size is None:
                unknown = True
                continue
            written += size
            if size > largest[0]:
                largest = (size, f"{eqn.primitive.name} -> {_type(var)}")
    return {"ops": ops, "materialized_bytes": None if unknown else written,
            "largest": largest[1] or None, "largest_bytes": largest[0] or None, "op_list": detail[:200]}
