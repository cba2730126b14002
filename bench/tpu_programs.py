"""Programs of different kinds for the TPU-target benchmark (bench/tpu_chip.py): each a jitted
function whose abstract arguments the module gives at import (``f.lower(...)``), as a user's
module would, so ``jaxlint explain --target tpu-v5e bench/tpu_programs.py::NAME`` traces it."""
import jax
import jax.numpy as jnp
from jax import lax

f32, bf16 = jnp.float32, jnp.bfloat16


def spec(shape: tuple[int, ...], dtype=f32) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(shape, dtype)


@jax.jit
def matmul_bf16(a, b):
    """Compute-bound: one large bfloat16 product."""
    return a @ b


@jax.jit
def elementwise(x, y):
    """Memory-bound: one pass over 2 x 256 MiB, one 256 MiB result."""
    return jnp.tanh(x) * 2.0 + y


@jax.jit
def mlp_step(params, x, y):
    """A training step: the gradient of a 3-layer tanh MLP's squared error, and an SGD update."""
    def loss(params):
        h = x
        for w in params[:-1]:
            h = jnp.tanh(h @ w)
        return jnp.mean((h @ params[-1] - y) ** 2)
    grads = jax.grad(loss)(params)
    return [w - 1e-3 * g for w, g in zip(params, grads)]


@jax.jit
def scan_rnn(h, w, xs):
    """A loop: 128 steps of a tanh recurrence (the loop body counted by its trip count)."""
    def step(h, x):
        h = jnp.tanh(h @ w + x)
        return h, h.sum()
    return lax.scan(step, h, xs)


@jax.jit
def conv(images, kernel):
    """A convolution in bfloat16, NHWC."""
    return lax.conv_general_dilated(images, kernel, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))


@jax.jit
def softmax_rows(x):
    """Reductions: a softmax over rows of a 8192 x 8192 matrix."""
    return jax.nn.softmax(x, axis=-1)


@jax.jit
def founding(x, y):
    """The founding example: tiny, so launch overhead dominates whatever the estimate says."""
    x, y = jax.vmap(lambda x, y: (x + 1, (x + 1) * y), in_axes=(None, 0))(x, y)
    return x[0], y


PROGRAMS = {
    "matmul_bf16": (matmul_bf16, (spec((8192, 8192), bf16), spec((8192, 8192), bf16))),
    "elementwise": (elementwise, (spec((8192, 8192)), spec((8192, 8192)))),
    "mlp_step": (mlp_step, ([spec((4096, 4096)), spec((4096, 4096)), spec((4096, 256))], spec((1024, 4096)),
                            spec((1024, 256)))),
    "scan_rnn": (scan_rnn, (spec((256, 1024)), spec((1024, 1024)), spec((128, 256, 1024)))),
    "conv": (conv, (spec((32, 112, 112, 64), bf16), spec((3, 3, 64, 128), bf16))),
    "softmax_rows": (softmax_rows, (spec((8192, 8192)),)),
    "founding": (founding, (spec((128,)), spec((10, 128)))),
}

for _function, _args in PROGRAMS.values():  # the import-time calls jaxlint reads the arguments of
    _function.lower(*_args)
