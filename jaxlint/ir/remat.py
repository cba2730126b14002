"""A traced gradient with one differentiated loop's body checkpointed, rebuilt from its own jaxpr:
what JX306 compiles beside the program as traced (jaxlint.ir.compile).

In the jaxpr of a gradient, the forward scan of a loop returns its residuals stacked over the
iterations (extra ``ys``), and the transposed scan reads them one iteration at a time. With
``jax.checkpoint`` on the loop body the forward scan keeps only what the body received (its carry,
besides the consts and scanned inputs that exist anyway) and the transposed scan runs the forward
body again to get each iteration's residuals. The rebuilt program does exactly that with the
traced equations (each forward body evaluated twice, the same operations on the same values), so
its outputs are the program's; only where XLA keeps what differs. In the worker only: it runs
JAX."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from jax import lax

from jaxlint.ir import primitives
from jaxlint.jaxapi import jaxprs, tracebacks


@dataclass
class _Plan:
    forward: Any  # the forward scan's equation
    residuals: set[int]  # its ys (0-based among the ys) that only transposed scans read, as xs
    # Each dropped residual's variable -> (index among the forward body's ys, the forward scan's
    # consts, its carry at each iteration stacked, its scanned inputs), filled while running.
    replaced: dict[Any, tuple[int, list[Any], list[Any], list[Any]]] = field(default_factory=dict)


def checkpointed(closed: Any, body: Any) -> Callable[..., list[Any]] | None:
    """A function of ``closed``'s inputs giving its outputs, with the forward scan whose body is
    ``body`` (a ClosedJaxpr of its params) recomputed in the transposed scans that read its stacked
    residuals; None when no transposed scan of the same jaxpr reads them (calls, and scans around
    the gradient, are walked into: a training loop; a while loop around it is not)."""
    jaxpr, consts = jaxprs.open_jaxpr(closed)
    found = _find(jaxpr, body)
    if found is None:
        return None
    plan = _Plan(*found)
    return lambda *args: _run(jaxpr, consts, list(args), plan)


def _find(jaxpr: Any, body: Any) -> tuple[Any, set[int]] | None:
    """(the forward scan of ``body``, its residuals) in ``jaxpr`` or a call or scan inside it."""
    for eqn in jaxpr.eqns:
        if eqn.primitive.name == "scan" and eqn.params["jaxpr"] is body:
            residuals = _residuals(jaxpr, eqn)
            return (eqn, residuals) if residuals else None
        inner = eqn.params["jaxpr"] if eqn.primitive.name == "scan" else _call_body(eqn)
        if inner is not None:
            found = _find(jaxprs.open_jaxpr(inner)[0], body)
            if found is not None:
                return found
    return None


def _residuals(jaxpr: Any, forward: Any) -> set[int]:
    """The forward scan's ys read by transposed scans of ``jaxpr`` only, and only as scanned
    inputs (ys a forward scan reads are the user's, not residuals)."""
    carry = int(forward.params["num_carry"])
    users: dict[Any, list[tuple[Any, int]]] = {}
    for eqn in jaxpr.eqns:
        for position, atom in enumerate(eqn.invars):
            if not jaxprs.is_literal(atom):
                users.setdefault(atom, []).append((eqn, position))
    outputs = {v for v in jaxpr.outvars if not jaxprs.is_literal(v)}
    found = set()
    for index, var in enumerate(forward.outvars[carry:]):
        uses = users.get(var, [])
        if uses and var not in outputs and all(
                eqn.primitive.name == "scan" and _transposed_here(eqn)
                and position >= int(eqn.params["num_consts"]) + int(eqn.params["num_carry"])
                for eqn, position in uses):
            found.add(index)
    return found


def _transposed_here(eqn: Any) -> bool:
    """Whether the equation was made by transposing (its name stack, relative to its jaxpr, says
    ``transpose``): the forward scan of the same jaxpr was not, or the IR would not ask."""
    return any(kind == "transform" and name.startswith("transpose")
               for kind, name in tracebacks.name_stack_entries(eqn.source_info))


def _call_body(eqn: Any) -> Any | None:
    """The body of a call-like equation (a jit) walked into, as the IR inlines it; else None."""
    if eqn.primitive.name not in primitives.CALLS:
        return None
    subs = list(jaxprs.subjaxprs(eqn.params))
    if not subs or len(jaxprs.open_jaxpr(subs[0][1])[0].invars) != len(eqn.invars):
        return None
    return subs[0][1]


def _run(jaxpr: Any, consts: list[Any], args: list[Any], plan: _Plan) -> list[Any]:
    env: dict[Any, Any] = dict(zip(jaxpr.constvars, consts))
    env.update(zip(jaxpr.invars, args))

    def read(atom: Any) -> Any:
        return atom.val if jaxprs.is_literal(atom) else env.get(atom)

    for eqn in jaxpr.eqns:
        inputs = [read(v) for v in eqn.invars]
        inner = _call_body(eqn)
        if eqn is plan.forward:
            outputs = _forward(eqn, inputs, plan)
        elif any(not jaxprs.is_literal(v) and v in plan.replaced for v in eqn.invars):
            outputs = _transposed(eqn, inputs, plan)
        elif inner is not None and _holds(inner, plan):
            inner_jaxpr, inner_consts = jaxprs.open_jaxpr(inner)
            outputs = _run(inner_jaxpr, inner_consts, inputs, plan)
        elif eqn.primitive.name == "scan" and _holds(eqn.params["jaxpr"], plan):
            outputs = _outer(eqn, inputs, plan)  # a loop around the gradient: a training loop
        else:
            outputs = jaxprs.bind_equation(eqn, inputs)
        env.update(zip(eqn.outvars, outputs))
    return [read(v) for v in jaxpr.outvars]


def _holds(jaxpr: Any, plan: _Plan) -> bool:
    """Whether the forward scan of ``plan`` is in ``jaxpr``, or a call or scan inside it."""
    return _find(jaxprs.open_jaxpr(jaxpr)[0], plan.forward.params["jaxpr"]) is not None


def _outer(eqn: Any, inputs: list[Any], plan: _Plan) -> list[Any]:
    """A scan whose body holds the gradient, its body run the same way."""
    consts, init, xs = _split(eqn, inputs)
    body_jaxpr, body_consts = jaxprs.open_jaxpr(eqn.params["jaxpr"])
    n_carry = int(eqn.params["num_carry"])

    def step(carry: list[Any], x: list[Any]) -> tuple[list[Any], list[Any]]:
        out = _run(body_jaxpr, body_consts, [*consts, *carry, *x], plan)
        return out[:n_carry], out[n_carry:]

    carry, ys = _scan(eqn, step, init, xs)
    return [*carry, *ys]


def _split(eqn: Any, inputs: list[Any]) -> tuple[list[Any], list[Any], list[Any]]:
    n_consts, n_carry = int(eqn.params["num_consts"]), int(eqn.params["num_carry"])
    return inputs[:n_consts], inputs[n_consts:n_consts + n_carry], inputs[n_consts + n_carry:]


def _scan(eqn: Any, step: Callable[[Any, Any], Any], init: Any, xs: Any) -> Any:
    return lax.scan(step, init, xs, length=int(eqn.params["length"]), reverse=bool(eqn.params["reverse"]),
                    unroll=eqn.params.get("unroll", 1))


def _forward(eqn: Any, inputs: list[Any], plan: _Plan) -> list[Any]:
    """The forward scan without the dropped residuals, and with its carry at each iteration."""
    consts, init, xs = _split(eqn, inputs)
    body, n_carry = eqn.params["jaxpr"], int(eqn.params["num_carry"])

    def step(carry: list[Any], x: list[Any]) -> tuple[list[Any], tuple[list[Any], list[Any]]]:
        out = jaxprs.eval_closed(body, [*consts, *carry, *x])
        kept = [y for index, y in enumerate(out[n_carry:]) if index not in plan.residuals]
        return out[:n_carry], (kept, carry)

    carry, (kept, carries) = _scan(eqn, step, init, xs)
    kept_iter = iter(kept)
    outputs = list(carry)
    for index, var in enumerate(eqn.outvars[n_carry:]):
        if index in plan.residuals:
            plan.replaced[var] = (index, consts, carries, xs)
            outputs.append(None)  # never read: the transposed scans recompute it
        else:
            outputs.append(next(kept_iter))
    return outputs


def _transposed(eqn: Any, inputs: list[Any], plan: _Plan) -> list[Any]:
    """A transposed scan that runs the forward body again for the residuals it reads."""
    consts, init, xs = _split(eqn, inputs)
    n_carry = int(eqn.params["num_carry"])
    xs_vars = eqn.invars[len(eqn.invars) - len(xs):]
    dropped = [not jaxprs.is_literal(v) and v in plan.replaced for v in xs_vars]
    plain = [x for x, gone in zip(xs, dropped) if not gone]
    _, forward_consts, carries, forward_xs = plan.replaced[next(v for v, gone in zip(xs_vars, dropped) if gone)]
    forward_body, forward_carry = plan.forward.params["jaxpr"], int(plan.forward.params["num_carry"])

    def step(carry: list[Any], x: tuple[list[Any], list[Any], list[Any]]) -> tuple[list[Any], list[Any]]:
        plain_x, forward_carry_i, forward_x = x
        redone = jaxprs.eval_closed(forward_body, [*forward_consts, *forward_carry_i, *forward_x])
        plain_iter = iter(plain_x)
        full = [redone[forward_carry + plan.replaced[v][0]] if gone else next(plain_iter)
                for v, gone in zip(xs_vars, dropped)]
        out = jaxprs.eval_closed(eqn.params["jaxpr"], [*consts, *carry, *full])
        return out[:n_carry], out[n_carry:]

    carry, ys = _scan(eqn, step, init, (plain, carries, forward_xs))
    return [*carry, *ys]
