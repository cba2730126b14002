import jax
import jax.numpy as jnp
from jax.numpy import maximum as floor_at
from jax.scipy.special import logsumexp, xlogy


@jax.jit
def log_gt(x):
    return jnp.where(x > 0, jnp.log(x), 0.0)  # expect: JX501


@jax.jit
def swapped_compare(x):
    return jnp.where(0 < x, jnp.log(x), 0.0)  # expect: JX501


@jax.jit
def div_ne(x):
    return jnp.where(x != 0, 1.0 / x, 0.0)  # expect: JX501


@jax.jit
def sqrt_false_branch(x):
    return jnp.where(x < 0, 0.0, jnp.sqrt(x))  # expect: JX501


@jax.jit
def arcsin_abs(x):
    return jnp.where(jnp.abs(x) < 1, jnp.arcsin(x), 0.0)  # expect: JX501


@jax.jit
def arccos_lt(x):
    return jnp.where(x < 1, jnp.arccos(x), 0.0)  # expect: JX501


@jax.jit
def arctanh_lt(x):
    return jnp.where(x < 1, jnp.arctanh(x), 0.0)  # expect: JX501


@jax.jit
def log1p_gt(x):
    return jnp.where(x > -1, jnp.log1p(x), 0.0)  # expect: JX501


@jax.jit
def rsqrt_and(x):
    return jnp.where((x > 0) & (x < 5), jax.lax.rsqrt(x) + 1.0, 0.0)  # expect: JX501


@jax.jit
def pow_half(x):
    return jnp.where(x > 0, x ** 0.5, 0.0)  # expect: JX501


@jax.jit
def power_call(x):
    return jnp.where(x > 0, jnp.power(x, 0.5), 0.0)  # expect: JX501


@jax.jit
def inverse(x):
    return jnp.where(x != 0, x ** -1, 0.0)  # expect: JX501


@jax.jit
def reciprocal(x):
    return jnp.where(x != 0, jnp.reciprocal(x), 0.0)  # expect: JX501


@jax.jit
def cbrt_ne(x):
    return jnp.where(x != 0, jnp.cbrt(x), 0.0)  # expect: JX501


@jax.jit
def chained(x):
    return jnp.where(x > 0, 2.0 * jnp.log(x) + 1.0, 0.0)  # expect: JX501


@jax.jit
def two_unsafe(x):
    return jnp.where(x > 0,  # expect: JX501
                     jnp.log(x) + jnp.sqrt(x),
                     0.0)


def vmapped(x):
    return jax.vmap(lambda v: jnp.where(v > 0, jnp.log(v), 0.0))(x)  # expect: JX501


@jax.jit
def in_scan(x):
    def body(carry, v):
        return carry + jnp.where(v > 0, jnp.sqrt(v), 0.0), None  # expect: JX501
    return jax.lax.scan(body, 0.0, x)[0]


def total(v):
    return jnp.where(v > 0, jnp.log(v), 0.0).sum()  # expect: JX501


@jax.jit
def grad_inside(x):
    return jax.grad(total)(x)



# Quiet: the double where already, library functions, another variable tested, a threshold that
# leaves the singular point in, a safe power, stop_gradient, a shifted or constant or integer input, a
# safe op.


@jax.jit
def double_where(x):
    return jnp.where(x > 0, jnp.log(jnp.where(x > 0, x, 1.0)), 0.0)


@jax.jit
def double_where_false_branch(x):
    return jnp.where(x < 0, 0.0, jnp.sqrt(jnp.where(x < 0, 1.0, x)))


@jax.jit
def library(x, y):
    return (jnp.sinc(x) + jax.nn.softplus(x) + xlogy(x, y) + logsumexp(x) + jnp.linalg.norm(x)
            + jax.nn.relu(x) + jax.nn.log_sigmoid(x))


@jax.jit
def library_in_where(x, y):
    return jnp.where(x > 0, jnp.sinc(x) + xlogy(x, y) + jax.nn.softplus(x), 0.0)


@jax.jit
def other_variable(x, y):
    return jnp.where(y > 0, jnp.log(x), 0.0)


@jax.jit
def log_threshold_below_zero(x):
    return jnp.where(x > -1, jnp.log(x), 0.0)


