"""JX310 involuntary-full-rematerialization: the SPMD partitioner's warning, captured from the
compile and reported at the user's line, with the shardings as PartitionSpecs.

The programs need 8 CPU devices: `jaxlint check` runs in a subprocess whose worker gets them from
each module's literal mesh shape; the forced device count never reaches this test process. The
modules carry `# expect:` markers as the rule cases do (tests/rules/README.md); test_rule_cases.py
exempts JX310 for that reason."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import jax
import pytest
from helpers import case_markers, forced_devices_flags, position

from jaxlint.ir import partitioner

AUTO_AXES = """\
try:  # JAX >= 0.6 makes Explicit axes by default; with_sharding_constraint needs Auto ones
    from jax.sharding import AxisType
    AUTO = {"axis_types": (AxisType.Auto, AxisType.Auto)}
except ImportError:  # 0.4.35: every axis is Auto
    AUTO = {}
"""

# jax-ml/jax#21562: operands sharded P('y', None, 'x') on a (4, 2) mesh, the sum constrained to
# P(None, ('x', 'y'), None). JAX 0.10.2 names the add (line and column); 0.4.35 names a copy of
# the jit's parameter with no user frame, and the finding goes to the line whose value the
# constraint reshards: the same line.
REPRO = f"""\
from functools import partial

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

{AUTO_AXES}
mesh = jax.make_mesh((4, 2), ("x", "y"), **AUTO)
blocks = NamedSharding(mesh, P("y", None, "x"))
X = jax.ShapeDtypeStruct((64, 128, 64), jnp.float32)


@partial(jax.jit, in_shardings=(blocks, blocks))
def h(a, b):
    d = a + b  # expect: JX310
    return jax.lax.with_sharding_constraint(d, NamedSharding(mesh, P(None, ("x", "y"), None)))


h.lower(X, X)
"""

# Its compatible twin: `y` stays on a dimension, `x` moves across; XLA reshards with one
# all-to-all (checked on 0.10.2 and 0.4.35) and prints no warning.
TWIN = REPRO.replace('P(None, ("x", "y"), None)', 'P(None, "y", "x")').replace("  # expect: JX310", "")

# A plain data-parallel step: the batch sharded, the weights replicated; gradients all-reduced.
DATA_PARALLEL = """\
from functools import partial

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((8,), ("data",))
batch = NamedSharding(mesh, P("data"))
replicated = NamedSharding(mesh, P())


def loss(w, x, y):
    return jnp.mean((jnp.tanh(x @ w) - y) ** 2)


@partial(jax.jit, in_shardings=(replicated, batch, batch), out_shardings=replicated)
def step(w, x, y):
    return w - 0.1 * jax.grad(loss)(w, x, y)


step.lower(jax.ShapeDtypeStruct((64, 16), jnp.float32), jax.ShapeDtypeStruct((256, 64), jnp.float32),
           jax.ShapeDtypeStruct((256, 16), jnp.float32))
"""

# The same repro with Explicit mesh axes (JAX >= 0.7's default): the types carry the shardings and
# `reshard` asks for the target.
EXPLICIT = """\
from functools import partial

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((4, 2), ("x", "y"))
blocks = NamedSharding(mesh, P("y", None, "x"))
X = jax.ShapeDtypeStruct((64, 128, 64), jnp.float32)


@partial(jax.jit, in_shardings=(blocks, blocks))
def h(a, b):
    d = a + b  # expect: JX310
    return jax.sharding.reshard(d, NamedSharding(mesh, P(None, ("x", "y"), None)))


h.lower(X, X)
"""

# The repro with the operands' sharding given only by the arguments: a jit without in_shardings,
# lowered with sharded ShapeDtypeStructs, and called at import with arrays placed on the mesh.
ARGUMENTS = REPRO.replace("@partial(jax.jit, in_shardings=(blocks, blocks))", "@jax.jit").replace(
    "X = jax.ShapeDtypeStruct((64, 128, 64), jnp.float32)",
    "X = jax.ShapeDtypeStruct((64, 128, 64), jnp.float32, sharding=blocks)")
PLACED = ARGUMENTS.replace("h.lower(X, X)", "a = jax.device_put(jnp.ones((64, 128, 64)), blocks)\nh(a, a)")

# Shardings that disagree inside a scan body: each replication runs once per iteration. XLA names
# the constraints' own operations on 0.10.2; on 0.4.35 the last one has no warning of its own.
LOOP = f"""\
from functools import partial

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

{AUTO_AXES}
mesh = jax.make_mesh((4, 2), ("x", "y"), **AUTO)
blocks = NamedSharding(mesh, P("y", None, "x"))
columns = NamedSharding(mesh, P(None, ("x", "y"), None))


@partial(jax.jit, in_shardings=(blocks,))
def steps(c):
    def body(c, _):
        e = jnp.tanh(c) * 2.0  # expect: JX310
        e = jax.lax.with_sharding_constraint(e, columns)  # expect: JX310
        return jax.lax.with_sharding_constraint(e + 1.0, blocks), None  # expect(jax>=0.7): JX310

    return jax.lax.scan(body, c, None, length=10)[0]


