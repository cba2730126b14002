"""JX204 non-hashable-static-arg: its messages and fixes, on the findings of its case
(tests/rules/JX204.py, whose marked lines test_rule_cases.py checks), and the failure it explains."""
from __future__ import annotations

from pathlib import Path

import pytest
from helpers import case_line, case_source, checked_case

from jaxlint.model import Finding

MODULE = case_source("JX204").read_text(encoding="utf-8")


def at(text: str) -> Finding:
    _, result = checked_case("JX204")
    [finding] = [f for f in result.findings if f.span.start_line == case_line("JX204", text)]
    return finding


def test_messages() -> None:
    listed = at("resize(x, [2, 3])")
    assert listed.severity == "error"
    assert listed.message.startswith("`resize` is jitted with static_argnums=(1,), but static argument 1 "
                                     "(`shape`) is a list, `[2, 3]`")
    assert "ValueError: Non-hashable static arguments are not supported" in listed.message
    line = MODULE.splitlines()[listed.span.start_line - 1]
    assert line[listed.span.start_col:listed.span.end_col] == "resize(x, [2, 3])"  # the call
    assert listed.fix is not None and listed.fix.applicability == "unsafe"
    assert [e.content for e in listed.fix.edits] == ["(2, 3)"]
    assert "static argument `shape` is a list" in at("shape=[2, 3]").message
    array = at("np.array(2.0)")
    assert "static_argnames=('factor',)" in array.message and "an array (numpy.array)" in array.message
    assert array.fix is None
    assert "argument 1 (`factor`) is a dict" in at('{"a": 1}').message
    nested = at("resize.lower")
    assert "is a list, `[2]`" in nested.message and [e.content for e in nested.fix.edits] == ["(2,)"]
    assert "is a set" in at("{2, 3}").message
    assert "list comprehension" in at("[n for n in items]").message
    assert "an array (jax.numpy.asarray)" in at("jnp.asarray([2])").message


FAILING_IMPORT = '''\
from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnums=(1,))
def tile(x, reps):
    return jnp.tile(x, reps)


tile(jnp.ones(3), [2])
'''


def test_explain_the_import_failure(tmp_path: Path) -> None:
    """For the pipeline: JX204 can explain the failure an import (or a trace) stops at."""
    import importlib.util
    import traceback

    from jaxlint.model import Span
    from jaxlint.rules.base import SourceContext
    from jaxlint.rules.jx204_non_hashable_static_arg import NonHashableStaticArg
    from jaxlint.scan.index import SourceIndex

    path = tmp_path / "fails.py"
    path.write_text(FAILING_IMPORT, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("jx204_fails", path)
    module = importlib.util.module_from_spec(spec)
    with pytest.raises(ValueError) as raised:
        spec.loader.exec_module(module)
    line = [f for f in traceback.extract_tb(raised.value.__traceback__) if f.filename == str(path)][-1].lineno
    assert line == 12
    context = SourceContext(str(path), FAILING_IMPORT, SourceIndex(str(path), FAILING_IMPORT))
    [finding] = NonHashableStaticArg.explain(context, None, raised.value, Span(line, 0, line, 0))
    assert finding.code == "JX204" and finding.span == Span(12, 0, 12, 22)
    assert "static argument 1 (`reps`) is a list, `[2]`" in finding.message
    # Another failure, or another line, is not this rule's to explain.
    assert NonHashableStaticArg.explain(context, None, TypeError("x"), Span(12, 0, 12, 0)) == []
    assert NonHashableStaticArg.explain(context, None, raised.value, Span(8, 0, 8, 0)) == []


