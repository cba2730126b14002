"""`jaxlint explain` through its command line on small modules, with real compiles (the worker's jobs
run in the test process: conftest.py's explain_jobs_in_process)."""
from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest
from helpers import write

from jaxlint.cli.main import main

# The report is what these tests read: explain's jobs run in the test process (conftest.py).
pytestmark = pytest.mark.usefixtures("explain_jobs_in_process")


ROOT = Path(__file__).resolve().parent.parent
FOUNDING = ROOT / "examples" / "founding.py"
SCHEMA = json.loads((Path(__file__).parent / "data" / "explain-schema.json").read_text())

# The founding example's computation written two other ways: with the JX101 fix, and with the
# unmapped work hoisted out of vmap by hand (no vmap at all).
OUT_AXES_NONE = """\
import jax
import jax.numpy as jnp


def blackbox_function(x, y):
    x = x + 1
    y = x * y
    return x, y


@jax.jit
def my_mapped_function(x, y):
    x, y = jax.vmap(blackbox_function, in_axes=(None, 0), out_axes=(None, 0))(x, y)
    return x, y


my_mapped_function.lower(1, jnp.arange(10))
"""
HAND_HOISTED = """\
import jax
import jax.numpy as jnp


@jax.jit
def hoisted(x, y):
    x = x + 1
    y = x * y
    return x, y


hoisted.lower(1, jnp.arange(10))
"""
REMAT_SCAN = """\
import jax
import jax.numpy as jnp


def step(h, w):
    h = jnp.tanh(h @ w)
    return h, None


@jax.jit
def loss_and_grad(ws, x):
    def loss(ws):
        h, _ = jax.lax.scan(jax.checkpoint(step), x, ws)
        return h.sum()
    return jax.value_and_grad(loss)(ws)


loss_and_grad.lower(jnp.ones((4, 16, 16)), jnp.ones((8, 16)))
"""
LONG_SCAN = """\
import jax
import jax.numpy as jnp


# jaxlint: args w=f32[64,64], x=f32[64]
@jax.jit
def power(w, x):
    def body(h, _):
        return jnp.tanh(w @ h), None
    h, _ = jax.lax.scan(body, x, None, length=1000)
    return h
"""
PLAIN = """\
import jax.numpy as jnp


def twice(x):
    a = jnp.exp(x)
    b = jnp.exp(x)
    return a * b + jnp.sin(x)
"""


def explain_json(capsys: pytest.CaptureFixture, spec: str, *flags: str) -> dict:
    code = main(["explain", spec, "--format", "json", *flags])
    out, err = capsys.readouterr()
    assert code == 0, err
    report = json.loads(out)
    jsonschema.validate(report, SCHEMA)
    return report


