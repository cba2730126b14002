"""The existing rules, their fixes and costs on sharded programs: the triggers of tests/rules/
sharded over a (4, 2) mesh, in the Auto form every supported JAX has (tests/data/sharded/auto_mesh.py:
a Mesh of the devices, in_shardings, with_sharding_constraint) and the Explicit form of newer JAX
(explicit_mesh.py: `jax.make_mesh`'s default axes, shardings in the jaxpr types, reshard).

jaxlint runs in a subprocess with `devices = 8`, so the forced device count reaches only its
workers, never this test process; one check and one fixing run, whose JSON the tests read."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import jax
import pytest
from helpers import case_markers

from jaxlint.config import load_config
from jaxlint.config.selection import select_rules
from jaxlint.engine.check import check
from jaxlint.ir import hlo, primitives
from jaxlint.ir.primitives import SAME_VALUE, SHARDING_OPS, traits

MODULES = Path(__file__).resolve().parent / "data" / "sharded"
# Explicit axes, shardings in jaxpr types and reshard: newer JAX only (not 0.4.35).
EXPLICIT = all(hasattr(jax.sharding, name) for name in ("AxisType", "reshard", "set_mesh"))


def _project(root: Path) -> Path:
    root.mkdir()
    shutil.copy(MODULES / "auto_mesh.py", root)
    if EXPLICIT:
        shutil.copy(MODULES / "explicit_mesh.py", root)
    return root


def _jaxlint(root: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}  # the device count comes from jaxlint
    return subprocess.run([sys.executable, "-m", "jaxlint", "check", "--no-cache", "--jobs", "1",
                           "--output-format", "json", *args, "."],
                          cwd=root, capture_output=True, text=True, timeout=900, env=env)


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = _project(tmp_path_factory.mktemp("sharded") / "project")
    (root / "jaxlint.toml").write_text("devices = 8\n")
    run = _jaxlint(root, "--coverage-report", "coverage.json")
    assert run.returncode == 1, run.stdout + run.stderr
    coverage = json.loads((root / "coverage.json").read_text())
    return {"root": root, "findings": json.loads(run.stdout), "stderr": run.stderr,
            "signatures": {(Path(t["path"]).name, t["target"]): t["signatures"] for t in coverage["traced"]}}


def _found(checked: dict[str, Any], code: str, file: str) -> list[dict[str, Any]]:
    return [f for f in checked["findings"] if f["code"] == code and Path(f["filename"]).name == file]


def test_the_sharded_triggers_are_reported_and_their_near_misses_are_quiet(checked: dict[str, Any]) -> None:
    found = sorted((Path(f["filename"]).name, f["code"], f["location"]["row"]) for f in checked["findings"])
    assert found == case_markers(checked["root"]), checked["stderr"]
    assert "Traceback" not in checked["stderr"] and not any(f["code"].startswith("JX9") for f in checked["findings"])


def test_arguments_are_traced_with_the_shardings_the_module_gave_them(checked: dict[str, Any]) -> None:
    signatures = checked["signatures"]
    # Auto axes: the types carry no sharding (in_shardings and constraints place the values).
    assert signatures["auto_mesh.py", "safe_log"] == ["f32[8,16]"]
    if not EXPLICIT:
        return
    # A ShapeDtypeStruct's sharding, and arrays placed with device_put, as jaxprs print them.
    assert signatures["explicit_mesh.py", "safe_log"] == ["f32[8@data,16@model]"]
    assert signatures["explicit_mesh.py", "vmap_first"] == ["f32[32], f32[8,32@model]"]
    assert signatures["explicit_mesh.py", "sgd"] == ["f32[512,512@model], f32[64@data,512]"]


@pytest.mark.skipif(not EXPLICIT, reason="reshard and sharded jaxpr types are newer than this JAX")
def test_a_reshard_between_a_broadcast_and_its_reduction_is_looked_through(checked: dict[str, Any]) -> None:
    [finding] = _found(checked, "JX304", "explicit_mesh.py")
    assert finding["message"].startswith("reduce_max over axis 0 of f32[64@data,32], which a broadcast just made "
                                         "of 64 copies")


def test_the_memory_rules_compile_the_partitioned_program_and_say_per_device(checked: dict[str, Any]) -> None:
    for file in ("auto_mesh.py", "explicit_mesh.py") if EXPLICIT else ("auto_mesh.py",):
        # The carry f32[1000,10,10] split over `model` (2): each device copies its half.
        [copies] = _found(checked, "JX307", file)
        assert "(f32[1000,5,10] x2): 390.6 KiB per iteration x 999 iterations = 381.1 MiB copied on each of " \
               "the 8 devices of the mesh" in copies["message"], copies["message"]
        assert copies["cost"]["note"].endswith("on each of the 8 devices")
        # A donated f32[1024,1024] split over `data` (4).
        [donation] = _found(checked, "JX308", file)
        assert "'x' (float32[1024,1024], 4.0 MiB, 1.0 MiB per device)" in donation["message"]
        assert "nothing (1.0 MiB on each of its 8 devices, the caller" in donation["message"]
        assert donation["cost"]["bytes"] == 2**20
        # Residuals sized as the global arrays, XLA's temporaries per device (both compiles partitioned).
        [residuals] = _found(checked, "JX306", file)
        assert "saves 62.5 MiB (all devices together) of residuals" in residuals["message"]
        # A quarter of the unsharded program's 63 MiB (the batch split 4 ways), the exact figure XLA's.
        temp, checkpointed = map(float, re.search(r"needs (\S+) MiB of temporary memory on each of its 8 devices, "
                                                  r"(\S+) MiB with jax.checkpoint", residuals["message"]).groups())
        assert 14 < temp < 20 and checkpointed < temp - 10, residuals["message"]
    # A replicated parameter: each device holds all of it.
    [replicated] = _found(checked, "JX302", "auto_mesh.py")
    assert "(float32[512,512], 1.0 MiB, rebound" in replicated["message"]
    assert "1048576 bytes of extra device memory per call" in replicated["message"]
    if EXPLICIT:  # a parameter split over `model`: each device holds half
        [split] = _found(checked, "JX302", "explicit_mesh.py")
        assert "(float32[512,512], 1.0 MiB, 0.50 MiB per device, rebound" in split["message"]
        assert "524288 bytes of extra device memory on each device per call" in split["message"]
        assert split["cost"]["bytes"] == 2**19 and "per device" in split["cost"]["note"]


def test_a_cost_from_global_shapes_on_a_sharded_program_says_it_is_the_whole_programs(
        checked: dict[str, Any]) -> None:
    said = "(The cost is the whole sharded program's, all devices together, not per device.)"
    # A sharding constraint in the program: the jaxpr says it is sharded.
    [reduction] = _found(checked, "JX304", "auto_mesh.py")
    assert reduction["message"].endswith(said) and reduction["cost"]["note"].endswith(said[5:-2])
    # A figure that is per device already is left as it is.
    [replicated] = _found(checked, "JX302", "auto_mesh.py")
    assert said not in replicated["message"]
    if EXPLICIT:  # types sharded over Explicit axes
        [invariant] = _found(checked, "JX201", "explicit_mesh.py")
        assert invariant["message"].endswith(said)
    # Unsharded near misses elsewhere keep their costs unqualified (tests/test_jx304.py and the others).


@pytest.mark.slow
def test_fixes_are_verified_on_values_sharded_as_traced(tmp_path: Path) -> None:
    root = _project(tmp_path / "project")
    (root / "jaxlint.toml").write_text("")
    before = {p.name: p.read_text() for p in root.glob("*.py")}
    run = _jaxlint(root, "--devices", "8", "--fix", "--unsafe-fixes")
    assert "Traceback" not in run.stderr, run.stderr
    remaining = {(Path(f["filename"]).name, f["code"]) for f in json.loads(run.stdout)}
    for name, text in before.items():
        fixed = (root / name).read_text()
        assert fixed != text
        for rewritten in ("jax.vmap(pair, in_axes=(None, 0), out_axes=(None, 0))(x, y)",  # JX101, safe
                          "jnp.where(x > 0, jnp.log(jnp.where(x > 0, x, 1.0)), 0.0)",  # JX501
                          "lse = jax.nn.logsumexp(x, axis=-1)", "logp = jax.nn.log_softmax(x, axis=-1)",
                          "p = jax.nn.sigmoid(x)", "jax.nn.log_sigmoid(x)", "jnp.log1p(x)",
                          "return jnp.linalg.solve(m, b)",
                          "lax.scan(jax.checkpoint(body), h, None, length=200)"):  # JX306, safe
            assert rewritten in fixed, (name, rewritten)
        # What has no fix, or only a display-only one, stays reported.
        assert {code for file, code in remaining if file == name} == \
            {"JX201", "JX302", "JX304", "JX307", "JX308", "JX401", "JX704", "JX706"}, (name, remaining)
    assert "fixed" in run.stderr and "rejected" not in run.stderr, run.stderr


# A jitted target sharded by its in_shardings (Auto axes: every supported JAX).
SHARDED_VMAP = """\
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("data", "model"))


