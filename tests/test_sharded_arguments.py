"""Arguments that state a sharding: a hint written as jaxprs print sharded types
(`f32[64@y, 128, 64@x]`), an examples file's ShapeDtypeStruct with a sharding or array placed on a
mesh, and a signature `jaxlint record` wrote. The mesh is the module's own.

The programs need 8 CPU devices: jaxlint runs in a subprocess whose worker gets them from each
module's literal (4, 2) mesh (`devices` unset); the forced device count never reaches this test
process. The modules carry `# expect:` markers as the rule cases do (tests/rules/README.md)."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import types
from pathlib import Path

import jax
import numpy as np
import pytest
from helpers import case_markers, forced_devices_flags, position
from jax.sharding import Mesh

from jaxlint.scan.hints import HintError, describe, mesh_axes, parse_hint, to_abstract
from jaxlint.worker.argsources import ArgumentError
from jaxlint.worker.argsources.hint import module_mesh

AUTO_AXES = """\
try:  # JAX >= 0.6 makes Explicit axes by default; with_sharding_constraint needs Auto ones
    from jax.sharding import AxisType
    AUTO = {"axis_types": (AxisType.Auto, AxisType.Auto)}
except ImportError:  # 0.4.35: every axis is Auto
    AUTO = {}
"""

HEADER = f"""\
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

{AUTO_AXES}
mesh = jax.make_mesh((4, 2), ("x", "y"), **AUTO)
columns = NamedSharding(mesh, P(None, ("x", "y"), None))
"""

# jax-ml/jax#21562 (tests/test_jx310.py) with the operands' sharding stated by the hint, not by
# in_shardings; the same hint without `@axis`, and the compatible twin (one all-to-all), are quiet.
HINTED = HEADER + """

# jaxlint: args a=f32[64@y, 128, 64@x], b=f32[64@y, 128, 64@x]
@jax.jit
def h(a, b):
    d = a + b  # expect: JX310
    return jax.lax.with_sharding_constraint(d, columns)


# jaxlint: args a=f32[64, 128, 64], b=f32[64, 128, 64]
@jax.jit
def unsharded(a, b):
    d = a + b
    return jax.lax.with_sharding_constraint(d, columns)


# jaxlint: args a=f32[64@y, 128, 64@x], b=f32[64@y, 128, 64@x]
@jax.jit
def twin(a, b):
    d = a + b
    return jax.lax.with_sharding_constraint(d, NamedSharding(mesh, P(None, "y", "x")))


# jaxlint: args a=f32[64@z, 128]  # expect: JX905
@jax.jit
def unknown_axis(a):
    return a * 2


# jaxlint: args a=f32[6@x, 128]  # expect: JX905
@jax.jit
def indivisible(a):
    return a * 2


# jaxlint: args a=f32[64@, 128]  # expect: JX905
@jax.jit
def no_axis(a):
    return a * 2


# jaxlint: args a=f32[64@x, 128@x]  # expect: JX905
@jax.jit
def one_axis_twice(a):
    return a * 2
"""

# Two meshes with the axes the hint names: jaxlint cannot tell which one is meant.
SEVERAL = HEADER + """\
other = jax.make_mesh((2, 4), ("x", "y"), **AUTO)


# jaxlint: args a=f32[64@(x,y), 128]  # expect: JX905
@jax.jit
def ambiguous(a):
    return jnp.sum(a)
"""

# Explicit axes (JAX >= 0.7's default): the traced types carry the hint's shardings.
EXPLICIT = """\
import jax
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((4, 2), ("x", "y"))


# jaxlint: args a=f32[64@y, 128, 64@x], b=f32[64@y, 128, 64@x]
@jax.jit
def h(a, b):
    d = a + b  # expect: JX310
    return jax.sharding.reshard(d, NamedSharding(mesh, P(None, ("x", "y"), None)))
"""

# The repro's operands from an examples file: ShapeDtypeStructs with a sharding, and arrays placed
# on the mesh (a jit without in_shardings: nothing else shards them).
REGISTERED = HEADER + """\
blocks = NamedSharding(mesh, P("y", None, "x"))


@jax.jit
def from_structs(a, b):
    d = a + b  # expect: JX310
    return jax.lax.with_sharding_constraint(d, columns)


@jax.jit
def from_arrays(a, b):
    d = a * b  # expect: JX310
    return jax.lax.with_sharding_constraint(d, columns)
"""

EXAMPLES = """\
import jax
import jax.numpy as jnp

import jaxlint
from registered import blocks, from_arrays, from_structs

