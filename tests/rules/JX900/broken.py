import jax
import jax.numpy as jnp


# Python cannot import this file, nor can jaxlint analyze any of it: the finding points at the
# syntax error. tests/rules/ruff.toml keeps ruff off this file.
@jax.jit
def good(x):
    return jnp.sin(x)


def broken(x:  # expect: JX900
    return x
