"""A target whose trace runs away (a guess's sizes in a loop inside C code, which no timer stops)
costs only itself: the worker says which target it is in (worker/progress.py), a watchdog ends
a guess stuck in C code, and the module is analyzed again without the target; a later guess that
calls the function where it was stuck stops at the call (worker/guards.py)."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from helpers import expected_markers

from jaxlint.config import load_config
from jaxlint.engine.jobs import make_job
from jaxlint.engine.targets import file_targets
from jaxlint.rules import all_rules
from jaxlint.text import read_source

RUNAWAY_IN_C = """\
import collections
import itertools

import jax.numpy as jnp
from jaxtyping import Array, Float


def points(m: Float[Array, "d"]):  # sizes of 8: 100**8 points, consumed in C code that no timer stops
    collections.deque(itertools.product(range(100), repeat=len(m)), maxlen=0)
    return m


def expectation(m: Float[Array, "d"]):
    return points(m).sum()


def safe_log(x):
    return jnp.where(x > 0, jnp.log(x), 0.0)  # expect JX501


def scaled(x: Float[Array, "d"]):
    return 2 * x
"""
STUCK_LINE = 9  # the deque's line


def _skipped(result) -> dict[str, tuple[str, str]]:
    return {s.target: (s.kind, s.reason) for _, s in result.skipped}


@pytest.mark.slow  # the runaway guess costs the module's limit (20 s here) once, then a second run
def test_a_guess_stuck_in_c_code_costs_only_its_target(tmp_path: Path) -> None:
    pytest.importorskip("jaxtyping")
    from jaxlint.engine.check import check

    (tmp_path / "runaway.py").write_text(RUNAWAY_IN_C)
    (tmp_path / "jaxlint.toml").write_text("")
    result = check([str(tmp_path)], [r for r in all_rules()], timeout=20.0, config=load_config([str(tmp_path)]))
    # No JX902: what ran away was jaxlint's guess, not the user's code on the user's arguments.
    assert {(f.code, f.span.start_line) for f in result.findings} == expected_markers(RUNAWAY_IN_C)
    skipped = _skipped(result)
    assert skipped["points"][0] == "runaway" and "guessed arguments ran away" in skipped["points"][1]
    assert "it reaches points, where a trace with guessed arguments ran away" in skipped["expectation"][1]
    assert set(skipped) == {"points", "expectation"}  # safe_log and scaled were traced


def _rerun(tmp_path: Path) -> dict[str, tuple[str, str]] | object:
    """The job as engine/jobs.py sends it again after the first run's worker was stopped in
    ``points`` at STUCK_LINE, analyzed in this process."""
    pytest.importorskip("jaxtyping")
    from jaxlint.worker import analyze

    path = tmp_path / "runaway.py"
    path.write_text(RUNAWAY_IN_C)
    (tmp_path / "jaxlint.toml").write_text("")
    source = read_source(str(path))
    config = load_config([str(path)])
    targets = file_targets(str(path), source.text, config, frozenset())[0]
    job = dataclasses.replace(make_job(source, targets, [r.code for r in all_rules()], config.settings()),
                              runaway={"points": ["runaway", "a trace with guessed arguments ran away"]},
                              runaway_lines=[STUCK_LINE])
    return analyze.analyze(job)


def test_the_second_run_skips_the_runaway_and_stops_guesses_that_reach_it(tmp_path: Path) -> None:
    result = _rerun(tmp_path)
    skipped = {s.target: (s.kind, s.reason) for s in result.skipped}
    assert skipped["points"] == ("runaway", "a trace with guessed arguments ran away")
    assert "it reaches points, where a trace with guessed arguments ran away in an earlier run" \
        in skipped["expectation"][1]
    # Near misses: guesses that never call points trace, and their findings are reported.
    assert set(skipped) == {"points", "expectation"}
    assert {17, 21} <= set(result.linted)  # safe_log's and scaled's first lines
    assert [(f.code, f.span.start_line) for f in result.findings] == [("JX501", 18)]
    assert result.load_dependent  # where a guess ran away depends on the machine's load: never cached


def test_no_tripwire_is_left_after_the_job(tmp_path: Path) -> None:
    from jaxlint.worker import guards

    _rerun(tmp_path)
    assert not guards.TRIPWIRES.lines


class _RunawayPool:
    """A worker pool whose worker a guess runs away in each time, in the job's next target."""

    def __init__(self) -> None:
        self.runs = 0

    def run(self, job):
        from jaxlint.engine.pool import WorkerFailure

        target = next(t.qualname for t in job.targets if t.qualname not in job.runaway)
        self.runs += 1
        raise WorkerFailure("crash", "the watchdog ended it", STUCK_LINE, {"target": target, "guess": True})


def test_guesses_that_run_away_past_the_reruns_are_no_user_error(tmp_path: Path) -> None:
    """Each rerun costs the module's limit again: after MAX_RUNAWAYS reruns the module is given up,
    every target skipped as a runaway (the earlier ones with their own reasons), and no JX902/JX903
    blames the user's code for jaxlint's guesses."""
    from jaxlint.engine.jobs import MAX_RUNAWAYS, run_job

    path = tmp_path / "runaway.py"
    path.write_text(RUNAWAY_IN_C)
    source = read_source(str(path))
    config = load_config([str(path)])
    targets = file_targets(str(path), source.text, config, frozenset())[0]
    job = make_job(source, targets, [r.code for r in all_rules()], config.settings())
    pool = _RunawayPool()
    result = run_job(pool, job, [r.code for r in all_rules()])
    assert pool.runs == MAX_RUNAWAYS + 1
    assert result.findings == []
    skipped = {s.target: (s.kind, s.reason) for s in result.skipped}
    assert {kind for kind, _ in skipped.values()} == {"runaway"}
    first = targets[0].qualname
    assert "the module's other functions were analyzed again without it" in skipped[first][1]
    assert "ran away in this module 3 times" in skipped[targets[-1].qualname][1]
