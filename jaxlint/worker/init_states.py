"""A state a built instance's own init makes inside the trace (argsources/made_state.py decides
which): the init's own arguments travel as a pytree, each an input, and the call that wraps the
method makes the instance, then the state, then calls the method."""
from __future__ import annotations

import functools
from typing import Any, Callable

from jaxlint.worker.built_instances import InstanceFields


class MadeState:
    """The arguments of an init the trace calls on the built instance (a pytree of its own
    arguments, each an input); ``made`` calls it."""

    __slots__ = ("owner", "init", "shared", "own")

    def __init__(self, owner: str, init: str, shared: dict[str, str], own: dict[str, Any]) -> None:
        _register()
        self.owner, self.init, self.shared, self.own = owner, init, shared, own

    def made(self, instance: Any, arguments: dict[str, Any]) -> Any:
        own = {name: value.build() if isinstance(value, InstanceFields) else value for name, value in self.own.items()}
        return getattr(instance, self.init)(**{p: arguments[q] for p, q in self.shared.items()}, **own)

    def text(self, show: Callable[[Any], str]) -> str:
        """``LU.init(operator=..., options=options)``, with ``show`` for its own arguments."""
        parts = [f"{p}={q}" for p, q in self.shared.items()] + [f"{p}={show(v)}" for p, v in self.own.items()]
        return f"{self.owner}.{self.init}({', '.join(parts)})"


@functools.cache
def _register() -> None:
    import jax

    def flatten(state: MadeState) -> tuple[tuple, tuple]:
        return tuple(state.own.values()), (state.owner, state.init, tuple(state.shared.items()), tuple(state.own))

    def unflatten(aux: tuple, children: Any) -> MadeState:
        return MadeState(aux[0], aux[1], dict(aux[2]), dict(zip(aux[3], children)))

    jax.tree_util.register_pytree_node(MadeState, flatten, unflatten)


def then_called(callee: Any, self_name: str) -> Callable[..., Any]:
    """``callee`` called with every ``InstanceFields`` argument made first, then each state its
    init makes on the instance."""
    def call(**kwargs: Any) -> Any:
        made = {name: value.build() if isinstance(value, InstanceFields) else value for name, value in kwargs.items()}
        instance = made.pop(self_name)
        states = {name: value.made(instance, made) for name, value in made.items() if isinstance(value, MadeState)}
        return callee(instance, **{**made, **states})

    try:
        functools.update_wrapper(call, callee)  # JAX's messages name the user's function
    except (AttributeError, TypeError):
        pass
    return call
