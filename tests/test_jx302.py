"""JX302 missing-donation: its spans, messages and display-only fixes, on the findings of its case
(tests/rules/JX302.py, whose marked lines test_rule_cases.py checks), and the import its edit adds.

Analyzed in the test process (helpers.check_in_process); JX302's fix is display-only: --fix applies
nothing, so no test here needs the worker.
"""
from __future__ import annotations

from pathlib import Path

from helpers import case_line, case_source, check_in_process, checked_case, position, write

from jaxlint.config.selection import select_rules
from jaxlint.model import Finding

CASE = case_source("JX302").read_text(encoding="utf-8")


def case_findings() -> dict[str, list[Finding]]:
    by_target: dict[str, list[Finding]] = {}
    for finding in checked_case("JX302")[1].findings:
        by_target.setdefault(finding.target, []).append(finding)
    return by_target


# The bare decorator in a module that does not import functools: the display-only edit adds it.
NO_FUNCTOOLS = '''\
import jax
import jax.numpy as jnp


@jax.jit
def step(state):
    return state * 0.5


state = jnp.ones((1024, 512), jnp.float32)
state = step(state)
'''

def test_missing_donation_findings() -> None:
    found = case_findings()
    assert set(found) == {"step", "update", "half_donated", "advance", "kw_step"}
    [step] = found["step"]
    assert (step.span.start_line, step.span.start_col) == position(CASE, "step(state, batch):  # expect")
    line = position(CASE, "state, loss = step(state, batch)")[0]
    assert step.message.startswith(f"argument 'state' (float32[1024,512], 2.0 MiB, rebound by the call on line "
                                   f"{line}) is replaced by an output of the same shape and dtype, but not "
                                   "donated; add donate_argnums=(0,)")
    assert "add donate_argnums=(0,)" in step.message and "2097152 bytes of extra device memory" in step.message
    assert step.cost.bytes == 2097152 and step.cost.basis == "shapes"
    assert step.fix.applicability == "display-only"
    [edit] = step.fix.edits
    assert edit.content == "functools.partial(jax.jit, donate_argnums=(0,))"
    assert (edit.span.start_line, edit.span.start_col) == position(CASE, "jax.jit\ndef step")


def test_pytree_parameter_totals_its_leaves() -> None:
    [update] = case_findings()["update"]
    line = case_line("JX302", "params, opt = update(params, opt, 2)")
    assert update.message.startswith(f"arguments 'params' (2 of its 2 arrays, 2.0 MiB, rebound by the call on "
                                     f"line {line}) and 'opt' (float32[1024,512], 2.0 MiB, rebound by the call on "
                                     f"line {line}) are replaced")
    assert "add donate_argnums=(0, 1) " in update.message and "4194304 bytes of extra" in update.message
    assert update.cost.bytes == 4194304
    [edit] = update.fix.edits
    assert edit.content == ", donate_argnums=(0, 1)"
    line, col = position(CASE, "static_argnums=(2,))")
    assert (edit.span.start_line, edit.span.start_col) == (line, col + len("static_argnums=(2,)"))


def test_partly_donated_jit_bound_and_keywords() -> None:
    found = case_findings()
    [half] = found["half_donated"]
    assert half.message.startswith("argument 'a' ")
    assert [e.content for e in half.fix.edits] == ["(0, 1)"]
    [bound] = found["advance"]
    line, col = position(CASE, "jax.jit(_advance)")
    assert (bound.span.start_line, bound.span.start_col, bound.span.end_col) == (line, col, col + 17)
    assert [e.content for e in bound.fix.edits] == [", donate_argnums=(0,)"]
    [keyword] = found["kw_step"]  # keyword arguments flatten sorted by name: batch, then state
    assert keyword.message.startswith("argument 'state' (float32[1024,512], 2.0 MiB, rebound")


def test_display_only_fix_adds_the_import_and_is_never_applied(tmp_path: Path) -> None:
    path = write(tmp_path, "jx302_no_functools", NO_FUNCTOOLS)
    result = check_in_process([str(path)], select_rules(["JX302"], None), fix=True)
    assert path.read_text(encoding="utf-8") == NO_FUNCTOOLS
    assert result.fixed == [] and result.fix_rejected == []
    [finding] = result.findings
    assert finding.code == "JX302"
    assert [(e.span.start_line, e.span.start_col, e.content) for e in finding.fix.edits] == [
        (1, 0, "import functools\n"), (5, 1, "functools.partial(jax.jit, donate_argnums=(0,))")]
