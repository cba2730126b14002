"""JX312's and JX709's cases on a real TPU v5e chip (run there with the `device` tool).

    python bench/tpu_padding_precision.py OUT.json

Padding (JX312, tests/data/padding/small_matrices.py and small_inverses.py): each padded function and its rewrite
compiled on the chip (XLA's memory_analysis: arguments, outputs, temporaries) and run on real
arrays (median of 20 timed calls after 3 warm-up calls, block_until_ready).

Precision (JX709): float32 products that reach a solve, run on the chip at default precision, with
``precision=HIGHEST`` and inside ``jax.default_matmul_precision("float32")``; each result's relative
error (2-norm) against numpy's float64 answer on the host, from the same float32 inputs.

Compare with `jaxlint check --target tpu-v5e --select JX312,JX709` (deviceless): the rule pages
and docs/performance.md have both.
"""
from __future__ import annotations

import json
import os
import statistics
import sys
import time
from typing import Any, Callable

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "data",
                                "padding"))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import small_inverses  # noqa: E402
import small_matrices  # noqa: E402
from jax.scipy.linalg import cho_factor, cho_solve  # noqa: E402

HIGHEST = jax.lax.Precision.HIGHEST


def _memory(compiled: Any) -> dict[str, int]:
    analysis = compiled.memory_analysis()
    return {k: int(getattr(analysis, f"{k}_size_in_bytes", 0) or 0) for k in ("argument", "output", "temp")}


def _timed(function: Callable[..., Any], args: tuple[Any, ...]) -> dict[str, Any]:
    jitted = jax.jit(function)
    compiled = jitted.lower(*args).compile()
    for _ in range(3):
        jax.block_until_ready(compiled(*args))
    times = []
    for _ in range(20):
        started = time.perf_counter()
        jax.block_until_ready(compiled(*args))
        times.append(time.perf_counter() - started)
    return {"memory": _memory(compiled), "median_ms": statistics.median(times) * 1e3,
            "min_ms": min(times) * 1e3}


def _elementwise_chain(a: Any, b: Any) -> Any:
    c = jnp.tanh((a[..., :, :, None] * b[..., None, :, :]).sum(-2))
    return (c[..., :, :, None] * b[..., None, :, :]).sum(-2)


def _page_example(a: Any, b: Any) -> Any:
    return jnp.tanh(a @ b)


def _page_use_instead(a: Any, b: Any) -> Any:
    return jnp.tanh((a[..., :, :, None] * b[..., None, :, :]).sum(-2))


def _adjugate_inverse(a: Any) -> Any:
    """The 3x3 inverse in closed form, the batch last (JX312's advice for small inverses)."""
    m = jnp.moveaxis(a, 0, -1)  # (3, 3, N)
    c00 = m[1, 1] * m[2, 2] - m[1, 2] * m[2, 1]
    c01 = m[1, 2] * m[2, 0] - m[1, 0] * m[2, 2]
    c02 = m[1, 0] * m[2, 1] - m[1, 1] * m[2, 0]
    det = m[0, 0] * c00 + m[0, 1] * c01 + m[0, 2] * c02
    inverse = jnp.stack([
        jnp.stack([c00, m[0, 2] * m[2, 1] - m[0, 1] * m[2, 2], m[0, 1] * m[1, 2] - m[0, 2] * m[1, 1]]),
        jnp.stack([c01, m[0, 0] * m[2, 2] - m[0, 2] * m[2, 0], m[0, 2] * m[1, 0] - m[0, 0] * m[1, 2]]),
        jnp.stack([c02, m[0, 1] * m[2, 0] - m[0, 0] * m[2, 1], m[0, 0] * m[1, 1] - m[0, 1] * m[1, 0]]),
    ]) / det
    return jnp.moveaxis(inverse, -1, 0)