def pair(x, y):
    return x + 1, x * y


@functools.partial(jax.jit, in_shardings=(NamedSharding(mesh, P()), NamedSharding(mesh, P("data", None))))
def vmap_first(x, y):
    a, b = jax.vmap(pair, in_axes=(None, 0))(x, y)
    return a[0], b


vmap_first.lower(jax.ShapeDtypeStruct((64,), jnp.float32), jax.ShapeDtypeStruct((64, 64), jnp.float32))
"""


def test_a_compiled_saving_of_a_sharded_jit_is_per_device(tmp_path: Path) -> None:
    # check() starts its workers as subprocesses with the configuration's devices: this process
    # keeps its own.
    (tmp_path / "jaxlint.toml").write_text("devices = 8\n")
    (tmp_path / "sharded_vmap.py").write_text(SHARDED_VMAP)
    result = check([str(tmp_path)], select_rules(["JX101"], None), cost="compiled", config=load_config([str(tmp_path)]))
    [finding] = result.findings
    assert finding.cost.basis == "compiled", finding.cost
    assert "saved per call, per device (on each of the 8 devices of the sharded program)" in finding.cost.note


def test_explain_says_the_compiled_figures_of_a_partitioned_program_are_per_device(tmp_path: Path) -> None:
    root = _project(tmp_path / "project")
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    # No `devices`: the (4, 2) mesh the module writes as literals gives its worker 8.
    run = subprocess.run([sys.executable, "-m", "jaxlint", "explain", "--format", "json", "auto_mesh.py::max_copies"],
                         cwd=root, capture_output=True, text=True, timeout=600, env=env)
    assert run.returncode == 0, run.stdout + run.stderr
    notes = json.loads(run.stdout)["cost"]["notes"]
    assert "The compiled program is partitioned over 8 devices: XLA's figures (cost and memory) are per device, " \
           "one device's share; the estimate counts the whole program, all devices together." in notes
    assert not any("differ only by XLA's rewrites" in note for note in notes)


def test_the_sharding_ops_are_the_value_itself_in_the_primitive_table() -> None:
    assert SHARDING_OPS <= SAME_VALUE and SHARDING_OPS <= primitives.SAME_NUMBERS
    for name in SHARDING_OPS:
        row = traits(name)
        assert row.cost == "data" and row.linear == "all" and row.key.forward == "same"
    assert traits("some_new_collective") == primitives.GENERIC  # the fallback row stays generic


def test_the_partitions_of_a_compiled_module_are_read_from_its_header() -> None:
    body = "\n\nENTRY %main.1 (x: f32[2,8]) -> f32[2,8] {\n  ROOT %x = f32[2,8]{1,0} parameter(0)\n}\n"
    sharded = hlo.parse("HloModule jit_f, is_scheduled=true, entry_computation_layout={(f32[2,8]{1,0})->"
                        "f32[2,8]{1,0}}, num_partitions=8" + body)
    plain = hlo.parse("HloModule jit_f, is_scheduled=true, entry_computation_layout={(f32[2,8]{1,0})->"
                      "f32[2,8]{1,0}}" + body)
    assert (sharded.partitions, plain.partitions) == (8, 1)


# Sharded only by a jit's in_shardings on an Auto mesh: the jaxpr's types say nothing, the jit's
# params do (ir.build places the values the jit reads).
SHARDED_BY_IN_SHARDINGS = """\
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("data", "model"))
rows = NamedSharding(mesh, P("data", None))


