"""`jaxlint explain`'s communication section (issue 28, item 2) on programs partitioned over 8
simulated CPU devices: the collectives of the compiled program by kind, source line, mesh axes and
runs per call, and the per-device memory.

jaxlint runs in a subprocess (as in tests/test_devices.py): its worker gets the forced device count
(from the module's literal mesh shape, or --devices), never this test process."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from helpers import write

from jaxlint.explain import communication, hlomap
from jaxlint.explain.html import render_html
from jaxlint.explain.terminal import render
from jaxlint.ir import hlo
from jaxlint.ir.replica_groups import device_groups, mesh_axes_of_groups, mesh_axes_of_pairs

SCHEMA = json.loads((Path(__file__).parent / "data" / "explain-schema.json").read_text())
MIB = 2**20

# The older spelling of a (4, 2) mesh, with Auto axes on every supported JAX: the worker starts
# with 8 devices from its literal shape (`devices` is unset).
SHARDED = """\
import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("data", "model"))
rows = NamedSharding(mesh, P("data", None))
X = jax.ShapeDtypeStruct((512, 512), jnp.float32)


def layer(x, w):
    h = jnp.tanh(x @ w)

    def body(c, _):
        return c - 0.1 * jnp.mean(c), None

    h, _ = lax.scan(body, h, None, length=100)
    return h


# w sharded along its contracting dimension: gathered whole for the matmul.
layer_sharded = jax.jit(layer, in_shardings=(rows, rows), out_shardings=rows)
layer_sharded.lower(X, X)


def reshard(x):
    return lax.with_sharding_constraint(x * 2, NamedSharding(mesh, P(None, "data")))


reshard_sharded = jax.jit(reshard, in_shardings=rows)
reshard_sharded.lower(X)


def roll(x):
    return jnp.roll(x, 1, axis=0)


roll_sharded = jax.jit(roll, in_shardings=rows, out_shardings=rows)
roll_sharded.lower(X)


def scale(x):
    return jnp.exp(x) * 2.0


scale_sharded = jax.jit(scale, in_shardings=rows, out_shardings=rows)
scale_sharded.lower(X)


def project(x, w):
    return x @ w


W = jax.ShapeDtypeStruct((1024, 1024), jnp.float32)
B = jax.ShapeDtypeStruct((64, 1024), jnp.float32)
replicated = jax.jit(project, in_shardings=(rows, NamedSharding(mesh, P())))
replicated.lower(B, W)
columns = jax.jit(project, in_shardings=(rows, NamedSharding(mesh, P(None, "model"))))
columns.lower(B, W)


def nested(x):
    def inner(c, _):
        return c - 0.2 * jnp.mean(c), None

    def outer(c, _):
        c, _ = lax.scan(inner, c, None, length=5)
        return c, None

    c, _ = lax.scan(outer, x, None, length=10)
    return c


nested_sharded = jax.jit(nested, in_shardings=rows, out_shardings=rows)
nested_sharded.lower(X)


def constrained(x):
    y = lax.with_sharding_constraint(x * 2, rows)
    return y.sum()


constrained_only = jax.jit(constrained)
constrained_only.lower(X)


def double(x):
    return x * 2


# Made replicated on the way out: XLA leaves the all-gather no metadata.
gathered = jax.jit(double, in_shardings=rows, out_shardings=NamedSharding(mesh, P()))
gathered.lower(X)


@jax.jit
def plain(x):
    return jnp.sin(x) * 2


plain.lower(X)
"""

# jax.make_mesh at import (Explicit axes on JAX 0.10.2); and a mesh whose shape is not literal.
MAKE_MESH = """\
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((4, 2), ("data", "model"))
blocks = NamedSharding(mesh, P("data", "model"))


def total(x):
    return x.sum(axis=0)