@jax.jit
def arctanh_outside(x):
    return jnp.where(x > 1, 0.0, jnp.arctanh(x))


@jax.jit
def safe_power(x):
    return jnp.where(x > 0, x ** 2.0, 0.0) + jnp.where(x > 0, x ** 2, 0.0)


@jax.jit
def stopped(x):
    return jnp.where(x > 0, jnp.log(jax.lax.stop_gradient(x)), 0.0)


@jax.jit
def shifted_input(x):
    return jnp.where(x > 0, jnp.log(x + 1.0), 0.0)  # expect: JX703 (log1p by hand; not JX501's)


@jax.jit
def constant_input(x):
    c = jnp.linspace(-1.0, 1.0, 3)
    return jnp.where(c > 0, jnp.log(c), 0.0) * x


@jax.jit
def integer_input(n):
    return jnp.where(n > 0, jnp.log(n), 0.0)


@jax.jit
def safe_op(x):
    return jnp.where(x > 0, jnp.exp(x) * jnp.sin(x), 0.0)


def log_of(v):
    return jnp.log(v)


# Named forms: the jaxpr is the inline form's, and so is the finding (at the where call). The
# predicate named (mask = x > 0), the unsafe op named before the where, both, the log in a helper of
# the file, a library function holding the log: the fix is offered only where the op is spelled in
# the where's own branch (there the predicate's text means what it means in the where).


@jax.jit
def named_mask(x):
    positive = x > 0
    return jnp.where(positive, jnp.log(x), 0.0)  # expect: JX501


@jax.jit
def named_op(x):
    y = jnp.log(x)
    return jnp.where(x > 0, y, 0.0)  # expect: JX501


@jax.jit
def named_both(x):
    inside = (x > 0) & (x < 5)
    root = jnp.sqrt(x)
    out = jnp.where(inside, root + 1.0, 0.0)  # expect: JX501
    return out


@jax.jit
def named_false_branch(x):
    negative = x < 0
    return jnp.where(negative, 0.0, jnp.sqrt(x))  # expect: JX501


@jax.jit
def through_helper(x):
    return jnp.where(x > 0, log_of(x), 0.0)  # expect: JX501


@jax.jit
def library_log10(x):
    return jnp.where(x > 0, jnp.log10(x), 0.0)  # expect: JX501


@jax.jit
def lax_select(x):
    return jax.lax.select(x > 0, jnp.log(x), jnp.zeros_like(x))  # expect: JX501


@jax.jit
def named_clip(p):
    y = jnp.log(p)
    return jnp.clip(y, -100.0)  # expect: JX501


@jax.jit
def clip_library_log10(p):
    # Before JAX 0.7 log10 divides by a traced log(10.0), not a constant: the value clamped at p = 0
    # is not known, and the clamp is quiet.
    return jnp.clip(jnp.log10(p), -100.0)  # expect(jax>=0.7): JX501


@jax.jit
def clip_library_xlogy(p):
    # xlogy's gradient is its own rule (custom_jvp): quiet.
    return jnp.clip(xlogy(p, p), -100.0)


# Named near misses: another variable tested, a named mask that keeps x = 0, a named double where.


@jax.jit
def named_other_variable(x, y):
    positive = y > 0
    return jnp.where(positive, jnp.log(x), 0.0)


@jax.jit
def named_mask_keeps_zero(x):
    keep = x > -1
    return jnp.where(keep, jnp.log(x), 0.0)


@jax.jit
def named_double_where(x):
    positive = x > 0
    safe = jnp.where(positive, x, 1.0)
    return jnp.where(positive, jnp.log(safe), 0.0)


# A division by a sum over the entries the same where keeps: where it keeps none, the sum is 0, the
# where discards the quotient and its gradient is NaN. Named or inline, a where-sum or a count.


@jax.jit
def masked_sum(p, q, n):
    s = jnp.sum(jnp.where(n > 0, p, 0.0))
    return jnp.where(n > 0, p * q / s, 0.0)  # expect: JX501


@jax.jit
def masked_sum_inline(p, n):
    return jnp.where(n > 0, p / jnp.sum(jnp.where(n > 0, p, 0.0)), 0.0)  # expect: JX501


