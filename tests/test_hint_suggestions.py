"""The hints --show-untraced (and explain's --args advice) suggest come from what the value is: a
list of dicts with its structure, integer indices, a float scalar, an iterator (no hint: an
examples file), and never a float array beside a trace error that asked for integers; where
nothing says what a value is, the hint says so (``<unknown>``) rather than guess ``f32[...]``.
Through the real command line, on a first project as a new user writes it."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from helpers import write

from jaxlint.report.call_sites import call_site_uses
from jaxlint.report.parameter_use import parameter_uses
from jaxlint.scan.index import SourceIndex

TRAIN = """\
import jax
import jax.numpy as jnp


def init_params(key, sizes):
    keys = jax.random.split(key, len(sizes) - 1)
    return [{"w": jax.random.normal(k, (m, n)) * 0.1, "b": jnp.zeros(n)}
            for k, m, n in zip(keys, sizes[:-1], sizes[1:])]


def forward(params, x):
    for layer in params:
        x = jnp.tanh(x @ layer["w"] + layer["b"])
    return x


def deepest(params, x):
    return jnp.dot(x, params[-1]["w"])


def accuracy(logits, labels):
    return jnp.mean(jnp.take_along_axis(logits, labels[:, None], axis=1))


def picked(logits, labels):
    return jnp.mean(jnp.take_along_axis(logits, jnp.expand_dims(labels, 1), axis=1))


def nll(params, x, labels):
    logp = jax.nn.log_softmax(forward(params, x))
    return -jnp.mean(jnp.take_along_axis(logp, labels[:, None], axis=1))


def sgd(params, grads, lr):
    return jax.tree.map(lambda p, g: p - lr * g, params, grads)


def step(params, x, labels, lr):
    grads = jax.grad(nll)(params, x, labels)
    return [{"w": p["w"] - lr * g["w"], "b": p["b"] - lr * g["b"]} for p, g in zip(params, grads)]


def train(params, batch_iter, lr):
    for x, labels in batch_iter:
        params = sgd(params, jax.grad(nll)(params, x, labels), lr)
    return params


def evaluate(params, batches):
    return jnp.mean(jnp.stack([nll(params, x, y) for x, y in batches]))


def first_loss(params, stream):
    x, labels = next(stream)
    return jnp.log(nll(params, x, labels))


def warmup_schedule(steps=100, warmup=10):
    return jnp.minimum(jnp.arange(steps) / warmup, 1.0)


if __name__ == "__main__":
    params = init_params(jax.random.key(0), [4, 8, 3])
    params = step(params, jnp.ones((2, 4)), jnp.zeros(2, jnp.int32), 0.01)
