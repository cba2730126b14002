import jax
import jax.numpy as jnp
from jax import lax


@jax.jit
def grad_scan(W, xs):
    def loss(W):
        def body(c, x):
            A = jnp.tanh(W @ W)  # expect: JX201
            return jnp.tanh(A @ c + x), None
        return lax.scan(body, jnp.zeros(W.shape[0]), xs)[0].sum()
    return jax.grad(loss)(W)


@jax.jit
def value_and_grad(W, xs):
    def loss(W):
        def body(c, x):
            return c + (W @ W.T) @ x, None  # expect: JX201
        return lax.scan(body, jnp.zeros(W.shape[0]), xs)[0].sum()
    return jax.value_and_grad(loss)(W)


@jax.jit
def fori_grad(W, c0):
    def loss(W):
        return lax.fori_loop(0, 6, lambda i, c: jnp.sin((W @ W) @ c), c0).sum()  # expect: JX201
    return jax.grad(loss)(W)


@jax.jit
def cond_scan(W, xs):
    def body(c, x):
        c = lax.cond(x[0] > 0, lambda c: c + (W @ W)[0], lambda c: c, c)  # expect: JX201
        return c + x, None
    return lax.scan(body, jnp.zeros(W.shape[0]), xs)[0]


@jax.jit
def cond_while(W, c0, n):
    def body(i, c):
        return lax.cond(c[0] > 0, lambda c: c - (W @ W)[0], lambda c: c * 0.5, c)  # expect: JX201
    return lax.fori_loop(0, n, body, c0)


# Quiet: not differentiated, the work depends on the carry or on xs, hoisted already, too small,
# differentiated with respect to xs only, a recurrence, an invariant predicate, forward mode.


@jax.jit
def forward(W, xs):
    def body(c, x):
        A = jnp.tanh(W @ W)
        return jnp.tanh(A @ c + x), None
    return lax.scan(body, jnp.zeros(W.shape[0]), xs)[0]


@jax.jit
def carry(W, xs):
    def loss(W):
        def body(c, x):
            return jnp.tanh(W @ c + x), None
        return lax.scan(body, jnp.zeros((W.shape[0], W.shape[0])), xs)[0].sum()
    return jax.grad(loss)(W)


@jax.jit
def scanned_matrices(W, ms):
    def loss(W):
        def body(c, m):
            return c + jnp.tanh(W @ m), None
        return lax.scan(body, jnp.zeros_like(W), ms)[0].sum()
    return jax.grad(loss)(W)


@jax.jit
def hoisted(W, xs):
    def loss(W):
        A = jnp.tanh(W @ W)
        def body(c, x):
            return jnp.tanh(A @ c + x), None
        return lax.scan(body, jnp.zeros(W.shape[0]), xs)[0].sum()
    return jax.grad(loss)(W)


@jax.jit
def small(w, xs):
    def loss(w):
        def body(c, x):
            return jnp.tanh(jnp.tanh(w @ w) @ c + x), None
        return lax.scan(body, jnp.zeros(w.shape[0]), xs)[0].sum()
    return jax.grad(loss)(w)


@jax.jit
def not_differentiated(W, xs):
    def loss(xs):
        def body(c, x):
            return jnp.tanh(jnp.tanh(W @ W) @ c + x), None
        return lax.scan(body, jnp.zeros(W.shape[0]), xs)[0].sum()
    return jax.grad(loss)(xs)


@jax.jit
def recurrence(W, xs):
    def loss(W):
        def body(c, x):
            return W @ c + x, None
        return lax.scan(body, jnp.zeros((W.shape[0], W.shape[0])), xs)[0].sum()
    return jax.grad(loss)(W)


@jax.jit
def invariant_predicate(W, xs, flag):
    def body(c, x):
        c = lax.cond(flag, lambda c: c + (W @ W)[0], lambda c: c, c)
        return c + x, None
    return lax.scan(body, jnp.zeros(W.shape[0]), xs)[0]


@jax.jit
def jvp(W, xs):
    def f(W):
        def body(c, x):
            return jnp.tanh(jnp.tanh(W @ W) @ c + x), None
        return lax.scan(body, jnp.zeros(W.shape[0]), xs)[0]
    return jax.jvp(f, (W,), (W,))


W = jnp.ones((64, 64)) / 64
xs = jnp.ones((5, 64))
c0 = jnp.ones(64)
grad_scan.lower(W, xs)
value_and_grad.lower(W, xs)
fori_grad.lower(W, c0)
cond_scan.lower(W, xs)
cond_while.lower(W, c0, 3)
forward.lower(W, xs)
carry.lower(W, jnp.ones((5, 64, 64)))
scanned_matrices.lower(W, jnp.ones((5, 64, 64)))
hoisted.lower(W, xs)
small.lower(jnp.ones((8, 8)), jnp.ones((5, 8)))
not_differentiated.lower(W, xs)
recurrence.lower(W, jnp.ones((5, 64, 64)))
invariant_predicate.lower(W, xs, True)
jvp.lower(W, xs)
