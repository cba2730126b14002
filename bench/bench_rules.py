"""Benchmark: rules time against trace time on a realistic traced program (run by hand).

    python bench/bench_rules.py [--repeat 5] [--ignore JX306,JX307,JX308] [--program residuals]

The program (``--program train``, the default): a jitted training step of a 10-layer MLP: per-example losses under vmap, grad,
and an inner lax.scan of 20 optimizer steps; a hint gives the shapes. Prints the medians of the
worker's trace and rules stages (the rules stage includes building the IR, and the compile of the
memory rules, printed apart as "memory compile": the scan makes JX307 compile the program).
``--program residuals`` is issue 27's case instead, the gradient of a scan of 200 steps over two
256-wide layers (JX306 compiles it twice: as traced and with the body checkpointed).
``--ignore`` leaves rules out of the default selection (what a rule family costs).
"""
from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from jaxlint.config.selection import select_rules
from jaxlint.engine.check import check

TRAIN = '''
import jax
import jax.numpy as jnp


def mlp(params, x):
    for w, b in params:
        x = jnp.tanh(x @ w + b)
    return x.sum()


def loss(params, xs, ys):
    per_example = jax.vmap(lambda x, y: (mlp(params, x) - y) ** 2)(xs, ys)
    return per_example.mean()


# jaxlint: args params=[(f32[256, 256], f32[256])] * 10, xs=f32[64, 256], ys=f32[64]
@jax.jit
def train(params, xs, ys):
    def step(p, _):
        g = jax.grad(loss)(p, xs, ys)
        return jax.tree_util.tree_map(lambda a, b: a - 1e-3 * b, p, g), None
    return jax.lax.scan(step, params, None, length=20)[0]
'''.replace("[(f32[256, 256], f32[256])] * 10", "[" + ", ".join(["(f32[256, 256], f32[256])"] * 10) + "]")

RESIDUALS = '''
import jax
import jax.numpy as jnp


def body(h, w):
    a = jnp.tanh(h @ w)
    b = jnp.tanh(a @ w)
    return h + b, None


# jaxlint: args h=f32[64, 256], w=f32[256, 256]
@jax.jit
def loss_grad(h, w):
    return jax.grad(lambda h, w: jax.lax.scan(lambda c, _: body(c, w), h, None, length=200)[0].sum())(h, w)
'''
PROGRAMS = {"train": TRAIN, "residuals": RESIDUALS}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--program", choices=sorted(PROGRAMS), default="train")
    parser.add_argument("--ignore", default="", help="rule codes to leave out, comma-separated")
    options = parser.parse_args()
    repeat = options.repeat
    rules = select_rules(None, [code for code in options.ignore.split(",") if code])
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "program.py"
        path.write_text(PROGRAMS[options.program])
        trace, rules_time, compile_time = [], [], []
        for _ in range(repeat):
            result = check([str(path)], rules, jobs=1)
            assert result.traced >= 1, result.skipped
            trace.append(result.timings["trace"])
            rules_time.append(result.timings["rules"])
            compile_time.append(result.timings.get("memory-compile", 0.0))
        t, r = statistics.median(trace), statistics.median(rules_time)
        print(f"trace {t * 1000:.1f} ms, rules (IR build + {len(rules)} rules) {r * 1000:.1f} ms "
              f"(memory compile {statistics.median(compile_time) * 1000:.1f} ms), "
              f"rules/trace {r / t:.0%} (median of {repeat}); findings: "
              f"{sorted({f.code for f in result.findings})}")


if __name__ == "__main__":
    main()