steps.lower(jax.ShapeDtypeStruct((64, 128, 64), jnp.float32))
"""

MODULES = {"repro.py": REPRO, "loop.py": LOOP, "twin.py": TWIN, "data_parallel.py": DATA_PARALLEL, "arguments.py": ARGUMENTS,
           "placed.py": PLACED}
if hasattr(jax.sharding, "reshard"):  # not on 0.4.35, which has no Explicit axes
    MODULES["explicit.py"] = EXPLICIT

# The two dialects of the warning, as XLA printed them for REPRO's program (JAX 0.10.2, 0.4.35).
NEW_LINE = (
    "W1204 16:30:53.712146   28965 spmd_partitioner.cc:656] [SPMD] Involuntary full rematerialization. "
    "The compiler cannot go from sharding {devices=[2,1,4]<=[4,2]T(1,0)} to {devices=[1,8,1]<=[8]} "
    "efficiently for HLO operation %add.2 = f32[4,16,2]{2,1,0} add(%jit_h_.2, %jit_h_.3), "
    "sharding={devices=[2,1,4]<=[4,2]T(1,0)}, metadata={op_name=\"jit(jaxpr_as_fun)/jit(h)/add\" "
    "stack_frame_id=3}. As the last resort, SPMD will replicate the tensor and then partition it to obtain "
    "the target sharding, which is inefficient. This issue will be fixed by Shardy partitioner in the "
    "future, which is tracked in b/433785288. Contact Shardy or XLA team for help.")
OLD_LINE = (
    "2026-12-04 16:31:29.762508: E external/xla/xla/service/spmd/spmd_partitioner.cc:613] [spmd] "
    "Involuntary full rematerialization. The compiler was not able to go from sharding "
    "{devices=[2,1,4]<=[4,2]T(1,0)} to {devices=[1,8,1]<=[8]} without doing a full rematerialization of "
    "the tensor for HLO operation: %copy.2 = f32[4,16,2]{2,1,0} copy(f32[4,16,2]{2,1,0} %param), "
    "sharding={devices=[2,1,4]<=[4,2]T(1,0)}, metadata={op_name=\"jit(<unnamed wrapped function>)/"
    "jit(main)/pjit\" source_file=\"/tmp/jx310/repro2.py\" source_line=21}. You probably want to enrich "
    "the sharding annotations to prevent this from happening.")


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess]:
    root = tmp_path_factory.mktemp("jx310")
    (root / "jaxlint.toml").write_text("")
    for name, source in MODULES.items():
        (root / name).write_text(source)
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    run = subprocess.run([sys.executable, "-m", "jaxlint", "check", "--no-cache", "--jobs", "1",
                          "--output-format", "json", "."],
                         cwd=root, capture_output=True, text=True, timeout=600, env=env)
    return root, run


def test_the_findings_are_the_marked_lines(checked: tuple[Path, subprocess.CompletedProcess]) -> None:
    root, run = checked
    assert run.returncode == 1, run.stdout + run.stderr
    found = sorted((Path(f["filename"]).name, f["code"], f["location"]["row"]) for f in json.loads(run.stdout))
    assert found == case_markers(root), run.stdout
    # Every function traced: the twin and the data-parallel step are quiet because the rule is.
    assert re.search(r"linted (\d+) of \1 JAX functions", run.stderr), run.stderr


def test_the_message_names_the_shardings_the_bytes_and_the_fix(checked: tuple[Path, subprocess.CompletedProcess]) -> None:
    _, run = checked
    [finding] = [f for f in json.loads(run.stdout) if Path(f["filename"]).name == "repro.py"]
    line, column = position(REPRO, "a + b")
    assert (finding["location"]["row"], finding["location"]["column"]) == (line, column + 1)
    message = finding["message"]
    assert "from P('y', None, 'x') to P(None, ('x', 'y'), None)" in message
    assert "(f32[64,128,64])" in message and "all 2.0 MiB" in message
    assert finding["cost"]["bytes"] == 64 * 128 * 64 * 4
    assert "with_sharding_constraint" in message and "mesh axes agree" in message
    # The warning was read from the compile: the user sees the finding, not XLA's log line.
    assert "spmd_partitioner" not in run.stdout + run.stderr


def test_a_replication_in_a_loop_body_counts_its_iterations(checked: tuple[Path, subprocess.CompletedProcess]) -> None:
    _, run = checked
    findings = [f for f in json.loads(run.stdout) if Path(f["filename"]).name == "loop.py"]
    assert findings and all("replicates it in a loop body, 10 times per call" in f["message"] for f in findings)
    # The operation XLA names is said in the user's terms: the call of with_sharding_constraint.
    constraint = position(LOOP, "e = jax.lax.with_sharding_constraint")[0]
    assert any(f["location"]["row"] == constraint and "for the with_sharding_constraint (" in f["message"]
               for f in findings)


@pytest.mark.parametrize("line", [NEW_LINE, OLD_LINE], ids=["jax-0.10", "jax-0.4.35"])
def test_both_dialects_of_the_warning_are_parsed(line: str) -> None:
    warning = partitioner.parse(line)
    assert warning is not None
    assert (warning.source, warning.target) == ("{devices=[2,1,4]<=[4,2]T(1,0)}", "{devices=[1,8,1]<=[8]}")
    assert warning.shard_shape == "f32[4,16,2]"
    assert warning.operation == ("add.2" if line is NEW_LINE else "copy.2")
    assert warning.metadata.get("stack_frame_id") == ("3" if line is NEW_LINE else None)
    assert warning.metadata.get("source_line") == (None if line is NEW_LINE else "21")
    assert partitioner.parse("W1204 spmd_partitioner.cc:656] something else") is None
    assert partitioner.parse("Involuntary full rematerialization, cut short") is None


def test_only_a_program_sharded_over_several_devices_is_compiled_for_the_warning() -> None:
    import jax.numpy as jnp
    import numpy as np
    from jax.sharding import Mesh, NamedSharding
    from jax.sharding import PartitionSpec as P

    from jaxlint.ir import sharded

    assert not sharded.is_partitioned(jax.make_jaxpr(lambda x: jnp.tanh(x) * 2)(jnp.ones(4)))
    # This process has one device: a mesh over it shards nothing, constraint or not.
    one = NamedSharding(Mesh(np.array(jax.devices()[:1]), ("data",)), P("data"))
    assert not sharded.is_partitioned(jax.make_jaxpr(lambda x: jax.lax.with_sharding_constraint(x * 2, one))(jnp.ones(4)))
    assert sharded.input_shardings(jax.make_jaxpr(lambda x: x)(jnp.ones(4))) is None


def test_the_whole_shape_is_the_shard_times_its_tiles() -> None:
    assert partitioner.full_shape("f32[4,16,2]", "{devices=[2,1,4]<=[4,2]T(1,0)}") == "f32[8,16,8]"
    assert partitioner.full_shape("bf16[2,16]", "{devices=[4,1,2]<=[8] last_tile_dim_replicate}") == "bf16[8,16]"
    assert partitioner.full_shape("f32[3,5]", "{replicated}") == "f32[3,5]"


def test_a_compile_keeps_the_warnings_and_gives_back_everything_else(capfd: pytest.CaptureFixture[str]) -> None:
    with partitioner.captured_stderr() as caught:
        os.write(2, (NEW_LINE + "\n").encode())
        os.write(2, b"E1204 another message of the compile\n")
        assert caught == []  # filled when the block is left
    assert caught == [NEW_LINE]
    assert capfd.readouterr().err == "E1204 another message of the compile\n"


# Under `pytest --jaxlint` the function is traced again with the test's own arrays, in the test's
# process and with its devices: the operands' sharding comes from the arrays the test placed.
PLUGIN_MODEL = f"""\
import jax
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

