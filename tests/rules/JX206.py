import jax
import jax.numpy as jnp

rows = jnp.ones((3, 4))


# Each near miss has a jitted function of its own: the module's first call decides the traced
# signature (a cast start would make `step` strongly typed for every loop below).
@jax.jit
def step(total, x):
    return total * 0.9 + jnp.sum(x)


total = 0.0
for x in rows:
    total = step(total, x)  # expect: JX206


@jax.jit
def train_step(params, opt_state, batch):
    return params - 0.1 * jnp.sum(batch), opt_state + jnp.int32(1)


params, opt_state = 1.0, 0
for batch in rows:
    params, opt_state = train_step(params, opt_state, batch)  # expect: JX206


@jax.jit
def carry_step(state, x):
    value, last = state
    return value + jnp.sum(x), x


state = (0.0, rows[0])
for x in rows:
    state = carry_step(state, x)  # expect: JX206


@jax.jit
def epoch_step(loss, x):
    return loss + jnp.mean(x)


for epoch in range(2):
    loss = 0.0  # reset each epoch: weak again, but jit's cache holds both entries after the first
    for x in rows:
        loss = epoch_step(loss, x)  # expect: JX206


@jax.jit
def count_step(count, x):
    return count + jnp.sum(x)  # an int start becomes f32: compiled again (measured), no fix proven


count = 0
i = 0
while i < 2:
    count = count_step(count, rows[i])  # expect: JX206
    i += 1


@jax.jit
def accumulate(total, x):
    return total + jnp.sum(x)


def run(xs):
    total = -1.0
    for x in xs:
        total = accumulate(total, x=x)  # expect: JX206
    return total


run(rows)

# Quiet: the cast twin, strongly typed from the start.


@jax.jit
def cast_step(total, x):
    return total * 0.9 + jnp.sum(x)


total = jnp.float32(0.0)
for x in rows:
    total = cast_step(total, x)


# Quiet: the output stays weakly typed (a weak input times a Python float, or returned unchanged):
# one compile.
@jax.jit
def halve(total):
    return total * 0.5


@jax.jit
def unchanged(total, x):
    return total


@jax.jit
def increment(n):
    return n + 1


half, same, n = 1.0, 2.0, 0
for x in rows:
    half = halve(half)
    same = unchanged(same, x)
    n = increment(n)


# Quiet: the output goes to another name, the call is outside a loop, the start is not a literal.
@jax.jit
def other_step(total, x):
    return total + jnp.sum(x)


start = 0.0
for x in rows:
    result = other_step(start, x)
once = 0.0
once = other_step(once, rows[0])
computed = jnp.sum(rows) * 0.0
for x in rows:
    computed = other_step(computed, x)


# Quiet: not jitted (each call runs eagerly, op by op: nothing is compiled per call).
def plain_step(total, x):
    return total + jnp.sum(x)


plain = 0.0
for x in rows:
    plain = plain_step(plain, x)


# Quiet: the loop runs while a jitted function is traced: the inner jit is inlined, compiled once.
@jax.jit
def inner(total, x):
    return total + jnp.sum(x)


@jax.jit
def outer(xs):
    total = 0.0
    for k in range(3):
        total = inner(total, xs[k])
    return total


outer(rows)