@jax.jit
def masked_count(p, n):
    mask = n > 0
    return jnp.where(mask, p / jnp.sum(mask), 0.0)  # expect: JX501


# Quiet: the sum guarded, a sum over another mask, a filler that is not 0, the sum over the
# entries the where discards (all of p where it keeps none: not 0), a count clamped to 1.


@jax.jit
def masked_sum_guarded(p, q, n):
    s = jnp.sum(jnp.where(n > 0, p, 0.0))
    return jnp.where(n > 0, p * q / jnp.where(s == 0, 1.0, s), 0.0)


@jax.jit
def masked_sum_other_mask(p, m, n):
    s = jnp.sum(jnp.where(m > 0, p, 0.0))
    return jnp.where(n > 0, p / s, 0.0)


@jax.jit
def masked_sum_filler_one(p, n):
    s = jnp.sum(jnp.where(n > 0, p, 1.0))
    return jnp.where(n > 0, p / s, 0.0)


@jax.jit
def masked_sum_of_discarded(p, n):
    s = jnp.sum(jnp.where(n > 0, 0.0, p))
    return jnp.where(n > 0, p / s, 0.0)


@jax.jit
def masked_count_clamped(p, n):
    mask = n > 0
    return jnp.where(mask, p / jnp.maximum(jnp.sum(mask), 1), 0.0)


# The guard joined with another boolean: and-ed, the where still discards x = 0 whatever the other
# boolean is (inline, logical_and, the other first, named); or-ed, it discards x = 0 only under the
# negated test (the log in the third argument). The sum over the mask as a product with it.


@jax.jit
def and_valid(x, valid):
    return jnp.where((x > 0) & valid, jnp.log(x), 0.0)  # expect: JX501


@jax.jit
def logical_and_valid(x, valid):
    return jnp.where(jnp.logical_and(valid, x > 0), jnp.sqrt(x), 0.0)  # expect: JX501


@jax.jit
def named_and_valid(x, valid):
    positive = x > 0
    keep = valid & positive
    return jnp.where(keep, 1.0 / x, 0.0)  # expect: JX501


@jax.jit
def or_other_false_branch(x, other):
    return jnp.where((x <= 0) | other, 0.0, jnp.log(x))  # expect: JX501


@jax.jit
def masked_product_sum(p, q, n):
    mask = (n > 0).astype(jnp.float32)
    s = jnp.sum(mask * p)
    return jnp.where(n > 0, p * q / s, 0.0)  # expect: JX501


@jax.jit
def masked_bool_product_sum(p, q, n):
    s = jnp.sum(p * (n > 0))
    return jnp.where(n > 0, p * q / s, 0.0)  # expect: JX501


# Quiet: or-ed with another boolean, the where discards x = 0 only where the other is false, which
# the program does not say (a finding would claim what the data decides); and-ed with a test that
# keeps 0; the product with a mask of another variable.


@jax.jit
def or_other(x, other):
    return jnp.where((x > 0) | other, jnp.log(x), 0.0)


@jax.jit
def and_keeps_zero(x, valid):
    return jnp.where((x > -1) & valid, jnp.log(x), 0.0)


@jax.jit
def masked_product_other_mask(p, m, n):
    s = jnp.sum(p * (m > 0))
    return jnp.where(n > 0, p / s, 0.0)


flags = jnp.array([True, False, True])
for fn in (and_valid, logical_and_valid, named_and_valid, or_other_false_branch, or_other, and_keeps_zero):
    fn(jnp.arange(3.0), flags)
for fn in (masked_product_sum, masked_bool_product_sum, masked_product_other_mask):
    fn(jnp.arange(3.0), jnp.arange(3.0), jnp.arange(3.0))


# The clamp guard: a clip, maximum, minimum or clamp after the unsafe op clamps away its value at
# the singular point (log(0) = -inf is below the bound): the clamp's zero derivative times log's
# infinite one is NaN.


@jax.jit
def clip_log_finfo(p):
    return jnp.clip(jnp.log(p), jnp.finfo(p.dtype).min)  # expect: JX501


@jax.jit
def clip_log_keyword(p):
    return jnp.clip(jnp.log(p), min=-10.0)  # expect: JX501


@jax.jit
def maximum_log(p):
    return jnp.maximum(-100.0, jnp.log(p))  # expect: JX501