def sgd_step(params, batch):
    grads = jax.grad(lambda p: jnp.mean((batch @ p) ** 2))(params)
    return params - 0.1 * grads


sgd = jax.jit(sgd_step, in_shardings=(rows, rows), out_shardings=rows)
sgd.trace(jax.ShapeDtypeStruct((1024, 1024), jnp.float32), jax.ShapeDtypeStruct((64, 1024), jnp.float32))


def train(params, batches):
    for batch in batches:
        params = sgd(params, batch)
    return params
"""


def test_a_jit_s_in_shardings_make_jx302_count_each_device_s_share(tmp_path: Path) -> None:
    (tmp_path / "jaxlint.toml").write_text("devices = 8\n")
    (tmp_path / "sgd.py").write_text(SHARDED_BY_IN_SHARDINGS)
    result = check([str(tmp_path)], select_rules(["JX302"], None), config=load_config([str(tmp_path)]))
    [finding] = result.findings
    # 4 MiB of parameters split over the mesh's 4 rows: each device holds 1 MiB of them.
    assert "4.0 MiB, 1.00 MiB per device" in finding.message, finding.message
    assert "1048576 bytes of extra device memory on each device per call" in finding.message


def test_more_rules_on_a_program_sharded_by_in_shardings(tmp_path: Path) -> None:
    # JX102, JX303, JX503, JX504 and JX505 on values an Auto mesh's in_shardings place, each with a
    # quiet near miss; JX303's safe fix verified on values sharded as traced.
    root = tmp_path / "project"
    root.mkdir()
    shutil.copy(MODULES / "more_rules.py", root)
    (root / "jaxlint.toml").write_text("devices = 8\n")
    run = _jaxlint(root)
    found = sorted((Path(f["filename"]).name, f["code"], f["location"]["row"]) for f in json.loads(run.stdout))
    assert found == case_markers(root), run.stderr
    [gather] = [f for f in json.loads(run.stdout) if f["code"] == "JX303"]
    assert gather["message"].endswith("(The cost is the whole sharded program's, all devices together, not per device.)")
    fixed = _jaxlint(root, "--fix")
    assert "Traceback" not in fixed.stderr and "rejected" not in fixed.stderr, fixed.stderr
    assert "return x[:, 0:4]  # expect: JX303" in (root / "more_rules.py").read_text()
    assert {f["code"] for f in json.loads(fixed.stdout)} == {"JX102", "JX503", "JX504", "JX505"}
