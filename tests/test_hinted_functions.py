"""A hint makes any module-level function or method a target, jitted or not (library numerics
are plain functions); a hint that names nothing is JX905, never dropped in silence."""
from __future__ import annotations

import textwrap
from pathlib import Path

from helpers import check_in_process, expected_markers, write

from jaxlint.rules import all_rules

MODULE = textwrap.dedent('''\
    import jax.numpy as jnp


    # jaxlint: args x=f32[8]
    def safe_log(x):
        return jnp.where(x > 0, jnp.log(x), 0.0)  # expect JX501


    class Losses:
        # jaxlint: args x=f32[8]
        @staticmethod
        def soft(x):
            return jnp.where(x > 0, jnp.sqrt(x), 0.0)  # expect JX501


    def outer():
        # jaxlint: args x=f32[8]  # expect JX905
        def inner(x):
            return jnp.where(x > 0, jnp.log(x), 0.0)
        return inner


    # jaxlint: args x=f32[3]  # expect JX905

    def separated(x):
        return jnp.where(x > 0, jnp.log(x), 0.0)


    def quoted():
        """A hint in a docstring is text, not a hint:
        # jaxlint: args x=f32[3]
        """


    def unhinted(x):
        return jnp.where(x > 0, jnp.log(x), 0.0)
    ''')


def test_a_hint_makes_a_plain_function_a_target(tmp_path: Path) -> None:
    path = write(tmp_path, "numerics", MODULE)
    # Without inference, which would trace the functions without a hint (separated, unhinted) too.
    (tmp_path / "jaxlint.toml").write_text("infer-arguments = false\n")
    result = check_in_process([str(path)], all_rules())
    assert {(f.code, f.span.start_line) for f in result.findings} == expected_markers(MODULE)
    assert result.traced == 2 and result.skipped == []


COUNTED = textwrap.dedent('''\
    import jax
    import jax.numpy as jnp


    # jaxlint: args x=f32[3]
    @jax.jit
    def traced(x):
        return helper(x) * 2


    def helper(x):  # linted through traced
        return jnp.sin(x)


    def plain(x):
        return jnp.cos(x)


    def factory():
        def inner(x):
            return jnp.tan(x)
        return inner


    def no_jax(x):  # calls nothing of jax: not a JAX function
        return x + 1


    # jaxlint: args x=f32[3]
    @jax.jit
    def traced_with_unused(x):
        def unused(y):
            return jnp.exp(y)
        return x * 2
    ''')


def test_the_denominator_is_every_jax_function(tmp_path: Path) -> None:
    from jaxlint.report.coverage import coverage
    from jaxlint.report.summary import summary

    path = write(tmp_path, "counted", COUNTED)
    (tmp_path / "jaxlint.toml").write_text("infer-arguments = false\n")  # plain stays unlinted
    result = check_in_process([str(path)], all_rules())
    assert "linted 3 of 6 JAX functions (2 targets traced)" in summary(result, "none")
    report = coverage(result)
    assert [(f.function, f.linted) for f in report.functions] == [
        ("traced", True), ("helper", True), ("plain", False), ("factory.<locals>.inner", False),
        ("traced_with_unused", True), ("traced_with_unused.<locals>.unused", False)]
    untraced = {u.target: (u.kind, u.hint) for u in report.untraced}
    assert untraced == {"plain": ("not-a-target", "# jaxlint: args x=f32[...]"),
                        "factory.<locals>.inner": ("not-a-target", None),
                        "traced_with_unused.<locals>.unused": ("not-a-target", None)}


SUGGESTED = textwrap.dedent('''\
    import jax
    import jax.numpy as jnp


    def step(x, n: int, flag: bool, key, rate=0.1, *, scale: float):
        return jnp.sin(x) * n * scale * rate * flag + jax.random.normal(key)


    def apply(fn, x):
        return jnp.sin(fn(x))
    ''')


def test_suggested_hints_fit_each_parameter(tmp_path: Path) -> None:
    """Literals for ints and bools, key[] for keys, nothing for a default; no hint for a function
    argument, and the suggested hint traces."""
    from jaxlint.report.coverage import coverage

    path = write(tmp_path, "suggested", SUGGESTED)
    (tmp_path / "jaxlint.toml").write_text("infer-arguments = false\n")  # else step's guess traces it
    untraced = {u.target: (u.hint, u.note) for u in coverage(check_in_process([str(path)], all_rules())).untraced}
    hint, _ = untraced["step"]
    assert hint == "# jaxlint: args x=f32[...], n=1, flag=False, key=key[], scale=f32[]"
    assert untraced["apply"] == (None, "fn takes a function, which a hint cannot write: register a call in an "
                                       "examples file, or run `pytest --jaxlint`")
    path.write_text(SUGGESTED.replace("def step", hint.replace("f32[...]", "f32[3]") + "\ndef step"))
    result = check_in_process([str(path)], all_rules())
    assert result.traced == 1 and result.skipped == []


METHOD = textwrap.dedent('''\
    import jax.numpy as jnp


    class Model:
        def __init__(self, scale):
            self.scale = scale

        # jaxlint: args x=f32[8]
        def apply(self, x):
            return jnp.where(x > 0, jnp.sqrt(x), 0.0) * self.scale  # expect JX501


    class Unused:
        # jaxlint: args x=f32[8]  # expect JX905
        def apply(self, x):
            return jnp.where(x > 0, jnp.sqrt(x), 0.0)


    Model(2.0).apply(jnp.ones(3))  # the instance the hint's call uses
    ''')


def test_a_method_hint_takes_self_from_the_modules_own_call(tmp_path: Path) -> None:
    """A hint cannot write ``self``: the module's import-time call gives the instance, the hint
    the other arguments. A class no one instantiates makes the hint JX905, with the way out."""
    from jaxlint.report.coverage import coverage

    path = write(tmp_path, "methods", METHOD)
    result = check_in_process([str(path)], all_rules())
    assert {(f.code, f.span.start_line) for f in result.findings} == expected_markers(METHOD)
    [traced] = [t for fa in result.files for t in fa.result.traced]
    assert (traced.target, traced.source, traced.signatures) == ("Model.apply", "hint", ["<Model object>, x=f32[8]"])
    [untraced] = [u for u in coverage(result).untraced if u.target == "Unused.apply"]
    assert "register an instance in an examples file" in untraced.note
