import jax
import jax.numpy as jnp
from jax import lax
from jax.scipy.optimize import minimize


def heavy(x):
    return jnp.tanh(x @ x)


def count(n, x):
    return lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, heavy(c[1])), (0, x))[1]  # expect: JX103


@jax.jit
def batched_while(ns, xs):
    return jax.vmap(count)(ns, xs)


@jax.jit
def batched_fori(ns, xs):
    return jax.vmap(lambda n, x: lax.fori_loop(0, n, lambda i, x: heavy(x), x))(ns, xs)  # expect: JX103


# Quiet: an unbatched trip count, static bounds, a batch of one, a library's while loop.


@jax.jit
def unbatched_while(n, xs):
    return jax.vmap(count, in_axes=(None, 0))(n, xs)


@jax.jit
def static_fori(xs):
    return jax.vmap(lambda x: lax.fori_loop(0, 3, lambda i, x: heavy(x), x))(xs)


@jax.jit
def one_element_while(ns, xs):  # a batch of one element: nothing waits
    return jax.vmap(lambda n, x: lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, heavy(c[1])), (0, x))[1])(
        ns[:1], xs[:1])


@jax.jit
def library_while(x0s):
    return jax.vmap(lambda x0: minimize(lambda x: jnp.sum((x - 1.0) ** 2), x0, method="BFGS").x)(x0s)


xs, ns = jnp.ones((8, 4, 4)), jnp.arange(8)
count(3, xs[0])
batched_while(ns, xs), batched_fori(ns, xs)
unbatched_while(3, xs), static_fori(xs), one_element_while(ns, xs), library_while(jnp.ones((4, 3)))
