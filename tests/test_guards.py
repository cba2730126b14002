"""The worker's time limits (worker/guards.py) nest: an inner limit that ends later adds nothing,
one that ends sooner fires as its own, and a guessed trace's limit (GuessTimeUp) never swallows
an outer limit's TimeUp. Each block spins until a timer stops it: no test asserts a duration."""
from __future__ import annotations

import os
import signal

import pytest

from jaxlint.worker import guards


def _spin() -> None:
    while True:
        pass


def test_a_guess_that_runs_away_raises_its_own(monkeypatch) -> None:
    monkeypatch.setattr(guards, "GUESS_SECONDS", 0.2)
    with pytest.raises(guards.GuessTimeUp):
        with guards.guess_limit(True):
            _spin()
    assert signal.getitimer(signal.ITIMER_REAL)[0] == 0


def test_an_outer_limit_that_ends_sooner_is_not_taken_for_the_guess(monkeypatch) -> None:
    monkeypatch.setattr(guards, "GUESS_SECONDS", 30.0)
    with pytest.raises(guards.TimeUp):
        with guards.time_limit(0.2):
            try:
                with guards.guess_limit(True):
                    _spin()
            except guards.GuessTimeUp:  # pragma: no cover - the failure this test is for
                pytest.fail("the outer limit's TimeUp became the guess's")


def test_an_inner_limit_that_ends_sooner_fires_and_the_outer_one_still_holds() -> None:
    with pytest.raises(guards.TimeUp):
        with guards.time_limit(1.0):
            with pytest.raises(guards.TimeUp):
                with guards.time_limit(0.1):
                    _spin()
            assert 0 < signal.getitimer(signal.ITIMER_REAL)[0] < 1.0  # the outer's, less the time taken
            _spin()
    assert signal.getitimer(signal.ITIMER_REAL)[0] == 0


class _Spinning:
    def __init__(self) -> None:
        _spin()


def test_an_outer_limit_passes_through_a_plain_class_init_as_its_own() -> None:
    """Not InitTimedOut (an Exception: the init's own 3 s, which user code could catch)."""
    from jaxlint.worker import plain_classes

    with pytest.raises(guards.TimeUp):
        with guards.time_limit(0.2):
            plain_classes.guarded_init(_Spinning, {})


def test_a_guess_gets_none_of_the_modules_last_seconds(monkeypatch) -> None:
    from jaxlint.worker import lifeline

    monkeypatch.setattr(lifeline, "job_time_left", lambda: guards.GUESS_MARGIN - 1.0)
    with pytest.raises(guards.GuessTimeUp, match="the module's time was nearly spent"):
        with guards.guess_limit(True):
            pytest.fail("a guess ran with no time left")  # pragma: no cover


def test_a_module_imported_for_jaxlint_keeps_none_of_its_side_effects(tmp_path, monkeypatch, capsys) -> None:
    # argsources import a package's modules for its classes (subclass_modules, forward_refs)
    (tmp_path / "noisy_module_for_guards.py").write_text(
        "import os\nos.environ['JAXLINT_TEST_IMPORTED'] = '1'\nprint('imported')\nVALUE = 3\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("JAXLINT_TEST_IMPORTED", raising=False)
    module = guards.guarded_import("noisy_module_for_guards")
    assert module.VALUE == 3
    assert "JAXLINT_TEST_IMPORTED" not in os.environ and "imported" not in capsys.readouterr().out
    assert guards.guarded_import("no_such_module_for_guards") is None