X = jax.ShapeDtypeStruct((64, 128, 64), jnp.float32, sharding=blocks)
jaxlint.example(from_structs, X, X)
A = jax.device_put(jnp.ones((64, 128, 64)), blocks)
jaxlint.example(from_arrays, A, A)
"""

MODULES = {"hinted.py": HINTED, "several.py": SEVERAL, "registered.py": REGISTERED,
           "tests/jaxlint_examples.py": EXAMPLES}
if hasattr(jax.sharding, "reshard"):  # not on 0.4.35, which has no Explicit axes
    MODULES["explicit.py"] = EXPLICIT


def test_a_hint_names_the_mesh_axes_of_a_dimension_as_jaxprs_print_them() -> None:
    spec = parse_hint("x=f32[512@data, 512], w=f32[512, 512 @ (data, model)], k=key[8@model], n=3")
    assert spec["x"].shards == (("data",), ()) and spec["w"].shards == ((), ("data", "model"))
    assert spec["k"].shards == (("model",),) and parse_hint("x=f32[8, 4]")["x"].shards == ()
    assert describe(spec) == "x=f32[512@data, 512], w=f32[512, 512@(data,model)], k=key[8@model], n=3"
    assert parse_hint(describe(spec)) == spec and mesh_axes(spec) == ["data", "model"]
    placed = []
    values = to_abstract(parse_hint("x=f32[8@data, n]"), lambda struct, shards: placed.append(shards) or struct)
    assert placed == [(("data",), ())] and values["x"].shape[0] == 8
    with pytest.raises(HintError, match="names mesh axes, but no mesh is known here"):
        to_abstract(parse_hint("x=f32[8@data]"))


@pytest.mark.parametrize("text,said", [
    ("x=f32[8@]", "expected a mesh axis name or several in parentheses after '@' in x"),
    ("x=f32[8@()]", "after '@' in x, e.g. f32[512@data, 512]"),
    ("x=f32[8@(a b)]", "got '(a b)'"),
    ("x=f32[8@1]", "got '1'"),
    ("x=f32[8@a@b]", "got 'a@b'"),
    ("x=f32[@data]", "missing the size before '@' in x"),
    ("x=(f32[8@a, 4@a],)", "mesh axis 'a' splits x[0] twice"),
])
def test_a_malformed_mesh_axis_says_what_is_wrong(text: str, said: str) -> None:
    with pytest.raises(HintError, match=re.escape(said)):
        parse_hint(text)


def test_the_mesh_is_the_modules_one_mesh_with_the_hints_axes() -> None:
    one = np.array(jax.devices()[:1])
    mesh, rows = Mesh(one.reshape(1, 1), ("data", "model")), Mesh(one, ("rows",))
    module = types.ModuleType("m")
    module.mesh, module.alias, module.rows = mesh, mesh, rows  # one mesh under two names is one mesh
    assert module_mesh(module, ["model"]) is mesh and module_mesh(module, ["rows"]) is rows
    with pytest.raises(ArgumentError, match=r"no module-level mesh has them all \(mesh has 'data', 'model'; rows has"):
        module_mesh(module, ["data", "rows"])
    module.other = Mesh(one.reshape(1, 1), ("model", "data"))
    with pytest.raises(ArgumentError, match=r"several module-level meshes have \(mesh, other\)"):
        module_mesh(module, ["data"])
    with pytest.raises(ArgumentError, match="the module defines no mesh"):
        module_mesh(types.ModuleType("empty"), ["data"])


def environment() -> dict[str, str]:
    """This process's environment without a forced device count or recording settings."""
    skip = ("XLA_FLAGS", "JAXLINT_RECORD", "PYTEST_ADDOPTS", "JAXLINT_OUTPUT_FORMAT", "PYTEST_XDIST_WORKER")
    return {k: v for k, v in os.environ.items() if k not in skip} | {"JAX_PLATFORMS": "cpu"}


def check(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "jaxlint", "check", "--no-cache", "--jobs", "1",
                           "--output-format", "json", "."],
                          cwd=root, capture_output=True, text=True, timeout=600, env=environment())


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess]:
    root = tmp_path_factory.mktemp("sharded_arguments")
    (root / "jaxlint.toml").write_text('examples = ["tests/jaxlint_examples.py"]\n')
    (root / "tests").mkdir()
    for name, source in MODULES.items():
        (root / name).write_text(source)
    return root, check(root)


def findings_in(run: subprocess.CompletedProcess, name: str) -> list[dict]:
    return [f for f in json.loads(run.stdout) if Path(f["filename"]).name == name]


def test_the_findings_are_the_marked_lines(checked: tuple[Path, subprocess.CompletedProcess]) -> None:
    root, run = checked
    assert run.returncode == 1, run.stdout + run.stderr
    found = sorted((Path(f["filename"]).relative_to(root).as_posix(), f["code"], f["location"]["row"])
                   for f in json.loads(run.stdout))
    assert found == case_markers(root), run.stdout
    # Every function whose arguments could be placed was traced: the quiet ones are quiet because the rules are.
    traced = 5 + ("explicit.py" in MODULES)
    assert f"linted {traced} of {traced + 5} JAX functions" in run.stderr, run.stderr


