import jax
import jax.numpy as jnp


@jax.jit
def unrolled(x):
    for _ in range(300):
        x = x * 2.0 + 1.0  # expect: JX202
    return x


@jax.jit
def comprehension(key):
    return jnp.stack([jax.random.normal(jax.random.fold_in(key, i), (3,)) for i in range(30)])  # expect: JX202


def step(x):
    return jnp.sin(x) * 2.0  # expect: JX202


@jax.jit
def helper_in_loop(x):
    for _ in range(150):
        x = step(x)
    return x


@jax.jit
def grad_of_loop(x):
    def loss(x):
        for _ in range(100):
            x = jnp.tanh(x)  # expect: JX202
        return x.sum()
    return jax.grad(loss)(x)


@jax.jit
def loop_in_scan_body(xs):
    def body(c, x):
        for _ in range(200):
            c = c + x  # expect: JX202
        return c, None
    return jax.lax.scan(body, 0.0, xs)[0]


def smooth(x):
    return jnp.tanh(jnp.sin(x) * 2.0 + 1.0) - 0.5  # expect: JX202


@jax.jit
def helper_in_short_loop(x):
    # 50 iterations of a 5-equation helper: 250 equations from one call site.
    for _ in range(50):
        x = smooth(x)
    return x


def project(x):
    return jax.nn.softmax(jnp.tanh(jnp.cos(x) * 2.0 + 1.0)) * jnp.sqrt(jnp.sum(x * x)) - jnp.log1p(jnp.abs(x))


# Quiet: the same helper called from 12 different lines, 12 blocks of equations at its line (as a
# solver calls a projection from its init, first step, line search and loop body): 12 calls, no
# loop to roll.
@jax.jit
def helper_from_many_lines(x):
    a = project(x)
    b = project(a + 1.0)
    c = project(b * 2.0)
    d = project(c - 1.0)
    e = project(d / 2.0)
    f = project(e + 3.0)
    g = project(f * 3.0)
    h = project(g - 2.0)
    i = project(h + a)
    j = project(i * b)
    k = project(j - c)
    return project(k / 3.0)


@jax.custom_jvp
def simplex(x):
    return jax.nn.relu(jnp.tanh(jnp.sort(x) * 2.0) - jnp.cumsum(x) / 3.0) * jnp.max(x) + jnp.sin(x) * jnp.cos(x) ** 3


@simplex.defjvp
def simplex_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return simplex(x), t


# Quiet: a vmapped custom_jvp function called from 14 lines: JAX traces its body once and reuses
# it, so its equations' tracebacks have no caller; the calls' own equations tell them apart.
@jax.jit
def custom_jvp_from_many_lines(m):
    a = jax.vmap(simplex)(m)
    b = jax.vmap(simplex)(a + 1.0)
    c = jax.vmap(simplex)(b * 2.0)
    d = jax.vmap(simplex)(c - 1.0)
    e = jax.vmap(simplex)(d / 2.0)
    f = jax.vmap(simplex)(e + 3.0)
    g = jax.vmap(simplex)(f * 3.0)
    h = jax.vmap(simplex)(g - 2.0)
    i = jax.vmap(simplex)(h + a)
    j = jax.vmap(simplex)(i * b)
    k = jax.vmap(simplex)(j - c)
    p = jax.vmap(simplex)(k + d)
    n = jax.vmap(simplex)(p * e)
    return jax.vmap(simplex)(n / 3.0)


# Quiet: too few repeats, a rolled loop, big library calls, blocks of growing shapes.


@jax.jit
def short_loop(x):
    for _ in range(3):
        x = x * 2.0 + 1.0
    return x


@jax.jit
def rolled(x):
    return jax.lax.fori_loop(0, 1000, lambda _, x: x * 2.0 + 1.0, x)


@jax.jit
def one_big_library_call(m):
    return jax.grad(lambda m: jax.scipy.linalg.expm(m).sum())(m)


@jax.jit
def few_big_iterations(m):
    for _ in range(3):
        m = jax.scipy.linalg.expm(m) / 8.0
    return m


@jax.jit
def growing_blocks(key):
    # Each iteration draws a larger block (numpyro's block-autoregressive init): no one shape
    # for a fori_loop body, so quiet.
    w = jnp.zeros((60, 20))
    keys = jax.random.split(key, 30)
    for i in range(20):
        w = w.at[: (i + 1) * 3, i].set(jax.random.normal(keys[i], ((i + 1) * 3,)))
    return w


# Lowered, not run: nothing is compiled at import.
x = jnp.ones(3)
xs = jnp.ones(10, jnp.float32)
m = jnp.eye(4)
for fn, arg in [(unrolled, x), (comprehension, jax.random.PRNGKey(0)), (helper_in_loop, x), (grad_of_loop, x),
                (loop_in_scan_body, xs), (short_loop, x), (rolled, x), (one_big_library_call, m),
                (few_big_iterations, m), (growing_blocks, jax.random.PRNGKey(0)),
                (helper_in_short_loop, x), (helper_from_many_lines, x), (custom_jvp_from_many_lines, m)]:
    fn.lower(arg)