total_sharded = jax.jit(total, in_shardings=blocks)
total_sharded.lower(jax.ShapeDtypeStruct((8, 4), jnp.float32))
"""


def explain(spec: str, *flags: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    return subprocess.run([sys.executable, "-m", "jaxlint", "explain", spec, *flags], capture_output=True,
                          text=True, timeout=600, env=env)


def report_of(spec: str, *flags: str) -> dict:
    run = explain(spec, "--format", "json", *flags)
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    jsonschema.validate(report, SCHEMA)
    return report


def line_of(path: Path, text: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if text in line)


@pytest.fixture(scope="module")
def sharded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write(tmp_path_factory.mktemp("communication"), "sharded", SHARDED)


@pytest.fixture(scope="module")
def layer(sharded: Path) -> dict:
    return report_of(f"{sharded}::layer_sharded")


def test_replica_groups_in_every_form_name_their_mesh_axes() -> None:
    shape, names = (4, 2), ("data", "model")
    # explicit, iota with and without a transpose, XLA's mesh form, the empty form (all devices)
    assert mesh_axes_of_groups(device_groups("{{0,1},{2,3},{4,5},{6,7}}", 8), shape, names) == ["model"]
    assert mesh_axes_of_groups(device_groups("[2,4]<=[4,2]T(1,0)", 8), shape, names) == ["data"]
    assert device_groups("[2,4]<=[8]", 8) == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert mesh_axes_of_groups(device_groups("[4,2]<=[8]", 8), shape, names) == ["model"]
    assert mesh_axes_of_groups(device_groups("[1,8]<=[8]", 8), shape, names) == ["data", "model"]
    mesh_form = "mesh['axis_0'=4,'axis_1'=1,'axis_2'=2] {'axis_0'}"
    assert device_groups(mesh_form, 8) == [[0, 2, 4, 6], [1, 3, 5, 7]]
    assert mesh_axes_of_groups(device_groups(mesh_form, 8), shape, names) == ["data"]
    assert mesh_axes_of_groups(device_groups("mesh['axis_0'=1,'axis_1'=4,'axis_2'=2] {'axis_2'}", 8),
                               shape, names) == ["model"]
    assert mesh_axes_of_groups(device_groups("{}", 8), shape, names) == ["data", "model"]
    # groups that are no set of mesh axes, and a form this does not read
    assert mesh_axes_of_groups([[0, 3], [1, 2], [4, 7], [5, 6]], shape, names) is None
    assert device_groups("replica_groups_v9(0:1)", 8) is None
    pairs = "{{0,2},{1,3},{2,4},{3,5},{4,6},{5,7},{6,0},{7,1}}"
    assert mesh_axes_of_pairs(pairs, shape, names) == ["data"]
    assert mesh_axes_of_pairs("{{0,1},{1,0}}", shape, names) == ["model"]


def test_a_gathered_weight_and_an_all_reduce_in_a_loop_by_source_line(sharded: Path, layer: dict) -> None:
    section = layer["communication"]
    assert section["sharded"] and section["devices"] == 8
    assert section["mesh"] == {"axis_names": ["data", "model"], "shape": [4, 2]}
    assert section["arguments"] == ["P('data', None)", "P('data', None)"] and section["outputs"] == ["P('data', None)"]
    by_kind = {c["kind"]: c for c in section["collectives"]}
    assert sorted(by_kind) == ["all-gather", "all-reduce"] and len(section["collectives"]) == 2
    gather, reduce = by_kind["all-gather"], by_kind["all-reduce"]
    assert (gather["path"], gather["line"]) == (str(sharded), line_of(sharded, "h = jnp.tanh(x @ w)"))
    assert (gather["shape"], gather["bytes"], gather["axes"]) == ("f32[512,512]", 512 * 512 * 4, ["data"])
    assert not gather["in_loop"] and gather["runs_per_call"] == 1
    # The mean inside the scan body: one scalar all-reduce per iteration, 100 per call.
    assert (reduce["line"], reduce["shape"], reduce["axes"]) == (line_of(sharded, "jnp.mean(c)"), "f32[]", ["data"])
    assert reduce["in_loop"] and reduce["loop_line"] == line_of(sharded, "lax.scan(")
    assert (reduce["runs_per_call"], reduce["bytes_per_call"]) == (100, 400)
    # Per device: each of the two f32[512,512] arguments holds a quarter of its rows.
    memory = section["memory"]
    assert memory["per_device"]["argument_bytes"] == 2 * MIB // 4 and memory["unsharded"]["argument_bytes"] == 2 * MIB
    assert memory["per_device"]["output_bytes"] == MIB // 4 and memory["unsharded"]["output_bytes"] == MIB
    assert any("all-reduce of line" in s and "100 times per call" in s for s in layer["summary"])


def test_a_collective_in_nested_loops_runs_the_product_of_their_trip_counts(sharded: Path) -> None:
    [reduce] = report_of(f"{sharded}::nested_sharded")["communication"]["collectives"]
    assert (reduce["kind"], reduce["line"]) == ("all-reduce", line_of(sharded, "c - 0.2 * jnp.mean(c)"))
    assert reduce["in_loop"] and reduce["loop_line"] == line_of(sharded, "c, _ = lax.scan(inner")
    assert (reduce["runs_per_call"], reduce["bytes_per_call"]) == (50, 200)


def test_the_text_and_the_page_show_the_collectives_at_their_lines(sharded: Path, layer: dict) -> None:
    text = render(layer, width=120)
    section = " ".join(text[text.index("6. Communication (8 devices, mesh data=4 x model=2)"):text.index("Summary")].split())
    matmul, mean, scan = (line_of(sharded, s) for s in ("h = jnp.tanh(x @ w)", "jnp.mean(c)", "lax.scan("))
    assert f"line {matmul} (h = jnp.tanh(x @ w)): all-gather f32[512,512] over data, 1.0 MiB" in section
    assert f"all-reduce f32[] over data, 4 B, in the loop body at line {scan}: 100 runs = 400 B per call" in section
    assert "memory per device: arguments 512.0 KiB (unsharded 2.0 MiB)" in section
    page = render_html(layer)
    source = page[:page.index("<h2>Communication</h2>")]
    assert f'id="src-{mean}"' in source and ">all-reduce ×100</span>" in source and ">all-gather</span>" in source
    table = page[page.index("<h2>Communication</h2>"):page.index("<h2>Duplicated")]
    assert f'<tr class="xref" data-line="{matmul}">' in table and f'<tr class="xref" data-line="{mean}">' in table


DOCS = Path(__file__).parent.parent / "docs" / "explain.md"
HEADER = """\
import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

