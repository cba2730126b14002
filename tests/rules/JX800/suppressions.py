import jax
import jax.numpy as jnp


def blackbox_function(x, y):
    x = x + 1
    return x, x * y


@jax.jit
def fixed_since(x, y):
    x, y = jax.vmap(blackbox_function, in_axes=(None, 0), out_axes=(None, 0))(x, y)  # noqa: JX101  # expect: JX800
    return x, y


@jax.jit
def by_name(x, y):
    return x * y  # jaxlint: ignore[vmap-unbatched-output]  # expect: JX800


# Quiet: the suppression is used, names a rule that did not run, is bare, names another tool's
# code only, sits in a branch the trace did not take.


@jax.jit
def silenced(x, y):
    x, y = jax.vmap(blackbox_function, in_axes=(None, 0))(x, y)  # noqa: JX101
    return x[0], y


@jax.jit
def not_selected(x, y):
    return x * y  # noqa: JX202


@jax.jit
def bare(x, y):
    return x * y  # noqa


@jax.jit
def other_tool(x, y):
    return x * y  # noqa: E501


def branch(x, y, flag):
    if flag:
        y = y + 1  # noqa: JX101
    return x * y


branched = jax.jit(branch, static_argnums=2)

for fn in (fixed_since, by_name, silenced, not_selected, bare, other_tool):
    fn(1.0, jnp.arange(10.0))
branched(1.0, jnp.arange(10.0), False)