@jax.jit
def minimum_neg_log(p):
    return jnp.minimum(-2.0 * jnp.log(p), 100.0)  # expect: JX501


@jax.jit
def clip_sqrt(x):
    return jnp.clip(jnp.sqrt(x), 1e-6)  # expect: JX501


@jax.jit
def clip_reciprocal(x):
    return jnp.clip(1.0 / x, -1e6, 1e6)  # expect: JX501


@jax.jit
def lax_clamp(p):
    return jax.lax.clamp(-100.0, jnp.log(p), 0.0)  # expect: JX501


@jax.jit
def aliased_maximum(p):
    return floor_at(jnp.log(p), -100.0)  # expect: JX501


@jax.jit
def clip_method(p):
    return jnp.log(p).clip(-100.0)  # expect: JX501


@jax.jit
def clip_of_helper(p):
    return jnp.clip(log_of(p), -100.0)  # expect: JX501


def clip_vmapped(p):
    return jax.vmap(lambda v: jnp.clip(jnp.log(v), -100.0))(p)  # expect: JX501


@jax.jit
def clip_in_scan(p):
    def body(carry, v):
        return carry + jnp.maximum(jnp.log(v), -100.0), None  # expect: JX501
    return jax.lax.scan(body, 0.0, p)[0]


# Quiet clamps: on the input (the fix's form), an upper bound only on log (-inf is kept), a tie
# with sqrt(0) = 0 (the gradient is inf there, not NaN), ops without a singular point, relu, an
# input that cannot be 0, stop_gradient.


@jax.jit
def clip_before_log(p):
    return jnp.log(jnp.clip(p, jnp.finfo(p.dtype).tiny)) + jnp.log(jnp.maximum(p, 1e-30))


@jax.jit
def clip_log_upper(p):
    return jnp.clip(jnp.log(p), None, 0.0)


@jax.jit
def clip_sqrt_at_zero(x):
    return jnp.clip(jnp.sqrt(x), 0.0)


@jax.jit
def clip_tanh(x):
    return jnp.clip(jnp.tanh(x), 0, 1) + jnp.maximum(x, 0.0)


@jax.jit
def clip_log_positive(x):
    return jnp.clip(jnp.log(jnp.exp(x)), -100.0) + jnp.maximum(jnp.log(x * x + 0.5), -100.0)


@jax.jit
def clip_log_stopped(p):
    return jnp.clip(jnp.log(jax.lax.stop_gradient(p)), -100.0) * p


@jax.jit
def clip_positive_denominator(n):
    # The denominator is at least 1 (as blackjax writes a count): 1 / 0 cannot happen.
    return jnp.maximum(2.0 / jnp.maximum(n, 1.0), 0.01)


@jax.jit
def clip_sqrt_of_clipped_square(x):
    # jax_md's safe arccos rule: 1 - x**2 with x clipped inside (-1, 1) stays above 2e-7 in float32.
    x_clamped = jnp.clip(x, -1 + 1e-7, 1 - 1e-7)
    return jnp.maximum(jnp.sqrt(1 - x_clamped**2), 1e-7)


@jax.jit
def clip_only_tested(x):
    # The clamped value only feeds a comparison: no gradient can reach it.
    return jnp.where(jnp.maximum(jnp.sqrt(x), 1e-10) > 0.5, 1.0, 0.0)


@jax.jit
@jax.vmap
def rows_log(row):
    # A jit of a vmap, called with the batch at import: traced with the batch, reported inside.
    return jnp.where(row > 0, jnp.log(row), 0.0)  # expect: JX501


x = jnp.arange(3.0)
rows_log(x)
for fn in (log_gt, swapped_compare, div_ne, sqrt_false_branch, arcsin_abs, arccos_lt, arctanh_lt,
           log1p_gt, rsqrt_and, pow_half, power_call, inverse, reciprocal, cbrt_ne, chained,
           two_unsafe, vmapped, in_scan, grad_inside):
    fn(x)
for fn in (double_where, double_where_false_branch, log_threshold_below_zero, arctanh_outside,
           safe_power, stopped, shifted_input, constant_input, safe_op, named_mask, named_op, named_both,
           named_false_branch, through_helper, library_log10, lax_select, named_clip, clip_library_log10,
           clip_library_xlogy, named_mask_keeps_zero, named_double_where):
    fn(x)
