import jax
import jax.numpy as jnp
from jax import lax

H = jax.ShapeDtypeStruct((64, 256), jnp.float32)
W = jax.ShapeDtypeStruct((256, 256), jnp.float32)


def residual(h, w):
    def body(h, _):
        a = jnp.tanh(h @ w)
        b = jnp.tanh(a @ w)
        return h + b, None

    h, _ = lax.scan(body, h, None, length=200)  # expect: JX306, JX307
    return h.sum()


grad_residual = jax.jit(jax.grad(residual, argnums=(0, 1)))
grad_residual.lower(H, W)


def residual_fori(h, w):
    def body(i, h):
        a = jnp.tanh(h @ w)
        return h + jnp.tanh(a @ w)

    return lax.fori_loop(0, 200, body, h).sum()  # expect: JX306, JX307


grad_fori = jax.jit(jax.grad(residual_fori, argnums=(0, 1)))
grad_fori.lower(H, W)


# Quiet: the same loop with its body checkpointed (it saves only the carry, 12.5 MiB), not
# differentiated, and differentiated over 50 steps (15.6 MiB of residuals, below min-bytes).
# JX307 reports each differentiated loop of this file: the compiled gradient copies the 64 KiB
# carry (its min-bytes) every iteration, checkpointed or not.


def residual_checkpointed(h, w):
    def body(h, _):
        a = jnp.tanh(h @ w)
        b = jnp.tanh(a @ w)
        return h + b, None

    h, _ = lax.scan(jax.checkpoint(body), h, None, length=200)  # expect: JX307
    return h.sum()


grad_checkpointed = jax.jit(jax.grad(residual_checkpointed, argnums=(0, 1)))
grad_checkpointed.lower(H, W)


def forward_only(h, w):
    def body(h, _):
        a = jnp.tanh(h @ w)
        b = jnp.tanh(a @ w)
        return h + b, None

    h, _ = lax.scan(body, h, None, length=200)
    return h.sum()


forward = jax.jit(forward_only)
forward.lower(H, W)


def short_loop(h, w):
    def body(h, _):
        a = jnp.tanh(h @ w)
        b = jnp.tanh(a @ w)
        return h + b, None

    h, _ = lax.scan(body, h, None, length=50)  # expect: JX307
    return h.sum()


grad_short = jax.jit(jax.grad(short_loop, argnums=(0, 1)))
grad_short.lower(H, W)
