"""`jaxlint explain`'s memory section: command-line runs (real compiles, the worker's jobs
in the test process) on the programs of issue 27 (a differentiated scan's stacked residuals, a carry
copied per iteration of a differentiated loop) and on a function with neither."""
from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import jsonschema
import pytest
from helpers import write

from jaxlint.cli.main import main
from jaxlint.explain.html import render_html
from jaxlint.explain.terminal import render

# The report is what these tests read: explain's jobs run in the test process (conftest.py).
pytestmark = pytest.mark.usefixtures("explain_jobs_in_process")


SCHEMA = json.loads((Path(__file__).parent / "data" / "explain-schema.json").read_text())

# The residual case: 200 steps of two tanh-matmuls on f32[64,256], differentiated.
RESIDUAL = """\
import jax
import jax.numpy as jnp
from jax import lax

H = jax.ShapeDtypeStruct((64, 256), jnp.float32)
W = jax.ShapeDtypeStruct((256, 256), jnp.float32)


def residual(h, w):
    def body(h, _):
        a = jnp.tanh(h @ w)
        b = jnp.tanh(a @ w)
        return h + b, None

    h, _ = lax.scan(body, h, None, length=200)
    return h.sum()


grad_residual = jax.jit(jax.grad(residual, argnums=(0, 1)))
grad_residual.lower(H, W)
"""
# JX307's case: the gradient of a scan that shifts a carried f32[1000,10,10] in place.
SHIFTED = """\
import jax
import jax.numpy as jnp
from jax import lax

P = jax.ShapeDtypeStruct((1000, 10, 10), jnp.float32)


def shifted(P):
    def body(P, i):
        P = P.at[i].set(P[i - 1] * 1.01)
        return P, None

    P, _ = lax.scan(body, P, jnp.arange(1, P.shape[0]))
    return P.sum()


grad_shifted = jax.jit(jax.grad(shifted))
grad_shifted.lower(P)


@jax.jit
def plain(x):
    return jnp.sin(x) * 2


plain.lower(jnp.ones(8))
"""
STACKED = 200 * 64 * 256 * 4  # bytes of one f32[200,64,256]
CARRY = 1000 * 10 * 10 * 4  # bytes of one f32[1000,10,10]


def report_of(spec: str) -> dict:
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = main(["explain", spec, "--format", "json"])
    assert code == 0, stderr.getvalue()
    report = json.loads(stdout.getvalue())
    jsonschema.validate(report, SCHEMA)
    return report


def line_of(path: Path, text: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if text in line)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("memory")


@pytest.fixture(scope="module")
def residual(folder: Path) -> tuple[Path, dict]:
    path = write(folder, "residual", RESIDUAL)
    return path, report_of(f"{path}::grad_residual")


@pytest.fixture(scope="module")
def shifted(folder: Path) -> tuple[Path, dict]:
    path = write(folder, "shifted", SHIFTED)
    return path, report_of(f"{path}::grad_shifted")


def test_residuals_of_a_differentiated_scan_by_body_line(residual: tuple[Path, dict]) -> None:
    path, report = residual
    [loop] = report["memory"]["differentiated_loops"]
    assert (loop["path"], loop["line"], loop["trips"]) == (str(path), line_of(path, "lax.scan("), 200)
    a, b = f"line {line_of(path, 'a = jnp.tanh')}", f"line {line_of(path, 'b = jnp.tanh')}"
    places = [r["made_at"] for r in loop["residuals"]]
    # Each tanh line's output and its derivative's factor, and the carry h (for h @ w's gradient).
    assert sorted(places) == sorted([a, a, b, b, "the carry"])
    assert all((r["shape"], r["bytes"]) == ("f32[200,64,256]", STACKED) for r in loop["residuals"])
    assert loop["total_bytes"] == 5 * STACKED
    # The residuals are what XLA keeps: its temporaries hold them (62.5 MiB of 63.1 MiB).
    assert 5 * STACKED <= report["memory"]["analysis"]["temp_bytes"] < 6 * STACKED
    assert report["memory"]["analysis"] is not None and report["memory"]["analysis"] == report["cost"]["memory"]


def test_residual_text_and_page(residual: tuple[Path, dict]) -> None:
    path, report = residual
    text = render(report, width=100)
    section = text[text.index("4. Memory"):text.index("5. Findings")]
    scan = line_of(path, "lax.scan(")
    assert f"line {scan} (200 iterations): 62.5 MiB of residuals in 5 stacked arrays" in section
    assert section.count(f"f32[200,64,256]    12.5 MiB  made at line {line_of(path, 'a = jnp.tanh')}") == 2
    assert "XLA's memory_analysis(): arguments 320.0 KiB" in section
    assert "memory_analysis" not in text[:text.index("4. Memory")]  # moved out of the cost section
    page = render_html(report)
    memory = page[page.index("<h2>Memory</h2>"):]
    assert memory.count(f'<tr class="xref" data-line="{scan}">') >= 5
    assert "65,536,000 B (62.5 MiB) of residuals" in memory


def test_carry_copied_inside_a_differentiated_loop(shifted: tuple[Path, dict]) -> None:
    path, report = shifted
    scan = line_of(path, "lax.scan(")
    [loop] = [c for c in report["memory"]["loop_copies"] if any(x["shape"] == "f32[1000,10,10]" for x in c["copies"])]
    assert (loop["path"], loop["line"], loop["trips"]) == (str(path), scan, 999)
    assert loop["bytes_per_iteration"] == sum(c["bytes"] for c in loop["copies"]) >= CARRY
    assert loop["total_bytes"] == loop["bytes_per_iteration"] * 999
    text = render(report, width=120)
    assert f"line {scan}: {loop['bytes_per_iteration'] / 2**10:.1f} KiB copied per iteration x 999 iterations" in text


def test_a_plain_function_has_nothing_to_list(folder: Path, capsys: pytest.CaptureFixture) -> None:
    path = folder / "shifted.py"
    if not path.exists():
        write(folder, "shifted", SHIFTED)
    assert main(["explain", f"{path}::plain"]) == 0
    out = capsys.readouterr().out
    section = out[out.index("4. Memory"):out.index("5. Findings")]
    assert "residuals saved by differentiated loops: no differentiated loop" in section
    assert "copies of carried buffers inside loop bodies: no copy inside a loop body" in section
    assert "temporaries" in section
