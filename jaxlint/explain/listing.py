"""Worker side: the traced program as a compact listing, each equation with the line that made it.

Call-like equations (jit, custom_jvp, ...) are inlined, as in ir.py; control flow and
``jax.checkpoint`` (remat) stay nested blocks, so a recomputation is visible where it happens.
Alongside: the computations written twice in the source (same primitive, same inputs, different
places) and what running the function op by op (without jit) materializes.
"""
from __future__ import annotations

from typing import Any

from jaxlint.ir import compat, costs, primitives

INLINED = primitives.CALLS - primitives.REMATS
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
    jaxpr, consts = compat.open_jaxpr(closed_jaxpr)
    state = Listing(path)
    env: dict[Any, tuple[str, Any]] = {}
    for index, var in enumerate(jaxpr.invars):
        env[var] = (state.names.new(), ("arg", index))
    for index, var in enumerate(jaxpr.constvars):
        env[var] = (state.names.new(), ("const", index))
    _walk(state, jaxpr, env, 0, None, False)
    return {"lines": state.lines, "source_duplicates": _source_duplicates(state),
            "remat": state.remat_blocks, "remat_recomputes": _recomputes(state)}


def _atom(env: dict, atom: Any) -> tuple[str, Any]:
    if compat.is_literal(atom):
        text = _literal(atom.val)
        return text, ("literal", text, str(atom.aval))
    return env[atom]


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


def _position(state: Listing, eqn: Any, fallback: tuple[int, int] | None) -> tuple[int, int] | None:
    return compat.user_position_in(eqn.source_info, state.path) or fallback


def _walk(state: Listing, jaxpr: Any, env: dict, depth: int, fallback: tuple[int, int] | None,
          in_remat: bool) -> None:
    for eqn in jaxpr.eqns:
        primitive = eqn.primitive.name
        position = _position(state, eqn, fallback)
        inputs = [_atom(env, v) for v in eqn.invars]
        subs = list(compat.subjaxprs(eqn.params))
        if primitive in INLINED and subs:
            inner, _ = compat.open_jaxpr(subs[0][1])
            if len(inner.invars) == len(inputs):
                inner_env = dict(zip(inner.invars, inputs))
                for var in inner.constvars:
                    inner_env[var] = (state.names.new(), ("const", id(var)))
                _walk(state, inner, inner_env, depth, position, in_remat)
                for out_var, inner_out in zip(eqn.outvars, inner.outvars):
                    env[out_var] = _atom(inner_env, inner_out)
                continue
        key = _key(primitive, eqn, inputs)
        number = state.keys.setdefault(key, len(state.keys))
        outs = []
        for index, var in enumerate(eqn.outvars):
            name = state.names.new()
            env[var] = (name, ("value", number, index))
            outs.append(f"{name}:{_type(var)}")
        text = f"{' '.join(outs) or '_'} = {primitive}{_params(eqn.params)} {' '.join(n for n, _ in inputs)}"
        line = state.add(depth=depth, text=_clip(text.rstrip()), primitive=primitive,
                         line=position[0] if position else None, column=position[1] if position else None,
                         remat=in_remat)
        if primitive == "scan":
            line["trips"] = int(eqn.params.get("length", 0)) or None
        if primitive not in primitives.DATA_MOVEMENT and not subs and position is not None:
            state.places.setdefault(number, []).append(line)
        if not subs:
            continue
        is_remat = primitive in primitives.REMATS
        first_block = len(state.lines)
        labelled = len(subs) > 1  # cond branches, while cond/body: each under a label line
        for sub_name, sub in subs:
            inner, _ = compat.open_jaxpr(sub)
            if labelled:
                state.add(depth=depth + 1, text=f"{sub_name}:", primitive="", line=None, column=None,
                          remat=in_remat or is_remat, label=True)
            inner_env = {}
            for index, var in enumerate(inner.invars):
                inner_env[var] = (state.names.new(), ("region", line["id"], sub_name, index))
            for var in inner.constvars:
                inner_env[var] = (state.names.new(), ("const", id(var)))
            if is_remat:  # the body recomputes from the remat's own inputs
                inner_env.update(zip(inner.invars, inputs))
            _walk(state, inner, inner_env, depth + 1 + labelled, position, in_remat or is_remat)
        if is_remat:
            body = [entry for entry in state.lines[first_block:] if entry.get("line") is not None
                    and not entry.get("label")]
            state.remat_blocks.append({
                "id": line["id"], "line": line["line"],
                "differentiated": bool(eqn.params.get("differentiated", False)),
                "primitives": sorted({entry["primitive"] for entry in body}),
                "lines": sorted({entry["line"] for entry in body})})


def _key(primitive: str, eqn: Any, inputs: list[tuple[str, Any]]) -> tuple:
    """Equal for two equations computing the same value: same primitive, parameters and inputs."""
    if eqn.effects or "random" in primitive or "callback" in primitive:
        return ("unique", id(eqn))  # effects: never the same computation twice
    params = tuple(sorted((k, str(v)) for k, v in eqn.params.items()
                          if not list(compat.subjaxprs({k: v}))))
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
    jaxpr, _ = compat.open_jaxpr(closed_jaxpr)
    while len(jaxpr.eqns) == 1 and jaxpr.eqns[0].primitive.name in primitives.JITS:
        jaxpr, _ = compat.open_jaxpr(next(iter(compat.subjaxprs(jaxpr.eqns[0].params)))[1])
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