"""


def jaxlint(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "jaxlint", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=600)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hint_suggestions")
    write(root, "train", TRAIN)
    return root


@pytest.fixture(scope="module")
def untraced(project: Path) -> dict[str, tuple[str, list[str]]]:
    """``function -> (reason, the lines under it)`` of `check --show-untraced` (with inference)."""
    run = jaxlint("check", "--show-untraced", ".", cwd=project)
    assert run.returncode == 0, run.stderr
    entries: dict[str, tuple[str, list[str]]] = {}
    for line in run.stderr.splitlines():
        if line.startswith("  train.py:"):
            name, _, reason = line.split(": ", 1)[1].partition(" ")
            entries[name] = (reason, [])
        elif line.startswith("      ") and entries:
            entries[list(entries)[-1]][1].append(line.lstrip())  # a trailing space would be copied too
    return entries


def test_a_list_of_dicts_is_written_with_its_structure(untraced: dict) -> None:
    assert untraced["forward"][1][0] == "# jaxlint: args params=[{'w': f32[...], 'b': f32[...]}, ...], x=f32[...]"
    assert untraced["deepest"][1][0] == "# jaxlint: args params=[{'w': f32[...]}, ...], x=f32[...]"
    for function in ("forward", "deepest"):
        assert "a list with one element per item" in untraced[function][1][1]


def test_indices_are_integers_beside_the_error_that_asks_for_them(untraced: dict) -> None:
    reason, lines = untraced["accuracy"]
    # labels indexes (take_along_axis): guessed i32 by its use (argsources/usage.py), and so hinted.
    assert "labels=i32[n]:" in reason and "integer type" not in reason
    assert lines[0] == "# jaxlint: args logits=f32[...], labels=i32[...]"
    assert untraced["nll"][1][0].endswith("labels=i32[...]")


def test_an_error_asking_for_integers_leaves_no_float_guess(untraced: dict) -> None:
    """`jnp.expand_dims(labels, 1)` hides which parameter holds the indices: neither is guessed."""
    reason, lines = untraced["picked"]
    assert "indices must be of integer type" in reason
    assert lines[0] == "# jaxlint: args logits=<unknown>, labels=<unknown>"
    assert "give the parameter that holds indices an integer dtype (i32[...])" in lines[1]
    for reason, lines in untraced.values():
        if "integer type" in reason:
            assert not any("labels=f32" in line for line in lines), lines


def test_a_float_scalar_is_a_scalar(untraced: dict) -> None:
    # Passed 0.01 by the module's own call. sgd (params and grads by name) is linted with one-leaf pytrees.
    assert "sgd" not in untraced
    assert untraced["step"][1][0] == \
        "# jaxlint: args params=[{'w': f32[...], 'b': f32[...]}, ...], x=f32[...], labels=i32[...], lr=f32[]"


def test_an_iterator_needs_an_examples_file(untraced: dict) -> None:
    for function in ("train", "first_loss"):
        [line] = untraced[function][1]
        assert line.startswith("no hint helps: ") and "is an iterator" in line and "examples file" in line, line
    # Iterated under a name that is no iterator's: a list of pairs, or an iterator.
    hint, note = untraced["evaluate"][1]
    assert hint == "# jaxlint: args params=[{'w': f32[...], 'b': f32[...]}, ...], batches=[(f32[...], f32[...]), ...]"
    assert "an iterator or generator needs an examples file" in note


def test_a_function_whose_parameters_all_have_defaults_gets_the_bare_hint(untraced: dict) -> None:
    reason, lines = untraced["warmup_schedule"]
    assert "no parameter takes an array" in reason
    assert lines[0] == "# jaxlint: args"  # no trailing space to copy along


def test_explain_advice_reads_the_source_too(project: Path) -> None:
    run = jaxlint("explain", "train.py::train", cwd=project)
    assert run.returncode == 2 and "batch_iter is an iterator" in run.stderr and "f32[...]" not in run.stderr
    run = jaxlint("explain", "train.py::accuracy", cwd=project)
    assert run.returncode == 2 and '--args "logits=f32[...], labels=i32[...]"' in run.stderr, run.stderr


def uses(source: str) -> dict[str, str]:
    index = SourceIndex("m.py", "import jax\nimport jax.numpy as jnp\n\n" + source)
    return {name: use.kind for name, use in parameter_uses(index, index.functions[0]).items()}


@pytest.mark.parametrize("source, kinds", [
    ("def f(x, i):\n    return x[i]\n", {"x": "array", "i": "indices"}),
    ("def f(x, rows, cols):\n    return x.at[rows, cols].set(0)\n",
     {"x": "array", "rows": "indices", "cols": "indices"}),
    ("def f(labels):\n    return jax.nn.one_hot(labels.reshape(-1), 10)\n", {"labels": "indices"}),
    ("def f(x, n):\n    return x[:n]\n", {"x": "array", "n": "int"}),  # a slice bound is a size, not indices
    ("def f(t, s):\n    return jax.tree.map(lambda v: v * s, t)\n", {"t": "pytree", "s": "scalar"}),
    ("def f(t, s):\n    return jax.tree.map(lambda s: s * 2, t) + s\n", {"t": "pytree", "s": "array"}),
])
def test_parameter_use_reads_indices_and_scalars(source: str, kinds: dict[str, str]) -> None:
    assert uses(source) == kinds


CALLS = """\
import jax.numpy as jnp

LR = 1e-3
g = 2  # not the g main and sweep pass: theirs is their parameter


def stream(xs):
    for x in xs:
        yield x


def update(w, g, lr, steps, batches, layers):
    return w - lr * g


def main(w, g, xs):
    update(w, g, LR, 3, stream(xs), [{"w": w, "b": g}])
    update(w, g, 0.5, 4, (x for x in xs), [{"w": w, "b": g}])
    rate = 0.1
    update(w, g, rate, steps=-2, batches=iter(xs), layers=[{"w": w}])


def sweep(w, g, xs, LR):
    for steps in range(3):  # LR is this function's parameter, steps a loop's: neither is followed
        update(w, g, LR, steps, stream(xs), [{"w": w, "b": g}])
"""


def test_call_sites_say_what_each_call_passes() -> None:
    index = SourceIndex("m.py", CALLS)
    update = next(f for f in index.functions if f.name == "update")
    passed = {name: (use.kind, use.element_keys) for name, use in call_site_uses(index, update).items()}
    # The layers calls disagree (w and b, then w alone): left out; w and g are names bound to nothing.
    assert passed == {"lr": ("float", []), "steps": ("int", []), "batches": ("iterator", [])}