"""


def test_the_docs_show_the_real_section(tmp_path: Path) -> None:
    docs = DOCS.read_text()
    section = docs[docs.index("## The communication section"):]
    program = section[section.index("```python\n") + 10:section.index("```\n\n```\n")]
    shown = section[section.index("```\n6. Communication") + 4:]
    shown = shown[:shown.index("```")]
    path = write(tmp_path, "layer", HEADER + program + "X = jax.ShapeDtypeStruct((512, 512), jnp.float32)\n"
                                                      "layer_sharded.lower(X, X)\n")
    assert line_of(path, "h = jnp.tanh(x @ w)") == 12  # the lines the docs name
    env = {**{k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}, "COLUMNS": "100"}
    run = subprocess.run([sys.executable, "-m", "jaxlint", "explain", f"{path}::layer_sharded"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=600, env=env)
    assert run.returncode == 0, run.stderr
    assert shown in run.stdout


def test_a_sharding_constraint_alone_partitions_the_program(sharded: Path) -> None:
    report = report_of(f"{sharded}::constrained_only")
    section = report["communication"]
    assert section["mesh"] == {"axis_names": ["data", "model"], "shape": [4, 2]}
    assert section["arguments"] == [None] and section["outputs"] == ["P()"]
    [reduce] = section["collectives"]
    assert (reduce["kind"], reduce["axes"]) == ("all-reduce", ["data"])
    assert reduce["line"] == line_of(sharded, "return y.sum()")
    assert "shardings: arguments chosen by XLA; outputs P()" in render(report)


def test_a_reshard_is_an_all_to_all_and_a_roll_a_collective_permute(sharded: Path) -> None:
    [exchange] = report_of(f"{sharded}::reshard_sharded")["communication"]["collectives"]
    assert (exchange["kind"], exchange["axes"], exchange["shape"]) == ("all-to-all", ["data"], "4 x f32[128,1,128]")
    assert exchange["line"] == line_of(sharded, "with_sharding_constraint") and exchange["bytes"] == 512 * 512 * 4 // 4
    [permute] = report_of(f"{sharded}::roll_sharded")["communication"]["collectives"]
    assert (permute["kind"], permute["axes"], permute["line"]) == \
        ("collective-permute", ["data"], line_of(sharded, "jnp.roll("))


def test_a_collective_without_metadata_is_put_down_to_the_shardings(sharded: Path) -> None:
    report = report_of(f"{sharded}::gathered")
    [gather] = report["communication"]["collectives"]
    assert (gather["kind"], gather["shape"], gather["axes"], gather["line"]) == ("all-gather", "f32[512,512]", ["data"], None)
    assert gather["cause"] == "the output's sharding P(), from argument 0 (sharded P('data', None))"
    assert "by the output's sharding P(), from argument 0 (sharded P('data', None)): all-gather f32[512,512] over data" \
        in " ".join(render(report, width=120).split())


def test_a_replicated_parameter_costs_its_full_size_on_every_device(sharded: Path) -> None:
    full = report_of(f"{sharded}::replicated")["communication"]["memory"]
    half = report_of(f"{sharded}::columns")["communication"]["memory"]
    x_part = 64 * 1024 * 4 // 4  # the rows of x one device holds
    assert full["per_device"]["argument_bytes"] == 4 * MIB + x_part
    assert half["per_device"]["argument_bytes"] == 2 * MIB + x_part
    assert full["unsharded"] == half["unsharded"] and full["unsharded"]["argument_bytes"] == 4 * MIB + 4 * x_part


def test_no_collective_and_no_sharding_are_said_briefly(sharded: Path) -> None:
    quiet = report_of(f"{sharded}::scale_sharded")
    assert quiet["communication"]["sharded"] and quiet["communication"]["collectives"] == []
    assert "  no collective: each device computes its part without communicating" in render(quiet)
    # Traced in the same 8-device worker, an unsharded function runs on one device: no section.
    plain = report_of(f"{sharded}::plain")
    assert plain["communication"] == {"sharded": False, "devices": 1, "mesh": None, "collectives": [], "memory": None}
    assert "6. Communication" not in render(plain) and "<h2>Communication</h2>" not in render_html(plain)


def test_a_mesh_made_at_import_is_explained_with_the_devices_it_takes(tmp_path: Path) -> None:
    path = write(tmp_path, "made", MAKE_MESH)
    [reduce] = report_of(f"{path}::total_sharded")["communication"]["collectives"]
    assert (reduce["kind"], reduce["axes"], reduce["line"]) == ("all-reduce", ["data"], line_of(path, "x.sum("))
    # A shape that is not literal: --devices gives the worker its devices.
    unread = write(tmp_path, "unread", MAKE_MESH.replace("mesh = jax.make_mesh((4, 2)", "n = 4\nmesh = jax.make_mesh((n, 2)"))
    run = explain(f"{unread}::total_sharded")
    assert run.returncode == 2 and "Traceback" not in run.stderr and "devices" in run.stderr, run.stderr
    assert report_of(f"{unread}::total_sharded", "--devices", "8")["communication"]["devices"] == 8


def test_devices_takes_a_whole_number_of_at_least_one(tmp_path: Path) -> None:
    for wrong in ("0", "two"):
        run = explain(f"{tmp_path / 'm.py'}::f", "--devices", wrong)
        assert run.returncode == 2, run.stderr
        assert f"argument --devices: expected a whole number of CPU devices, at least 1, got '{wrong}'" in run.stderr


# XLA's CPU backend makes no asynchronous collectives and no reduce-scatter (it all-reduces and
# slices; GPU and TPU make both): this module is written by hand, in the text form XLA prints.
ASYNC = """\
HloModule jit_f, is_scheduled=true, num_partitions=8