{AUTO_AXES}
mesh = jax.make_mesh((4, 2), ("x", "y"), **AUTO)
blocks = NamedSharding(mesh, P("y", None, "x"))


def combine(a, b):
    d = a - b  # expect: JX310
    return jax.lax.with_sharding_constraint(d, NamedSharding(mesh, P(None, ("x", "y"), None)))


def moved(a, b):
    d = a - b
    return jax.lax.with_sharding_constraint(d, NamedSharding(mesh, P(None, "y", "x")))
"""

PLUGIN_TESTS = """\
import jax
import jax.numpy as jnp

from model import blocks, combine, moved


def test_combine():
    a = jax.device_put(jnp.ones((64, 128, 64)), blocks)
    assert combine(a, a).shape == (64, 128, 64)


def test_moved():
    a = jax.device_put(jnp.ones((64, 128, 64)), blocks)
    assert moved(a, a).shape == (64, 128, 64)
"""


def test_pytest_jaxlint_reports_it_with_the_tests_devices_and_arrays(tmp_path: Path) -> None:
    (tmp_path / "model.py").write_text(PLUGIN_MODEL)
    (tmp_path / "test_model.py").write_text(PLUGIN_TESTS)
    (tmp_path / "pyproject.toml").write_text("[tool.jaxlint]\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "JAXLINT_OUTPUT_FORMAT",
                                                             "PYTEST_XDIST_WORKER", "JAXLINT_RECORD")}
    env |= {"XLA_FLAGS": forced_devices_flags(8), "JAX_PLATFORMS": "cpu"}
    run = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--jaxlint", "--jaxlint-report",
                          "report.json", "-q"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert "2 passed" in run.stdout, run.stdout + run.stderr
    found = sorted(("model.py", f["code"], f["location"]["row"]) for f in
                   json.loads((tmp_path / "report.json").read_text()))
    assert found == case_markers(tmp_path / "model.py"), run.stdout
