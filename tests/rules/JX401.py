import jax
import jax.numpy as jnp
from jax import lax


@jax.jit
def twice(key):
    a = jax.random.normal(key, (3,))
    b = jax.random.normal(key, (3,))  # expect: JX401
    return a, b


@jax.jit
def mixed(key):
    a = jax.random.normal(key, (3,))
    return a, jax.random.uniform(key, (3,))  # expect: JX401


@jax.jit
def split_after_draw(key):
    x = jax.random.normal(key, (3,))
    k1, k2 = jax.random.split(key)  # expect: JX401
    return x, jax.random.key_data(k1)


@jax.jit
def subkey_twice(key):
    k1, k2 = jax.random.split(key)
    return jax.random.normal(k1, (3,)), jax.random.normal(k1, (3,))  # expect: JX401


@jax.jit
def row_twice(key):
    keys = jax.random.split(key, 3)
    a = jax.random.normal(keys[1], (3,))
    return a, jax.random.normal(keys[1], (3,))  # expect: JX401


@jax.jit
def scan_const(key, xs):
    def body(c, x):
        return c, x * jax.random.normal(key, ())  # expect: JX401
    return lax.scan(body, 0.0, xs)[1]


@jax.jit
def fori_const(key):
    return lax.fori_loop(0, 4, lambda i, c: c.at[i].set(jax.random.uniform(key, ())), jnp.zeros(4))  # expect: JX401


@jax.jit
def while_const(key, n):
    return lax.fori_loop(0, n, lambda i, c: c.at[i].set(jax.random.uniform(key, ())), jnp.zeros(4))  # expect: JX401


@jax.jit
def carry_unchanged(key, xs):
    def body(k, x):
        return k, x * jax.random.normal(k, ())  # expect: JX401
    return lax.scan(body, key, xs)[1]


def noise(key, x):
    return x + jax.random.normal(key, x.shape)


@jax.jit
def helper_in_loop(key):  # expect(jax<0.7): JX401 (old tracebacks: the place is unknown)
    # The Python loop passes the same key to the helper on every iteration: reported at the call.
    x = jnp.zeros(3)
    for _ in range(3):
        x = noise(key, x)  # expect(jax>=0.7): JX401
    return x


@jax.jit
def draw_in_loop(key):  # expect(jax<0.7): JX401 (old tracebacks: the place is unknown)
    x = jnp.zeros(3)
    for _ in range(3):
        x = x + jax.random.normal(key, (3,))  # expect(jax>=0.7): JX401
    return x


# Quiet: a key split, folded in, drawn once, one row each, mapped, in exclusive branches, under
# remat, per-iteration keys (scanned over, split in the carry, folded in, indexed by the counter), a
# scan of one step, a clone on purpose.


@jax.jit
def split_first(key):
    k1, k2 = jax.random.split(key)
    return jax.random.normal(k1, (3,)), jax.random.normal(k2, (3,))


@jax.jit
def fold_in(key):
    return jax.random.normal(jax.random.fold_in(key, 0), (3,)), jax.random.normal(jax.random.fold_in(key, 1), (3,))


@jax.jit
def once(key):
    return jax.random.normal(key, (3,))


@jax.jit
def rows(key):
    keys = jax.random.split(key, 3)
    return jax.random.normal(keys[0], (3,)), jax.random.normal(keys[1], (3,)), jax.random.normal(keys[2], (3,))


@jax.jit
def vmapped(key):
    return jax.vmap(lambda k: jax.random.normal(k, ()))(jax.random.split(key, 4))


@jax.jit
def cond_branches(key, p):
    return lax.cond(p, lambda k: jax.random.normal(k, ()), lambda k: jax.random.uniform(k, ()), key)


@jax.jit
def remat_grad(key, w):
    def f(w):
        return jnp.sin(w * jax.random.normal(key, (3,))).sum()
    return jax.grad(jax.checkpoint(f))(w)


@jax.jit
def scan_xs(key, xs):
    def body(c, kx):
        k, x = kx
        return c, x * jax.random.normal(k, ())
    return lax.scan(body, 0.0, (jax.random.split(key, xs.shape[0]), xs))[1]


@jax.jit
def scan_carry_split(key, xs):
    def body(k, x):
        k, sub = jax.random.split(k)
        return k, x * jax.random.normal(sub, ())
    return lax.scan(body, key, xs)[1]


@jax.jit
def fori_fold_in(key):
    return lax.fori_loop(0, 4, lambda i, c: c.at[i].set(jax.random.uniform(jax.random.fold_in(key, i), ())), jnp.zeros(4))


@jax.jit
def keys_indexed(key):
    keys = jax.random.split(key, 4)
    return lax.fori_loop(0, 4, lambda i, c: c.at[i].set(jax.random.uniform(keys[i], ())), jnp.zeros(4))


@jax.jit
def scan_length_one(key, xs):
    return lax.scan(lambda c, x: (c, x * jax.random.normal(key, ())), 0.0, xs)[1]


@jax.jit
def cloned(key):
    # The same bits again, on purpose (a key that fixes a random path evaluated twice), said with
    # clone: JAX's checker accepts it too.
    return jax.random.normal(key, (3,)), jax.random.normal(jax.random.clone(key), (3,))


# Defined after the functions: test_jx401.py replaces it with a typed key, at the same line numbers.
KEY = jax.random.PRNGKey(0)
ARGS = {"xs": jnp.ones(5), "n": 4, "p": True, "w": jnp.ones(3)}
ONE = {"xs": jnp.ones(1)}


def arguments(name, params):
    given = ONE if name == "scan_length_one" else {}
    return [KEY] + [given.get(p, ARGS[p]) for p in params[1:]]


FUNCTIONS = (twice, mixed, split_after_draw, subkey_twice, row_twice, scan_const, fori_const, while_const,
             carry_unchanged, helper_in_loop, draw_in_loop, split_first, fold_in, once, rows, vmapped,
             cond_branches, remat_grad, scan_xs, scan_carry_split, fori_fold_in, keys_indexed, scan_length_one,
             cloned)
for _f in FUNCTIONS:
    _code = _f.__wrapped__.__code__
    _f.lower(*arguments(_f.__name__, list(_code.co_varnames[:_code.co_argcount])))