ENTRY %main.1 (p: f32[128,512]) -> f32[512,512] {
  %p = f32[128,512]{1,0} parameter(0)
  %ags = (f32[128,512]{1,0}, f32[512,512]{1,0}) all-gather-start(%p), channel_id=1, replica_groups=[2,4]<=[4,2]T(1,0), dimensions={0}, use_global_device_ids=true, metadata={op_name="jit(f)/dot_general" source_file="/src/m.py" source_line=3}
  %agd = f32[512,512]{1,0} all-gather-done(%ags), metadata={op_name="jit(f)/dot_general" source_file="/src/m.py" source_line=3}
  ROOT %rs = f32[128,512]{1,0} reduce-scatter(%agd), channel_id=2, replica_groups={{0,2,4,6},{1,3,5,7}}, dimensions={0}, to_apply=%add
}
"""


def test_an_async_collective_counts_once_and_a_reduce_scatter_by_its_operand() -> None:
    module = hlo.parse(ASYNC)
    facts = {"sharding": {"mesh": {"axis_names": ["data", "model"], "shape": [4, 2]}}}
    section = communication.section(module, hlomap.place(module), ASYNC, "/src/m.py", facts)
    [gather, scatter] = section["collectives"]
    assert (gather["kind"], gather["shape"], gather["bytes"]) == ("all-gather", "f32[512,512]", 512 * 512 * 4)
    assert (gather["axes"], gather["line"], gather["runs_per_call"]) == (["data"], 3, 1)
    # A reduce-scatter's bytes are its operand's: what each device sends into the reduction.
    assert (scatter["kind"], scatter["shape"], scatter["bytes"]) == ("reduce-scatter", "f32[128,512]", 512 * 512 * 4)
    assert (scatter["axes"], scatter["line"], scatter["cause"]) == (["data"], None, "the output's sharding")
