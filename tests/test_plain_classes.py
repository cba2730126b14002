"""Methods of plain classes (not a dataclass, NamedTuple or pytree class): ``self`` is made inside
the trace by calling the class with inferred ``__init__`` arguments, under the factories'
safeguards (worker/plain_classes.py); a class whose ``__init__`` refuses the guesses, a test
class, an exception stays untraced, with why. One check per module, in the test process.
"""
from __future__ import annotations

import os
import textwrap
from pathlib import Path

from helpers import check_in_process, write

from jaxlint.config import load_config
from jaxlint.report.coverage import coverage
from jaxlint.rules import all_rules
from jaxlint.worker import plain_classes

PLAIN = textwrap.dedent('''\
    import os

    import jax
    import jax.numpy as jnp

    CALLS = []


    def blackbox(x, y):
        x = x + 1
        return x, x * y


    class Scaler:
        def __init__(self, scale: jax.Array, offset=0.5):
            self.log_scale = jnp.log(scale)
            self.offset = offset
            CALLS.append("init")  # put back: the module's globals are restored
            os.environ["JAXLINT_PLAIN_TEST"] = "1"
            print("made a Scaler")

        def apply(self, x, y):
            x, y = jax.vmap(blackbox, in_axes=(None, 0))(x * jnp.exp(self.log_scale), y)
            return x[0] + self.offset, y
''')


def _checked(tmp_path: Path, name: str, text: str):
    path = write(tmp_path, name, text)
    (tmp_path / "pyproject.toml").write_text("[tool.jaxlint]\n")
    return check_in_process([str(path)], all_rules(), config=load_config([str(path)]))


def test_a_plain_class_is_built_through_its_init_in_the_trace(tmp_path: Path) -> None:
    result = _checked(tmp_path, "plain", PLAIN)
    signatures = {t.target: t.signature for fa in result.files for t in fa.result.traced}
    assert signatures == {"Scaler.apply": "self=Scaler(scale=f32[], offset=f32[]), x=f32[n], y=f32[n]",
                          "Scaler.__init__": "scale=f32[], offset=f32[]"}
    [finding] = [f for f in result.findings if f.code == "JX101"]
    vmap_line = next(n for n, line in enumerate(PLAIN.splitlines(), 1) if "jax.vmap" in line)
    assert (finding.target, finding.span.start_line) == ("Scaler.apply", vmap_line)
    assert "self=Scaler(scale=f32[], offset=f32[])" in finding.message
    # __init__ ran under the trace: its array work is linted, and counted so.
    linted = {f.function: f.linted for f in coverage(result).functions}
    assert linted == {"Scaler.__init__": True, "Scaler.apply": True}
    assert "JAXLINT_PLAIN_TEST" not in os.environ


def test_what_init_changes_is_put_back(tmp_path: Path) -> None:
    """The module's globals keep their names (the list itself, changed in place, stays changed:
    as for a factory's call, jaxlint puts back bindings, not objects)."""
    _checked(tmp_path, "plain", PLAIN)
    assert "JAXLINT_PLAIN_TEST" not in os.environ


NEAR_MISSES = textwrap.dedent('''\
    import time
    import unittest

    import jax
    import jax.numpy as jnp


    class Refuses:
        def __init__(self, scale, count: int):
            if scale > 0:  # a traced value as a Python bool: the guess cannot be used
                self.scale = scale

        def root(self, x):
            return jnp.sqrt(x * self.scale)


    class Slow:
        def __init__(self, scale):
            time.sleep(30)
            self.scale = scale

        def root(self, x):
            return jnp.sqrt(x * self.scale)


    class Failure(Exception):
        def __init__(self, value):
            self.value = value

        def root(self, x):
            return jnp.sqrt(x * self.value)


    class Helpers(unittest.TestCase):
        def scaled(self, x):
            return jax.jit(lambda v: v * 2)(x)
''')


def test_near_misses_stay_untraced_with_why(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(plain_classes, "INIT_SECONDS", 0.5)
    result = _checked(tmp_path, "near_misses", NEAR_MISSES)
    assert [f for f in result.findings if f.code.startswith("JX5")] == []
    skipped = {s.target: s.reason for _, s in result.skipped}
    assert skipped["Refuses.root"].startswith("no inferred signature traced: self=Refuses(scale=f32[], count=2), "
                                              "x=f32[]: ")
    assert "TracerBoolConversionError" in skipped["Refuses.root"]
    assert skipped["Slow.root"].startswith("no inferred signature traced: self=Slow(scale=f32[]), x=f32[]: ")
    assert "Slow(...) ran past 0.5 s" in skipped["Slow.root"]
    why = "arguments not inferred: no {} instance: {}"
    assert skipped["Failure.root"] == why.format("Failure", "an exception class")
    assert skipped["Helpers.scaled"] == why.format("Helpers", "a test class: its test runner makes its instances")


def test_a_test_class_of_a_test_file_is_not_built(tmp_path: Path) -> None:
    """pytest's ``Test*`` class in a test file: a method that is a target is counted, not built."""
    result = _checked(tmp_path, "thing_test", textwrap.dedent('''\
        import jax
        import jax.numpy as jnp


        class TestThing:
            def helper(self, x):
                return jax.vmap(jnp.sin)(x)
    '''))
    skipped = {s.target: s.reason for _, s in result.skipped}
    assert skipped == {"TestThing.helper": "arguments not inferred: no TestThing instance: a test class: "
                                           "its test runner makes its instances"}
    assert [f.function for f in coverage(result).functions] == ["TestThing.helper"]
