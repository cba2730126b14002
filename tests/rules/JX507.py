import jax
import jax.numpy as jnp
import jax.numpy as np
import numpy as onp
from jax import lax

SEEDS = onp.arange(100_000)


@jax.jit
def scaled_positions():
    return jnp.arange(100_000) * 100_000  # expect: JX507


@jax.jit
def aliased():
    return np.arange(100_000) * 100_000  # expect: JX507 (jax.numpy imported as np)


def offsets(rows, width):
    return rows * width  # expect: JX507 (in a helper)


@jax.jit
def helper_offsets():
    return offsets(jnp.arange(50_000), 50_000)


@jax.jit
def batched():
    return jax.vmap(lambda i: i * 100_000)(jnp.arange(100_000))  # expect: JX507 (under vmap)


@jax.jit
def scanned(total):
    def body(carry, i):
        return carry, i * 100_000  # expect: JX507 (in a scan body, over xs)

    return lax.scan(body, total, jnp.arange(100_000))


@jax.jit
def fori_index(total):
    return lax.fori_loop(0, 100_000, lambda i, acc: acc + i * 100_000, total)  # expect: JX507


@jax.jit
def fori_traced_bound(total):
    # The bound is a jnp scalar: a while loop whose counter is still known to reach 99,999.
    return lax.fori_loop(0, jnp.int32(100_000), lambda i, acc: acc - i * 100_000, total)  # expect: JX507


@jax.jit
def pair_index():
    rows, cols = jnp.arange(50_000)[:, None], jnp.arange(50_000)[None, :]
    return rows * 50_000 + cols  # expect: JX507 (the product overflows; reported once)


@jax.jit
def constant_sum():
    return jnp.sum(jnp.full((100_000,), 100_000, jnp.int32))  # expect: JX507


@jax.jit
def constant_seeds():
    return jnp.asarray(SEEDS) * 100_000  # expect: JX507 (a closed-over NumPy array)


# Quiet: products and sums that fit (also exactly at 2**31 - 1), unsigned hashing, jax.random,
# values bounded only by an input, a loop bound only known at run time, a branch that may not run,
# operands that vary together (the interval product would overflow, the elementwise one does not).


@jax.jit
def fits():
    return jnp.arange(10_000) * 100_000


@jax.jit
def fits_exactly():
    return jnp.arange(2) * 2_147_483_647


@jax.jit
def sum_fits():
    return jnp.sum(jnp.full((1_000,), 1_000, jnp.int32))


@jax.jit
def unsigned_hash():
    return jnp.arange(100_000, dtype=jnp.uint32) * jnp.uint32(2_654_435_761)


@jax.jit
def random_draws(key):
    keys = jax.random.split(key)
    bits = jax.random.bits(keys[0], (100_000,))
    return bits, jax.random.randint(keys[1], (4,), -2**31 + 1, 2**31 - 1)


@jax.jit
def unknown_input(x):
    return x * 100_000


@jax.jit
def fori_unknown_bound(n, total):
    return lax.fori_loop(0, n, lambda i, acc: acc + i * 100_000, total)


@jax.jit
def maybe_branch(flag):
    return lax.cond(flag, lambda: jnp.arange(100_000) * 100_000, lambda: jnp.zeros(100_000, jnp.int32))


@jax.jit
def correlated():
    x = jnp.arange(60_000)
    return x * x[::-1]  # at most 30,000 * 29,999: fits


@jax.jit
def small_square():
    x = jnp.arange(46_341)
    return x * x  # 46,340 ** 2 = 2,147,395,600: fits


@jax.jit
def powers_of_two():
    return 2 ** jnp.arange(10)  # jnp.power squares 2 up to 2 ** 64 and keeps only the squares it needs


@jax.jit
def tree_sizes(depth):
    return 2 ** depth  # numpyro's hmc_util and blackjax's trajectory: a traced int exponent


scaled_positions()
aliased()
helper_offsets()
batched()
scanned(0)
fori_index(0)
fori_traced_bound(0)
pair_index()
constant_sum()
constant_seeds()
fits()
fits_exactly()
sum_fits()
unsigned_hash()
random_draws(jax.random.key(0))
unknown_input(jnp.arange(4))
fori_unknown_bound(5, 0)
maybe_branch(False)
correlated()
small_square()
powers_of_two()
tree_sizes(jnp.int32(10))
