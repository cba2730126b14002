import jax
import jax.numpy as jnp


class FakeAt:
    """A non-JAX object with an ``.at[...].set`` API that mutates in place."""

    def __init__(self):
        self.data = {}
        self.at = self

    def __getitem__(self, key):
        self.key = key
        return self

    def set(self, value):
        self.data[self.key] = value


@jax.jit
def discarded(x, i):
    x.at[i].set(0.0)  # expect: JX504
    x.at[0].add(1.0)  # expect: JX504
    x.at[1:3].multiply(2.0)  # expect: JX504
    x.at[i].divide(2.0)  # expect: JX504
    x.at[i].max(0.5)  # expect: JX504
    return x * 2


def eager_discarded(x):
    x.at[0].set(5.0)  # expect: JX504
    return jax.vmap(jnp.sin)(x)


@jax.jit
def discarded_in_scan(xs):
    def body(c, x):
        c.at[0].add(x.sum())  # expect: JX504
        return c, x
    return jax.lax.scan(body, jnp.zeros(3), xs)


@jax.jit
def discarded_under_vmap(xs):
    def row(x):
        x.at[0].set(1.0)  # expect: JX504
        return x + 1
    return jax.vmap(row)(xs)


@jax.jit
def discarded_under_grad(x):
    def loss(x):
        x.at[0].mul(2.0)  # expect: JX504
        return (x ** 2).sum()
    return jax.grad(loss)(x)


# Quiet: the update is kept (assigned, returned, chained), or `.at` is not JAX's.


@jax.jit
def assigned(x, i):
    x = x.at[i].set(0.0)
    y = x.at[0].add(1.0)
    return x.at[1].get() + y


@jax.jit
def returned(x):
    return x.at[0].set(3.0)


@jax.jit
def not_jax_at(x):
    fake = FakeAt()
    fake.at[0].set(x)
    return x + 1


@jax.jit
def chained(x):
    x = x.at[0].set(1.0).at[1].set(2.0)
    return x


# Lowered, not run: nothing is compiled at import.
x = jnp.ones(5)
xs = jnp.ones((4, 3))
discarded.lower(x, 1)
eager_discarded(x)
discarded_in_scan.lower(xs)
discarded_under_vmap.lower(xs)
discarded_under_grad.lower(x)
assigned.lower(x, 1)
returned.lower(x)
not_jax_at.lower(x)
chained.lower(x)
