"""The rules test_sharded_rules.py does not try, on sharded programs: each one's trigger from
tests/rules/ and a quiet near miss, over a (4, 2) mesh of Auto axes (tests/data/sharded/rest_auto.py,
every supported JAX) and of Explicit axes (rest_explicit.py, newer JAX only), `# noqa` on sharded
findings (rest_auto_noqa.py); fixes verified on values with the same device count.

jaxlint runs in a subprocess with `devices = 8` (the forced device count reaches only its workers);
one check, whose JSON the tests read, and one fixing run. The run-time rules JX205 and JX309 on
programs run under `jaxlint run` (below)."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import case_markers, forced_devices_flags
from test_sharded_rules import EXPLICIT, MODULES, _jaxlint

WHOLE = "(The cost is the whole sharded program's, all devices together, not per device.)"


def _project(root: Path, names: tuple[str, ...]) -> Path:
    root.mkdir()
    for name in names:
        if EXPLICIT or name != "rest_explicit.py":
            shutil.copy(MODULES / name, root)
    return root


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = _project(tmp_path_factory.mktemp("sharded_rest") / "project",
                    ("rest_auto.py", "rest_explicit.py", "rest_auto_noqa.py"))
    (root / "jaxlint.toml").write_text("devices = 8\n")
    run = _jaxlint(root)
    assert run.returncode == 1, run.stdout + run.stderr
    return {"root": root, "findings": json.loads(run.stdout), "stderr": run.stderr}


def _files() -> tuple[str, ...]:
    return ("rest_auto.py", "rest_explicit.py") if EXPLICIT else ("rest_auto.py",)


def _found(checked: dict[str, Any], code: str, file: str) -> list[dict[str, Any]]:
    return [f for f in checked["findings"] if f["code"] == code and Path(f["filename"]).name == file]


def test_the_remaining_triggers_are_reported_and_their_near_misses_are_quiet(checked: dict[str, Any]) -> None:
    found = sorted((Path(f["filename"]).name, f["code"], f["location"]["row"]) for f in checked["findings"])
    assert found == case_markers(checked["root"]), checked["stderr"]
    assert "Traceback" not in checked["stderr"] and not any(f["code"].startswith("JX9") for f in checked["findings"])


def test_a_host_callback_s_gather_to_one_device_is_no_involuntary_rematerialization(
        checked: dict[str, Any]) -> None:
    # print_outside_loop: XLA's partitioner warns while moving the sharded operand of a
    # jax.debug.print and an io_callback to {maximal device=0}; that is how a callback runs.
    assert not [f for f in checked["findings"] if f["code"] == "JX310"]


def test_a_value_bound_passes_through_sharding_ops(checked: dict[str, Any]) -> None:
    for file in _files():  # with_sharding_constraint, reshard
        [overflow] = _found(checked, "JX507", file)
        assert "reaches 9,999,900,000 (from operands 99,999 and 100,000)" in overflow["message"]


def test_a_captured_constant_is_held_by_each_device(checked: dict[str, Any]) -> None:
    for file in _files():
        [constant] = _found(checked, "JX301", file)
        assert constant["message"].endswith("the executable keeps its own copy on each device of the sharded "
                                            "program: the cost is per device, each device holds all of it.")
        assert constant["cost"]["note"].endswith("per device: each device of the sharded program holds all of it")
        assert WHOLE not in constant["message"]


def test_a_batched_while_s_flops_are_the_whole_program_s(checked: dict[str, Any]) -> None:
    for file in _files():
        [loop] = _found(checked, "JX103", file)
        assert loop["message"].endswith(WHOLE), loop["message"]
        assert loop["cost"]["note"].endswith(WHOLE[5:-2])


def test_noqa_silences_a_sharded_finding(checked: dict[str, Any]) -> None:
    [unused] = _found(checked, "JX800", "rest_auto_noqa.py")
    assert "`JX502`" in unused["message"]
    assert [f["location"]["row"] for f in _found(checked, "JX301", "rest_auto_noqa.py")] == [unused["location"]["row"]]


@pytest.mark.slow
def test_fixes_are_verified_on_values_sharded_as_traced(tmp_path: Path) -> None:
    root = _project(tmp_path / "project", ("rest_auto.py", "rest_explicit.py"))
    (root / "jaxlint.toml").write_text("")
    before = {p.name: p.read_text() for p in root.glob("*.py")}
    run = _jaxlint(root, "--devices", "8", "--fix", "--unsafe-fixes")
    assert "Traceback" not in run.stderr, run.stderr
    remaining = {(Path(f["filename"]).name, f["code"]) for f in json.loads(run.stdout)}
    hoisted = {"rest_auto.py": "    add_one_jit_82 = jax.jit(add_one, out_shardings=rows)\n    for _ in range(3):\n"
                               "        x = add_one_jit_82(x)  # expect: JX203\n",
               "rest_explicit.py": "    add_one_jit = jax.jit(add_one)\n    for _ in range(3):\n"
                                   "        x = add_one_jit(x)  # expect: JX203\n"}
    for name, text in before.items():
        fixed = (root / name).read_text()
        for rewritten in (hoisted[name], "    return resize(x, (2, 3))  # expect: JX204",  # JX204, unsafe
                          "\ntotal = jnp.float32(0.0)\n"):  # JX206
            assert rewritten in fixed, (name, rewritten, fixed)
        assert {code for file, code in remaining if file == name} == \
            {"JX103", "JX202", "JX301", "JX305", "JX502", "JX506", "JX507", "JX508", "JX601", "JX602"}, \
            (name, remaining)
    assert "fixed" in run.stderr and "rejected" not in run.stderr, run.stderr


# JX205 is a run-time rule: a program run under `jaxlint run` on 8 CPU devices (set by the program
# before JAX starts), calling one jitted step with its input placed four ways.
RESHARDED = '''\
import os
os.environ["XLA_FLAGS"] = "XLA_FLAGS_8"
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

MESH


@jax.jit
def step(w, x):
    return w + x.sum()


w = jnp.ones(16)
for spec in (P("data", None), P(None, "model"), P(("data", "model"), None), P()):
    w = step(w, jax.device_put(jnp.ones((8, 16)), NamedSharding(mesh, spec)))  # expect JX205
print("trained", float(w.sum()))
'''
AUTO = 'mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("data", "model"))'
EXPLICIT_MESH = 'mesh = jax.make_mesh((4, 2), ("data", "model"))\njax.sharding.set_mesh(mesh)'


def _recompiles(tmp_path: Path, mesh: str) -> list[dict[str, Any]]:
    from test_jx205 import environment, recompiles

    (tmp_path / "pyproject.toml").write_text("[tool.jaxlint]\n")
    (tmp_path / "script.py").write_text(RESHARDED.replace("MESH", mesh).replace("XLA_FLAGS_8", forced_devices_flags(8)))
    run = subprocess.run([sys.executable, "-m", "jaxlint", "run", "--no-cache", "--output-format", "json",
                          "-o", "report.json", "--", sys.executable, "script.py"], cwd=tmp_path,
                         env=environment(), capture_output=True, text=True, timeout=600)
    assert run.stdout.startswith("trained "), run.stdout + run.stderr
    assert "Compiling" not in run.stderr + run.stdout  # the records jax_log_compiles raised are dropped
    return list(recompiles(tmp_path).values())


def test_a_recompile_only_an_input_s_sharding_caused_on_an_auto_mesh_is_recognized(tmp_path: Path) -> None:
    # Auto axes: the trace is the same (no tracing-cache miss), only the compile JAX logs says why.
    [finding] = _recompiles(tmp_path, AUTO)
    assert finding["location"]["row"] == 19 and "compiled 4 times" in finding["message"], finding["message"]
    assert "input 1 came with " in finding["message"] and \
        "P(None, 'model'), P(('data', 'model'), None), P()): place the argument on the same devices, " \
        "with the same sharding, on every call" in finding["message"], finding["message"]


@pytest.mark.skipif(not EXPLICIT, reason="Explicit axes are newer than this JAX")
def test_a_recompile_on_explicit_axes_names_the_sharding_once(tmp_path: Path) -> None:
    # The shardings are in the types: JAX's explanation names each; one cause, not one per pair.
    [finding] = _recompiles(tmp_path, EXPLICIT_MESH)
    assert "`x` came with 4 shardings (f32[8@data,16], f32[8,16@model], f32[8@(data,model),16], f32[8,16]): " \
           "place the argument on the same devices, with the same sharding, on every call. Each" \
        in finding["message"], finding["message"]
    assert "shape" not in finding["message"]


# JX309, run-time too: a loss converted to a Python float on every step of a loop calling a jitted
# step whose batch is split over `data` (few steps: each runs an all-reduce on 8 CPU devices).
SYNCED = '''\
import os
os.environ["XLA_FLAGS"] = "XLA_FLAGS_8"
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("data", "model"))


@jax.jit
def step(w, x):
    return w * 0.99, jnp.mean((x @ w) ** 2)


w = jax.device_put(jnp.ones((16, 16)), NamedSharding(mesh, P()))
x = jax.device_put(jnp.ones((8, 16)), NamedSharding(mesh, P("data", None)))
for i in range(25):
    w, loss = step(w, x)
    print(f"{i} {float(loss):.3f}")  # expect JX309
for i in range(60):
    w, loss = step(w, x)
    if i % 30 == 0:
        print(float(loss))  # every 30th step: quiet
print("trained", float(w.sum()))
'''


def test_a_host_sync_on_each_step_of_a_sharded_loop_is_reported(tmp_path: Path) -> None:
    from test_jx205 import environment

    (tmp_path / "pyproject.toml").write_text('[tool.jaxlint]\nselect = ["JX309"]\n')
    (tmp_path / "script.py").write_text(SYNCED.replace("XLA_FLAGS_8", forced_devices_flags(8)))
    run = subprocess.run([sys.executable, "-m", "jaxlint", "run", "--no-cache", "--output-format", "json",
                          "-o", "report.json", "--", sys.executable, "script.py"], cwd=tmp_path,
                         env=environment(), capture_output=True, text=True, timeout=600)
    assert "trained " in run.stdout, run.stdout + run.stderr
    found = [(f["code"], f["location"]["row"]) for f in json.loads((tmp_path / "report.json").read_text())]
    assert found == [("JX309", 21)], found
