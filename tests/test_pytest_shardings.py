"""``pytest --jaxlint`` on a project whose jitted functions place their inputs on an Auto mesh:
a jit's ``in_shardings``/``out_shardings``, arrays committed with ``jax.device_put`` and donation
reach the program the plugin traces again, so JX310 and JX308 see the program the test ran.

The project's tests run in a subprocess with 8 CPU devices (``XLA_FLAGS`` set for it alone); one
run, whose JSON report the tests read. Findings are compared by (code, line) with the ``# expect``
comments."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest
from helpers import forced_devices_flags

# A Mesh of the devices has Auto axes on every supported JAX (jax.make_mesh makes Explicit ones on
# newer JAX). jax-ml/jax#21562: operands P('y', None, 'x') on a (4, 2) mesh, the sum constrained to
# P(None, ('x', 'y'), None), which no collective reaches; its twin (`y` stays, `x` moves) is one
# all-to-all.
MODEL = '''\
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.sharding.Mesh(np.array(jax.devices()[:8]).reshape(4, 2), ("x", "y"))
blocks = NamedSharding(mesh, P("y", None, "x"))
columns = NamedSharding(mesh, P(None, ("x", "y"), None))


@partial(jax.jit, in_shardings=(blocks, blocks))
def repro(a, b):
    d = a + b  # expect JX310
    return jax.lax.with_sharding_constraint(d, columns)


@partial(jax.jit, in_shardings=(blocks, blocks))
def twin(a, b):
    d = a + b
    return jax.lax.with_sharding_constraint(d, NamedSharding(mesh, P(None, "y", "x")))


@partial(jax.jit, static_argnums=0, in_shardings=(blocks, blocks), out_shardings=columns)
def scaled(n, a, b):
    return a * n + b  # expect JX310


def scaled_sum(n, a, b):
    return jax.lax.with_sharding_constraint(a * n + b, columns)  # expect JX310


scaled_by_two = jax.jit(partial(scaled_sum, 2.0), in_shardings=(blocks, blocks))


@jax.jit
def placed(a, b):
    d = a + b  # expect JX310
    return jax.lax.with_sharding_constraint(d, columns)


@jax.jit
def unplaced(a, b):
    d = a + b
    return jax.lax.with_sharding_constraint(d, columns)


@partial(jax.jit, static_argnums=0, donate_argnums=1)  # expect JX308
def halve(scale, x):
    return (x * scale).astype(jnp.bfloat16)


@partial(jax.jit, donate_argnames="x")  # expect JX308
def cast(x, scale):
    return (x * scale).astype(jnp.bfloat16)


@partial(jax.jit, in_shardings=NamedSharding(mesh, P("x")), donate_argnums=0)  # expect JX308
def rows_cast(x):
    return x.astype(jnp.bfloat16)


@partial(jax.jit, donate_argnums=0)
def scale(x, factor):
    return x * factor
'''

TESTS = '''\
import jax
import jax.numpy as jnp

from pkg.model import blocks, cast, halve, placed, repro, rows_cast, scale, scaled, scaled_by_two, twin, unplaced


def test_in_shardings():
    a = jnp.ones((64, 128, 64))
    assert repro(a, a).shape == twin(a, a).shape == scaled(2.0, a, a).shape == a.shape
    assert scaled_by_two(a, a).shape == a.shape


def test_committed_arguments():
    a = jnp.ones((64, 128, 64))
    assert unplaced(a, a).shape == a.shape
    a = jax.device_put(a, blocks)
    assert placed(a, a).shape == a.shape


def test_donation():
    assert halve(0.5, jnp.ones((256, 256))).dtype == jnp.bfloat16
    assert cast(x=jnp.ones((256, 256)), scale=0.5).dtype == jnp.bfloat16
    assert scale(jnp.ones((256, 256)), 0.5).dtype == jnp.float32
    assert rows_cast(jnp.ones((256, 256))).dtype == jnp.bfloat16
'''


def _expected(text: str) -> set[tuple[str, int]]:
    return {(line.split("# expect ")[1].split()[0], number)
            for number, line in enumerate(text.splitlines(), 1) if "# expect " in line}


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("shardings")
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "model.py").write_text(MODEL)
    (root / "tests").mkdir()
    (root / "tests" / "test_model.py").write_text(TESTS)
    env = {k: v for k, v in os.environ.items()
           if k not in ("JAXLINT_RECORD", "PYTEST_ADDOPTS", "JAXLINT_OUTPUT_FORMAT", "PYTEST_XDIST_WORKER")}
    env.update(JAX_PLATFORMS="cpu", XLA_FLAGS=forced_devices_flags(8))
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--jaxlint", "--jaxlint-report",
                           "report.json", "--jaxlint-no-cache", "-v"],
                          cwd=root, env=env, capture_output=True, text=True, timeout=600)
    assert "3 passed" in done.stdout, done.stdout + done.stderr
    findings = json.loads((root / "report.json").read_text())
    return {"stdout": done.stdout, "findings": findings,
            "found": {(f["code"], f["location"]["row"]) for f in findings}}


def _at(run: dict[str, Any], code: str, marker: str) -> list[dict[str, Any]]:
    line = next(n for n, text in enumerate(MODEL.splitlines(), 1) if marker in text)
    return [f for f in run["findings"] if f["code"] == code and f["location"]["row"] == line]


def test_the_findings_are_those_of_the_placed_programs(run: dict[str, Any]) -> None:
    assert run["found"] == _expected(MODEL), run["stdout"]
    assert "could not be traced again" not in run["stdout"], run["stdout"]


def test_a_jits_in_shardings_reach_the_trace(run: dict[str, Any]) -> None:
    # Traced from its body with the jit's in_shardings: the repro's operands are split as the test
    # split them, and the partitioner replicates the sum; the all-to-all twin stays quiet.
    [finding] = _at(run, "JX310", "    d = a + b  # expect JX310")
    assert "from P('y', None, 'x') to P(None, ('x', 'y'), None)" in finding["message"]
    assert ("JX310", MODEL.splitlines().index("def twin(a, b):") + 2) not in run["found"]
    # A static argument before the sharded ones, and out_shardings instead of a constraint; a jit
    # of a partial, whose first argument the partial holds.
    [scaled] = _at(run, "JX310", "return a * n + b  # expect")
    assert "to P(None, ('x', 'y'), None)" in scaled["message"]
    [partial] = _at(run, "JX310", "columns)  # expect JX310")
    assert "from P('y', None, 'x') to P(None, ('x', 'y'), None)" in partial["message"]


def test_a_committed_arguments_sharding_reaches_the_trace(run: dict[str, Any]) -> None:
    # The same body without in_shardings: the arrays device_put with the blocks sharding place it;
    # its twin called with arrays on one device is quiet.
    line = MODEL.splitlines().index("def placed(a, b):") + 2
    [finding] = [f for f in run["findings"] if f["code"] == "JX310" and f["location"]["row"] == line]
    assert "from P('y', None, 'x')" in finding["message"]
    unplaced = MODEL.splitlines().index("def unplaced(a, b):") + 2
    assert ("JX310", unplaced) not in run["found"]


def test_donation_reaches_the_trace(run: dict[str, Any]) -> None:
    # Donated by position after a static argument, and by name in a keyword call: both named as the
    # user wrote them; an input the output can take over (same shape and dtype) is quiet.
    [halve] = _at(run, "JX308", "donate_argnums=1)  # expect JX308")
    assert halve["message"].startswith("donated argument of `halve` not aliased to any output: 'x' "
                                       "(float32[256,256], 256.0 KiB)"), halve["message"]
    [cast] = _at(run, "JX308", 'donate_argnames="x")  # expect JX308')
    assert "of `cast` not aliased to any output: 'x' (float32[256,256]" in cast["message"]
    # Donated and split in four by the jit's in_shardings: what each device holds.
    [rows] = _at(run, "JX308", 'P("x")), donate_argnums=0)  # expect JX308')
    assert "'x' (float32[256,256], 256.0 KiB, 64.0 KiB per device)" in rows["message"], rows["message"]
    assert rows["cost"]["bytes"] == 64 * 1024 and "on each of the 8 devices" in rows["cost"]["note"]