for fn in (masked_sum, masked_sum_guarded, masked_sum_other_mask):
    fn(x, x, x)
for fn in (masked_sum_inline, masked_count, masked_sum_filler_one, masked_sum_of_discarded, masked_count_clamped):
    fn(x, x)
named_other_variable(x, x)
library(x, x)
library_in_where(x, x)
other_variable(x, x)
integer_input(jnp.arange(3))
for fn in (clip_log_finfo, clip_log_keyword, maximum_log, minimum_neg_log, clip_sqrt, clip_reciprocal,
           lax_clamp, aliased_maximum, clip_method, clip_of_helper, clip_vmapped, clip_in_scan,
           clip_before_log, clip_log_upper, clip_sqrt_at_zero, clip_tanh, clip_log_positive, clip_log_stopped,
           clip_positive_denominator, clip_only_tested):
    fn(x)


@jax.jit
def clip_masked_distance(x):
    # jax-md's cosine_angle_between_two_vectors: a distance made with a double where (util.safe_mask)
    # plus 1e-7 is never 0, so 2 / d stays finite.
    distance = jnp.where(x > 0, jnp.sqrt(jnp.where(x > 0, x, 0.0)), 0.0) + 1e-7
    return jax.lax.clamp(-1.0, 2.0 / distance, 1.0)


clip_masked_distance(x)


@jax.jit
def clip_clamped_square(x):
    # jax-md's _safe_acos_jvp: x clamped inside (-1, 1), so 1 - x**2 > 0 and its sqrt is never 0.
    x_clamped = jnp.clip(x, -1 + 1e-7, 1 - 1e-7)
    return jnp.maximum(jnp.sqrt(1 - x_clamped**2), 1e-7)


clip_clamped_square(x)


@jax.jit
def clip_kept_denominator(d):
    # optimistix's polak_ribiere: the where keeps the denominator only above eps, else 1: never 0.
    pred = d > jnp.finfo(d.dtype).eps
    safe_denom = jnp.where(pred, d, 1)
    return jnp.where(pred, jnp.clip(2 * d / safe_denom, min=0), 0)


@jax.jit
def clip_kept_at_zero(d):
    # the where keeps the denominator where it is >= 0: 0 included, so 1 / 0 is clamped away.
    safe = jnp.where(d >= 0, d, 1)
    return jnp.clip(1.0 / safe, -1e6, 1e6)  # expect: JX501


clip_kept_denominator(x)
clip_kept_at_zero(x)


@jax.jit
def clip_spline_bin(knots):
    # distrax's spline: a bin's width is a difference of two knots, 0 only where they coincide,
    # which the knots' construction excludes: not reported.
    width = knots[1] - knots[0]
    return jnp.clip((knots[2] - knots[0]) / width, 0.0, 1.0)


@jax.jit
def clip_quadratic_root(newton_in, cauchy_in):
    # optimistix's dogleg: a is the squared norm of the difference of two computed steps, 0 only
    # where the steps coincide (the solver then never takes this branch): not reported.
    newton, cauchy = jnp.tanh(newton_in), jnp.sin(cauchy_in)
    step = newton - cauchy
    a = jnp.vdot(step, step)
    b = 2 * (jnp.vdot(cauchy, step) - a)
    c = jnp.sum(cauchy ** 2) - 1.0
    return jnp.clip(0.5 * (-b + jnp.sqrt(b ** 2 - 4 * a * c)) / a, 1, 2)


@jax.jit
def clip_sum_of_squared_differences(p, q):
    # The same as a sum of squares of two leaves' differences (a pytree's squared norm).
    u, v = jnp.exp(p), jnp.exp(q)
    a = jnp.sum((u - v) ** 2) + jnp.sum((u[::-1] - v) ** 2)
    return jnp.clip(1.0 / a, 0.0, 1.0)


