# Quiet: syntax that parses, though it looks as if it might not (soft keywords as names, a walrus
# in a comprehension, a positional-only parameter, a match statement).
import jax
import jax.numpy as jnp

match = 1
type = [match]


@jax.jit
def walrus(x, /):
    ys = [y for v in (1.0, 2.0) if (y := v * x) is not None]
    match ys:
        case [first, *_]:
            return first
        case _:
            return x


walrus(jnp.ones(3))