def test_a_sharded_hint_is_compiled_with_its_sharding(checked: tuple[Path, subprocess.CompletedProcess]) -> None:
    _, run = checked
    [finding] = [f for f in findings_in(run, "hinted.py") if f["code"] == "JX310"]
    assert finding["location"]["row"] == position(HINTED, "a + b")[0]
    assert "from P('y', None, 'x') to P(None, ('x', 'y'), None)" in finding["message"]


def test_a_sharded_hint_that_cannot_be_placed_says_why(checked: tuple[Path, subprocess.CompletedProcess]) -> None:
    _, run = checked
    said = {f["location"]["row"]: f["message"] for f in findings_in(run, "hinted.py") + findings_in(run, "several.py")
            if f["code"] == "JX905"}
    assert "mesh axis 'z', but no module-level mesh has it (mesh has 'x', 'y')" in said[position(HINTED, "64@z")[0]]
    assert ("f32[6,128]: dimension 0 (size 6) cannot be split over mesh axis 'x' (4 pieces)"
            in said[position(HINTED, "6@x")[0]])
    assert "expected a mesh axis name or several in parentheses after '@' in a" in said[position(HINTED, "64@,")[0]]
    assert "mesh axis 'x' splits a twice" in said[position(HINTED, "64@x, 128@x")[0]]
    assert ("mesh axes 'x', 'y', which several module-level meshes have (mesh, other)"
            in said[position(SEVERAL, "64@(x,y)")[0]])


RECORDED_MODEL = HEADER + """\
blocks = NamedSharding(mesh, P("y", None, "x"))


def combine(a, b):
    d = a - b  # expect: JX310
    return jax.lax.with_sharding_constraint(d, columns)


def scale(a):
    return jnp.tanh(a)
"""

RECORDED_TESTS = """\
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from model import blocks, combine, scale


def test_combine():
    a = jax.device_put(jnp.ones((64, 128, 64)), blocks)
    assert combine(a, a).shape == (64, 128, 64)


def test_scale_on_a_mesh_of_the_tests_own():
    rows = Mesh(np.array(jax.devices()).reshape(8), ("rows",))
    assert scale(jax.device_put(jnp.ones((8, 4)), NamedSharding(rows, P("rows")))).shape == (8, 4)
"""


def test_jaxlint_record_writes_a_sharding_the_check_can_place_again(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.jaxlint]\n")
    (tmp_path / "model.py").write_text(RECORDED_MODEL)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_model.py").write_text(RECORDED_TESTS)
    # The tests run with 8 devices (the recording's pytest process); the check infers them.
    env = environment() | {"XLA_FLAGS": forced_devices_flags(8)}
    run = subprocess.run([sys.executable, "-m", "jaxlint", "record", "--", sys.executable, "-m", "pytest", "-q",
                          "-p", "no:cacheprovider", "tests/"], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    functions = json.loads((tmp_path / ".jaxlint" / "signatures.json").read_text())["functions"]
    assert functions["model.py::combine"]["signatures"] == [{"a": "f32[64@y,128,64@x]", "b": "f32[64@y,128,64@x]"}]
    # A mesh the module does not hold cannot be found again: the array is recorded unsharded.
    assert functions["model.py::scale"]["signatures"] == [{"a": "f32[8,4]"}]
    run = check(tmp_path)
    found = sorted((Path(f["filename"]).name, f["code"], f["location"]["row"]) for f in json.loads(run.stdout))
    assert found == case_markers(tmp_path / "model.py"), run.stdout + run.stderr


# explain's communication section for a layer whose arguments' shardings only the hint states (the
# older mesh spelling, Auto axes on every JAX): w is split along its contracting dimension.
LAYER = """\
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh

mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("data", "model"))


# jaxlint: args x=f32[512@data, 512], w=f32[512@data, 512]
@jax.jit
def layer(x, w):
    return jnp.tanh(x @ w)
"""


def test_explain_shows_the_communication_a_sharded_hint_causes(tmp_path: Path) -> None:
    path = tmp_path / "layer.py"
    path.write_text(LAYER)
    run = subprocess.run([sys.executable, "-m", "jaxlint", "explain", f"{path}::layer", "--format", "json"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=600, env=environment())
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    # The arguments line states the hint's shardings as the hint wrote them.
    assert [a["abstract"] for a in report["arguments"]["signature"]] == ["f32[512@data,512]"] * 2
    section = report["communication"]
    assert section["devices"] == 8 and section["arguments"] == ["P('data', None)", "P('data', None)"]
    [gather] = section["collectives"]
    assert (gather["kind"], gather["line"], gather["shape"]) == ("all-gather", position(LAYER, "x @ w")[0], "f32[512,512]")
    assert gather["axes"] == ["data"]
    memory = section["memory"]
    assert memory["per_device"]["argument_bytes"] * 4 == memory["unsharded"]["argument_bytes"] == 2 * 512 * 512 * 4