@jax.jit
def clip_quadratic_root_in_a_branch(newton_in, cauchy_in):
    # The same, the steps computed first and the root taken inside a branch (optimistix switches):
    # the branch's inputs are the computed steps, not the function's own: not reported.
    newton, cauchy = jnp.tanh(newton_in), jnp.sin(cauchy_in)

    def root(n, c):
        step = n - c
        a = jnp.vdot(step, step)
        return jnp.clip((1.0 - jnp.vdot(c, step)) / a, 1, 2)

    return jax.lax.cond(jnp.sum(newton) > 0, root, lambda n, c: jnp.ones(()), newton, cauchy)


@jax.jit
def clip_difference_of_inputs_in_a_branch(a, b):
    # A branch whose inputs are the function's own: 0 for any caller that passes two equal ones.
    def ratio(u, v):
        return jnp.clip(1.0 / (u - v), -1e6, 1e6)  # expect: JX501

    return jax.lax.cond(jnp.sum(a) >= 0, ratio, lambda u, v: u, a, b)


@jax.jit
def clip_sum_of_differences(p, q):
    # A plain sum of differences is 0 without any two values coinciding: reported.
    u, v = jnp.exp(p), jnp.exp(q)
    return jnp.clip(1.0 / jnp.sum(u - v), -1e6, 1e6)  # expect: JX501


clip_spline_bin(x)
clip_quadratic_root(x, x)
clip_sum_of_squared_differences(x, x)
clip_quadratic_root_in_a_branch(x, x)
clip_difference_of_inputs_in_a_branch(x, x)
clip_sum_of_differences(x, x)


@jax.jit
def clip_difference_of_inputs(a, b):
    # A difference of the function's own inputs is 0 for any caller that passes two equal ones.
    return jnp.clip(1.0 / (a - b), -1e6, 1e6)  # expect: JX501


clip_difference_of_inputs(x, x)


@jax.jit
def clip_product_of_positive_norms(a, b):
    # jax-md's reaxff calculate_angle: each norm is a masked sqrt plus EPS, so their product (the
    # denominator) is never 0 and the clip clamps no infinite value.
    eps = 1e-6
    norm_a = jnp.where(a > 0, jnp.sqrt(jnp.where(a > 0, a, 0.0)), 0.0) + eps
    norm_b = jnp.where(b > 0, jnp.sqrt(jnp.where(b > 0, b, 0.0)), 0.0) + eps
    return jnp.clip(a * b / (norm_a * norm_b), -1.0 + eps, 1.0 - eps)


@jax.jit
def clip_product_with_a_bare_norm(a):
    # One factor has no EPS: the product is 0 where a is, and 1 / 0 is clamped away.
    return jnp.clip(1.0 / ((jnp.abs(a) + 1e-6) * jnp.abs(a)), None, 1e6)  # expect: JX501


@jax.jit
def clip_positive_sum_of_squares(a):
    # A square plus a positive value (not a constant) is positive too.
    return jnp.clip(1.0 / (a * a + jnp.exp(a)), None, 1e6)


clip_product_of_positive_norms(x, x)
clip_product_with_a_bare_norm(x)
clip_positive_sum_of_squares(x)


@jax.jit
def where_only_into_a_while_loop(masses, n):
    # jax_md's ccma_apply_positions: the guarded inverse feeds only a while loop (fori_loop with a
    # traced bound), which reverse mode cannot differentiate; forward mode selects the tangents.
    inv_mass = jnp.where(masses > 0, 1.0 / masses, 0.0)
    return jax.lax.fori_loop(0, n, lambda i, p: p + inv_mass, masses)


@jax.jit
def where_into_a_while_loop_and_out(masses, n):
    # Returned too: differentiable, as the loop takes no tangent (stop_gradient).
    inv_mass = jnp.where(masses > 0, 1.0 / masses, 0.0)  # expect: JX501
    steps = jax.lax.fori_loop(0, n, lambda i, p: p + jax.lax.stop_gradient(inv_mass), jnp.zeros_like(masses))
    return steps + inv_mass


@jax.jit
def where_into_a_scan(masses):
    inv_mass = jnp.where(masses > 0, 1.0 / masses, 0.0)  # expect: JX501
    return jax.lax.fori_loop(0, 3, lambda i, p: p + inv_mass, masses)  # static bounds: a scan


where_only_into_a_while_loop(x, 3)
where_into_a_while_loop_and_out(x, 3)
where_into_a_scan(x)