def padding_cases() -> dict[str, Any]:
    rng = np.random.default_rng(0)
    n = small_matrices.N
    a = jnp.asarray(rng.standard_normal((n, 3, 3)).astype(np.float32) + 3 * np.eye(3, dtype=np.float32))
    b = jnp.asarray(rng.standard_normal((n, 3, 3)).astype(np.float32) * 0.3)
    cases = {
        "chained_small_products (padded)": (small_matrices.chained_small_products.__wrapped__, (a, b)),
        "chained_small_products written elementwise": (_elementwise_chain, (a, b)),
        "page Example: tanh(a @ b)": (_page_example, (a, b)),
        "page Use instead: elementwise": (_page_use_instead, (a, b)),
        "small_inverses: jnp.linalg.inv (padded)": (small_inverses.small_inverses.__wrapped__, (a,)),
        "small_inverses: adjugate, batch last": (_adjugate_inverse, (a,)),
    }
    found = {name: _timed(function, args) for name, (function, args) in cases.items()}
    inverse = np.asarray(jax.jit(_adjugate_inverse)(a), dtype=np.float64)
    reference = np.linalg.inv(np.asarray(a, dtype=np.float64))
    found["adjugate inverse, relative error vs float64"] = float(
        np.linalg.norm(inverse - reference) / np.linalg.norm(reference))
    return found


def _relative(found: Any, reference: np.ndarray) -> float:
    found = np.asarray(found, dtype=np.float64)
    return float(np.linalg.norm(found - reference) / np.linalg.norm(reference))


def precision_cases() -> dict[str, Any]:
    rng = np.random.default_rng(0)
    rows, cols = 8192, 64
    collinear = rng.standard_normal((rows, cols)).astype(np.float32)
    collinear[:, 1] = collinear[:, 0] + 1e-2 * rng.standard_normal(rows).astype(np.float32)
    conditioned = rng.standard_normal((rows, cols)).astype(np.float32)
    weights = rng.standard_normal(cols).astype(np.float32)
    ridge_x = rng.standard_normal((1024, 256)).astype(np.float32)
    ridge_y = rng.standard_normal(1024).astype(np.float32)
    layer_x = rng.standard_normal((4096, 1024)).astype(np.float32)
    layer_w = (rng.standard_normal((1024, 1024)) / 32).astype(np.float32)

    def normal(x: Any, y: Any, precision: Any = None) -> Any:
        return jnp.linalg.solve(jnp.matmul(x.T, x, precision=precision), jnp.matmul(x.T, y, precision=precision))

    def ridge(x: Any, y: Any, precision: Any = None) -> Any:
        gram = jnp.matmul(x, x.T, precision=precision) + jnp.eye(x.shape[0], dtype=x.dtype)
        return cho_solve(cho_factor(gram), y)

    def layer(x: Any, w: Any, precision: Any = None) -> Any:
        return jnp.tanh(jnp.matmul(x, w, precision=precision))

    def f64_normal(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        x, y = x.astype(np.float64), y.astype(np.float64)
        return np.linalg.solve(x.T @ x, x.T @ y)

    def f64_ridge(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        x, y = x.astype(np.float64), y.astype(np.float64)
        return np.linalg.solve(x @ x.T + np.eye(x.shape[0]), y)

    def f64_layer(x: np.ndarray, w: np.ndarray) -> np.ndarray:
        return np.tanh(x.astype(np.float64) @ w.astype(np.float64))

    cases = {
        "normal equations, nearly collinear X (8192x64)": (normal, f64_normal, (collinear, collinear @ weights)),
        "normal equations, well-conditioned X (8192x64)": (normal, f64_normal, (conditioned, conditioned @ weights)),
        "ridge cho_solve(X X^T + I, y) (1024x256)": (ridge, f64_ridge, (ridge_x, ridge_y)),
        "layer tanh(x @ w) (4096x1024, no solve)": (layer, f64_layer, (layer_x, layer_w)),
    }
    found = {}
    for name, (function, reference_function, args) in cases.items():
        reference = reference_function(*args)
        device_args = tuple(jnp.asarray(a) for a in args)
        default = jax.jit(function)(*device_args)
        highest = jax.jit(lambda *a: function(*a, precision=HIGHEST))(*device_args)
        with jax.default_matmul_precision("float32"):
            block = jax.jit(function)(*device_args)
        found[name] = {"default": _relative(default, reference), "HIGHEST": _relative(highest, reference),
                       "default_matmul_precision('float32')": _relative(block, reference)}
    return found


def main() -> None:
    report = {"jax": jax.__version__, "devices": [str(d) for d in jax.devices()],
              "padding": padding_cases(), "precision": precision_cases()}
    with open(sys.argv[1], "w", encoding="utf-8") as out:
        json.dump(report, out, indent=1)
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
