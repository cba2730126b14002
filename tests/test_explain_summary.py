"""`jaxlint explain` prints a summary page by default: a block of equations an unrolled Python loop
traced again and again is shown once with its count, a loop primitive with its trip count, each
long list cut with a line saying so; `--full` prints everything. Command-line runs on small modules
(the worker's jobs in the test process)."""
from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import pytest
from helpers import write

from jaxlint.cli.main import main
from jaxlint.explain.condense import repeats
from jaxlint.explain.terminal import render

# The report is what these tests read: explain's jobs run in the test process (conftest.py).
pytestmark = pytest.mark.usefixtures("explain_jobs_in_process")


ROOT = Path(__file__).resolve().parent.parent
STEPS = 300

EMA = f"""\
import jax
import jax.numpy as jnp
from jax import lax


@jax.jit
def ema_unrolled(x):
    m = x[0]
    for t in range(1, x.shape[0]):
        m = 0.9 * m + 0.1 * x[t]
    return m


@jax.jit
def ema_scan(x):
    def step(m, xt):
        m = 0.9 * m + 0.1 * xt
        return m, m

    return lax.scan(step, x[0], x)[1]


ema_unrolled.lower(jnp.zeros({STEPS}))
ema_scan.lower(jnp.zeros({STEPS}))
"""


def explain(*args: str) -> str:
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = main(["explain", *args])
    assert code == 0, stderr.getvalue()
    return stdout.getvalue()


@pytest.fixture(scope="module")
def module(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write(tmp_path_factory.mktemp("explain_summary"), "ema", EMA)


@pytest.fixture(scope="module")
def unrolled(module: Path) -> dict:
    return json.loads(explain(f"{module}::ema_unrolled", "--format", "json"))


def section(text: str, heading: str, following: str) -> list[str]:
    return text[text.index(heading):text.index(following)].splitlines()[1:]


def test_an_unrolled_loop_is_shown_once_with_its_count(unrolled: dict) -> None:
    loop_line = next(n for n, text in enumerate(EMA.splitlines(), 1) if "m = 0.9 * m" in text)
    body = [e for e in unrolled["jaxpr"]["lines"] if e["line"] == loop_line]
    per_iteration = len(body) // (STEPS - 1)
    assert per_iteration * (STEPS - 1) == len(body) and per_iteration >= 3
    text = render(unrolled, width=100)
    listing = section(text, "1. Source -> jaxpr", "2. Optimized HLO")
    # The first line's two equations, the loop line, one iteration's equations and the count.
    assert len(listing) <= 3 + 1 + per_iteration + 3, listing
    assert sum("slice[" in row for row in listing) == 2  # x[0], then x[t] of the one iteration shown
    assert f"the {per_iteration} equations above, traced {STEPS - 1} times in a row" in " ".join(listing)
    # The HLO's thousands of instructions of that line: one row per kind, with its count.
    hlo = section(text, "2. Optimized HLO", "3. Cost per call")
    assert len(hlo) <= 20 and any(re.search(rf"\b{STEPS - 1} like slice\.", row) for row in hlo), hlo
    # The whole page fits a screen or two, whatever the loop's length; the full listing does not.
    assert len(text.splitlines()) <= 80 < 2 * STEPS <= len(render(unrolled, width=100, full=True).splitlines())
    assert "--full` prints every equation" in " ".join(text.split())  # wrapped where the path's length puts it


def test_full_prints_every_equation(module: Path) -> None:
    text = explain(f"{module}::ema_unrolled", "--full")
    listing = section(text, "1. Source -> jaxpr", "2. Optimized HLO")
    starts = {int(m.group(1)) for m in re.finditer(r"slice\[start_indices=\((\d+),\)", "\n".join(listing))}
    assert starts == set(range(STEPS))
    assert "--full" not in text and "shown once" not in text


def test_a_scan_shows_its_body_once_with_its_trip_count(module: Path) -> None:
    text = explain(f"{module}::ema_scan")
    listing = section(text, "1. Source -> jaxpr", "2. Optimized HLO")
    scan_row = next(i for i, row in enumerate(listing) if "= scan[" in row)
    assert re.fullmatch(rf"\s*\|\s+\(a loop: its body below runs {STEPS} times\)", listing[scan_row + 1])
    assert sum("mul " in row for row in listing) == 2  # the body's two products, once


def test_a_small_function_gets_the_same_page_either_way() -> None:
    report = json.loads(explain(f"{ROOT / 'examples' / 'founding.py'}::my_mapped_function", "--format", "json"))
    assert render(report, width=100) == render(report, width=100, full=True)


def test_repeats_finds_the_block_after_a_prologue() -> None:
    keys = ["a", "b"] + ["x", "y", "z", "w"] * 5 + ["end"]
    assert repeats(keys) == [(2, 4, 5)]


@pytest.mark.parametrize("keys", [
    ["add", "add", "add"],  # a + b + c + d: three adds in a row, no loop
    list("abcdefghijklmnop"),  # nothing repeats
    ["x", "y"] * 2 + ["z"] * 2,  # twice is code written twice
])
def test_repeats_leaves_short_or_unrepeated_runs_alone(keys: list[str]) -> None:
    assert repeats(keys) == []