def line_of(path: Path, text: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def by_id(report: dict) -> dict[str, dict]:
    return {i["id"]: i for i in report["hlo"]["instructions"]}


@pytest.fixture(scope="module")
def founding() -> dict:
    return _run_module_scoped(f"{FOUNDING}::my_mapped_function")


def _run_module_scoped(spec: str, *flags: str) -> dict:
    """explain in JSON, for module-scoped fixtures (capsys is function-scoped)."""
    import contextlib
    import io

    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = main(["explain", spec, "--format", "json", *flags])
    assert code == 0, stderr.getvalue()
    report = json.loads(stdout.getvalue())
    jsonschema.validate(report, SCHEMA)
    return report


def test_founding_add_is_a_cheap_fusion_duplicate(founding: dict) -> None:
    add_line = line_of(FOUNDING, "x = x + 1")
    [duplicate] = founding["hlo"]["duplicates"]
    assert duplicate["classification"] == "cheap-fusion-duplication"
    assert (duplicate["opcode"], duplicate["line"], duplicate["count"]) == ("add", add_line, 2)
    assert duplicate["cause"] == "fusion"
    assert duplicate["extra_flops"] == 1  # one scalar addition per call
    instructions = by_id(founding)
    copies = [instructions[i] for i in duplicate["instruction_ids"]]
    assert all(c["opcode"] == "add" and c["shape"] == "s32[]" for c in copies)
    # One copy sits inside the fusion that computes the multiply of the next line.
    fused = [c for c in copies if c["fusion"] is not None and any(
        i["fusion"] == c["fusion"] and i["opcode"] == "multiply" for i in instructions.values())]
    assert len(fused) == 1
    assert all(c["line"] == add_line for c in copies)
    # In plain words, first in the summary; the jaxpr has the add once.
    first = founding["summary"][0]
    for words in ("twice", "cheap scalar add", "multiply fusion", "one extra scalar addition",
                  "unrelated to vmap"):
        assert words in first, first
    assert [line["primitive"] for line in founding["jaxpr"]["lines"] if line["line"] == add_line] == ["add"]


def test_founding_fix_is_free_under_jit_and_priced_eagerly(founding: dict) -> None:
    [finding] = founding["findings"]
    assert finding["code"] == "JX101"
    before, after = finding["cost_before"], finding["cost_after"]
    for key in ("flops", "bytes_accessed", "transcendentals", "temp_bytes", "output_bytes"):
        assert before[key] == after[key], key
    assert before["flops"] == founding["cost"]["compiled"]["flops"]
    assert finding["same_hlo"] is True
    eager = finding["eager"]
    # Op by op, the broadcast to the batch is materialized: the fix removes it.
    assert eager["after"]["ops"] < eager["before"]["ops"]
    assert eager["after"]["materialized_bytes"] < eager["before"]["materialized_bytes"]
    assert "broadcast_in_dim -> i32[10]" in eager["before"]["op_list"]
    assert "broadcast_in_dim -> i32[10]" not in eager["after"]["op_list"]
    assert "changes nothing in compiled cost" in finding["verdict"]
    assert founding["hlo"]["duplicates"][0]["unrelated_to_vmap"] is True


@pytest.mark.parametrize("module, name", [(OUT_AXES_NONE, "my_mapped_function"), (HAND_HOISTED, "hoisted")])
def test_same_duplicate_without_the_broadcast(tmp_path: Path, capsys: pytest.CaptureFixture, founding: dict,
                                              module: str, name: str) -> None:
    """The issue's claim, checked: out_axes=None and hand-hoisted code compile to the same HLO."""
    path = write(tmp_path, "variant", module)
    report = explain_json(capsys, f"{path}::{name}")
    [duplicate] = report["hlo"]["duplicates"]
    assert (duplicate["classification"], duplicate["opcode"], duplicate["count"]) == (
        "cheap-fusion-duplication", "add", 2)
    assert duplicate["line"] == line_of(path, "x = x + 1")
    assert report["cost"]["compiled"] == founding["cost"]["compiled"]
    opcodes = lambda r: sorted((i["opcode"], i["shape"]) for i in r["hlo"]["instructions"])  # noqa: E731
    assert opcodes(report) == opcodes(founding)


def test_checkpoint_recompute_is_classified_as_remat(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = write(tmp_path, "remat_scan", REMAT_SCAN)
    report = explain_json(capsys, f"{path}::loss_and_grad")
    line = line_of(path, "jnp.tanh(h @ w)")
    remat = {d["opcode"]: d for d in report["hlo"]["duplicates"] if d["line"] == line}
    assert set(remat) == {"dot", "tanh"}
    for duplicate in remat.values():
        assert duplicate["classification"] == "recomputed-expensive"
        assert duplicate["cause"] == "remat (jax.checkpoint)"
        ops = [by_id(report)[i]["op_name"] for i in duplicate["instruction_ids"]]
        assert sum("rematted_computation" in op for op in ops) == 1
    # 2*8*16*16 FLOPs per step, recomputed in each of the 4 backward steps.
    assert remat["dot"]["extra_flops"] == 4 * 2 * 8 * 16 * 16
    assert remat["tanh"]["extra_transcendentals"] == 4 * 8 * 16
    remat_blocks = report["jaxpr"]["remat"]
    assert remat_blocks and line in remat_blocks[0]["lines"]
    assert any("recomputed by jax.checkpoint" in s for s in report["summary"])


def test_scan_flops_xla_undercounts(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = write(tmp_path, "long_scan", LONG_SCAN)
    report = explain_json(capsys, f"{path}::power")
    compiled, estimate = report["cost"]["compiled"], report["cost"]["estimate"]
    # XLA counts the body (a 64x64 matvec) once; the estimate runs it 1000 times.
    assert compiled["flops"] < 20_000
    assert estimate["flops"] >= 1000 * 2 * 64 * 64
    assert estimate["transcendentals"] == 1000 * 64
    assert "trip-count-aware" in estimate["label"]
    notes = " ".join(report["cost"]["notes"])
    assert "1,000 times" in notes and "undercounts" in notes
    assert estimate["bytes"] > compiled["bytes_accessed"]
    [scan] = [line for line in report["jaxpr"]["lines"] if line["primitive"] == "scan"]
    body = [line for line in report["jaxpr"]["lines"] if line["depth"] == scan["depth"] + 1]
    assert {"dot_general", "tanh"} <= {line["primitive"] for line in body}
    assert scan["trips"] == 1000


def test_args_flag_and_duplicated_in_source(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = write(tmp_path, "plain", PLAIN)
    report = explain_json(capsys, f"{path}::twice", "--args", "x=f32[1000]")
    assert report["target"]["kind"] == "plain"
    assert report["arguments"] == {"source": "args-flag", "signature": [{"name": "x", "abstract": "f32[1000]"}]}
    [written] = [d for d in report["hlo"]["duplicates"] if d["classification"] == "duplicated-in-source"]
    assert written["lines"] == [line_of(path, "a = jnp.exp"), line_of(path, "b = jnp.exp")]
    assert written["extra_flops"] == 0  # XLA did not keep two copies


def test_text_output_has_the_five_sections(capsys: pytest.CaptureFixture) -> None:
    assert main(["explain", f"{FOUNDING}::my_mapped_function"]) == 0
    out = capsys.readouterr().out
    headings = ["1. Source -> jaxpr", "2. Optimized HLO", "3. Cost per call", "4. Memory", "5. Findings and their price",
                "Summary"]
    positions = [out.index(h) for h in headings]
    assert positions == sorted(positions)
    assert "[cheap fusion duplication] add" in out
    assert max(len(line) for line in out.splitlines()) <= 120


def test_without_arguments_or_inference_explain_names_the_args_flag(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture) -> None:
    plain = write(tmp_path, "plain", PLAIN)
    (tmp_path / "jaxlint.toml").write_text("infer-arguments = false\n")
    code = main(["explain", f"{plain}::twice"])
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert re.search(r'no abstract arguments known .*--args "x=f32\[\.\.\.\]"', err), err


def test_without_arguments_explain_uses_inferred_ones_by_default(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    plain = write(tmp_path, "plain", PLAIN)
    assert main(["explain", f"{plain}::twice"]) == 0
    assert "arguments (inferred): x: f32[]" in capsys.readouterr().out


@pytest.mark.parametrize("spec, flags, message", [
    ("{plain}::nope", [], r"no function 'nope' in .*plain\.py; functions there: twice"),
    ("{plain}::twice", ["--args", "y=f32[3]"], r"hint names 'y', not parameters of twice\(x\)"),
    ("{broken}::f", [], r"cannot import .*broken\.py: optional dependency missing: no_such_module_x"),
    ("{plain}", [], r"expected PATH::FUNCTION"),
])
def test_errors_exit_2_with_a_message(tmp_path: Path, capsys: pytest.CaptureFixture, spec: str,
                                      flags: list[str], message: str) -> None:
    plain = write(tmp_path, "plain", PLAIN)
    broken = write(tmp_path, "broken", "import jax\nimport no_such_module_x\n\n\n@jax.jit\ndef f(x):\n    return x\n")
    code = main(["explain", spec.format(plain=plain, broken=broken), *flags])
    out, err = capsys.readouterr()
    assert code == 2
    assert out == ""
    assert re.search(message, err), err
    assert "Traceback" not in err


REMAT_PLAIN = """\
import jax
import jax.numpy as jnp


def layer(w, x):
    h = jnp.dot(x, w)
    return jnp.sin(h)


# jaxlint: args w=f32[16,16], x=f32[8,16]
@jax.jit
def loss_and_grad(w, x):
    f = jax.checkpoint(layer)
    return jax.value_and_grad(lambda w: f(w, x).sum())(w)
"""


def test_checkpoint_recompute_xla_merges_is_said(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """Without a loop between them, XLA may merge the recomputed dot with the forward one: then the
    report says so instead of claiming a recomputation (either way, never silent)."""
    path = write(tmp_path, "remat_plain", REMAT_PLAIN)
    report = explain_json(capsys, f"{path}::loss_and_grad")
    line = line_of(path, "jnp.dot(x, w)")
    recomputed = [d for d in report["hlo"]["duplicates"]
                  if d["line"] == line and d["cause"] == "remat (jax.checkpoint)"]
    merged = [n for n in report["cost"]["notes"] if f"line {line}" in n and "merged the recomputation" in n]
    assert bool(recomputed) != bool(merged)
    # The forward dot (x @ w: f32[8,16]); the backward's dw is another dot of that line, f32[16,16].
    forward = [i for i in report["hlo"]["instructions"]
               if i["opcode"] == "dot" and i["line"] == line and i["shape"] == "f32[8,16]"]
    assert len(forward) == (2 if recomputed else 1)


CLOSURES = '''\
import jax
import jax.numpy as jnp


def make_step(dt):
    def step(state):
        a = jnp.exp(state) * dt
        b = jnp.exp(state) * dt
        return a + b
    return step


class Model:
    def __init__(self, scale):
        self.scale = scale

    def apply(self, x):
        return jnp.exp(x) * self.scale + jnp.exp(x)
'''


def test_closures_and_methods_from_the_examples_file(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """A closure has no name on its module and a method needs an instance: the examples file gives
    both, as it does for check."""
    write(tmp_path, "closures", CLOSURES)
    (tmp_path / "pyproject.toml").write_text('[tool.jaxlint]\nexamples = ["examples_file.py"]\n')
    (tmp_path / "examples_file.py").write_text(
        "import jax.numpy as jnp\nimport jaxlint\nfrom closures import Model, make_step\n\n"
        "jaxlint.example(make_step(0.1), jnp.ones(100))\njaxlint.example(Model(2.0).apply, jnp.ones(100))\n")
    path = tmp_path / "closures.py"
    step = explain_json(capsys, f"{path}::make_step.<locals>.step")
    assert step["arguments"]["source"] == "examples"
    assert [line_of(path, "a = jnp.exp"), line_of(path, "b = jnp.exp")] in [
        d["lines"] for d in step["hlo"]["duplicates"] if d["classification"] == "duplicated-in-source"]
    method = explain_json(capsys, f"{path}::Model.apply")
    assert method["arguments"]["source"] == "examples"
    assert [a["name"] for a in method["arguments"]["signature"]] == ["self", "x"]
    # --args gives the other arguments; self is still the registered instance.
    resized = explain_json(capsys, f"{path}::Model.apply", "--args", "x=f32[50]")
    assert resized["arguments"]["source"] == "args-flag"
    [self, x] = resized["arguments"]["signature"]
    assert self["name"] == "self" and "closures.Model object" in self["abstract"]
    assert (x["name"], x["abstract"]) == ("x", "f32[50]")
