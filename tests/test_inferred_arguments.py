"""``infer-arguments``: JAX functions no source describes are traced with a guessed signature; the
first rung of the ladder that traces is kept, none that fails is a finding, and a finding seen
only with guessed arguments says so."""
from __future__ import annotations

import json
import textwrap
from pathlib import Path

from helpers import check_in_process, expected_markers, write

from jaxlint.config import load_config
from jaxlint.report import json_array
from jaxlint.rules import all_rules

MODULE = textwrap.dedent('''\
    import math

    import jax
    import jax.numpy as jnp
    from jaxtyping import Array, Float


    def safe_log(x):
        return jnp.where(x > 0, jnp.log(x), 0.0)  # expect JX501


    def rows(x, w):
        n, d = x.shape  # rank 2: the scalar rung is never tried
        y = x @ w
        return jnp.where(y > 0, jnp.sqrt(y), 0.0)  # expect JX501


    def noisy(key, x, scale: float, steps: int = 3):
        a = jax.random.normal(key, x.shape)
        b = jax.random.normal(key, x.shape)  # expect JX401
        return x + scale * (a + b) * steps


    def first_row(x):
        return jnp.log(x[0])  # a scalar cannot be indexed: rank 1 traces


    def apply(fn, x):  # a function argument: a stand-in, and a guard on x is none on fn(x): quiet
        return jnp.where(x > 0, jnp.log(fn(x)), 0.0)


    def loss(params, x):  # a pytree of parameters indexed by a key: no one-leaf pytree is guessed
        return jnp.where(x > 0, jnp.log(params["w"] * x), 0.0)


    def needs_values(x):
        return jnp.zeros(int(x.sum()))  # no rung traces: skipped, no finding


    class Model:
        def __init__(self, model):  # a plain class whose __init__ takes what no guess gives: counted with why
            self.model = model

        def method(self, x):
            return jnp.where(x > 0, jnp.log(x), 0.0)


    def fill(ys):  # a scan over the symbolic size n: the rules read its length as unknown
        def body(carry, y):
            return jnp.where(jnp.isnan(y), carry, y), carry
        return jax.lax.scan(body, ys[0], ys)[1]


    def set_diags(a, new_diags):  # rank 3 from its body, past the ladder's rungs: taken as the body shows
        n, d, d1 = a.shape
        i = jnp.arange(d)
        b = a.at[:, i, i].set(new_diags)
        return jnp.where(b > 0, jnp.sqrt(b), 0.0)  # expect JX501


    def sixth_axis(x):  # past the ranks jaxlint guesses: skipped with why
        return jnp.log(x) * x.shape[5]


    def scaled(q: Float[Array, "n d"]):  # annotated: symbolic dims, and math.sqrt needs a number
        return jnp.tanh(q) / math.sqrt(q.shape[-1])  # fails with the symbols: traced again with sizes
    ''')


def checked(tmp_path: Path, infer: bool):
    path = write(tmp_path, "numerics", MODULE)
    (tmp_path / "pyproject.toml").write_text(f"[tool.jaxlint]\ninfer-arguments = {str(infer).lower()}\n")
    return check_in_process([str(path)], all_rules(), config=load_config([str(path)]))


def test_plain_numerics_are_traced_with_inferred_arguments(tmp_path: Path) -> None:
    result = checked(tmp_path, infer=True)
    assert {(f.code, f.span.start_line) for f in result.findings} in _expected()
    assert all(f.arguments == "inferred" and "seen with arguments jaxlint inferred: " in f.message
               for f in result.findings)
    signatures = {t.target: t.signature for fa in result.files for t in fa.result.traced}
    assert signatures == {"safe_log": "x=f32[]", "rows": "x=f32[n,n], w=f32[n]",
                          "noisy": "key=key<fry>[], x=f32[], scale=f32[]", "first_row": "x=f32[n]",
                          "fill": "ys=f32[n]", "scaled": "q=f32[8,16]", "set_diags": "a=f32[n,n,n], new_diags=f32[]",
                          "apply": "fn=<stand-in: its first argument>, x=f32[]"}
    skipped = {s.target: s.reason for _, s in result.skipped}
    assert set(skipped) == {"loss", "needs_values", "Model.method", "sixth_axis"}
    assert skipped["sixth_axis"] == ("arguments not inferred: parameter x: its body reads it at rank 6, past the 4 "
                                     "jaxlint guesses")
    assert skipped["Model.method"] == ("arguments not inferred: no Model instance: self.model (a function, pytree "
                                       "or object, by its name)")
    assert skipped["loss"] == ("arguments not inferred: parameter params (a pytree: its code indexes params['w'], "
                               "which a one-leaf pytree has not)")
    assert skipped["needs_values"].startswith("no inferred signature traced: x=f32[]: ")
    rows = [json_array.finding_json(f) for f in result.findings]
    assert {row["arguments"] for row in rows} == {"inferred"}
    json.dumps(rows)


def test_turned_off(tmp_path: Path) -> None:
    result = checked(tmp_path, infer=False)
    assert result.findings == [] and result.traced == 1  # scaled, from its annotations
    assert load_config([str(tmp_path / "elsewhere.py")]).infer_arguments is False


def test_on_by_default(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.jaxlint]\n")
    assert load_config([str(tmp_path / "model.py")]).infer_arguments is True


def _expected() -> list[set[tuple[str, int]]]:
    """The marked findings; before JAX 0.7 JX401 may point at the function's name instead, when
    jax.random's cached jaxpr kept the other draw's traceback (see jx401._location)."""
    from jaxlint.jaxapi.tracebacks import STALE_LIBRARY_TRACEBACKS

    found = expected_markers(MODULE)
    if not STALE_LIBRARY_TRACEBACKS:
        return [found]
    line = next(n for n, text in enumerate(MODULE.splitlines(), 1) if text.startswith("def noisy"))
    return [found, {(code, line if code == "JX401" else number) for code, number in found}]


FOUNDING = textwrap.dedent('''\
    import jax


    def blackbox(x, y):
        x = x + 1
        return x, x * y


    {hint}def mapped(x, y):
        x, y = jax.vmap(blackbox, in_axes=(None, 0))(x, y)
        return x[0], y
    ''')


def test_a_fix_verified_only_at_guessed_shapes_is_not_safe(tmp_path: Path) -> None:
    """JX101's fix is safe where the values were compared at the shapes the function receives (a
    hint says them); at shapes inference guessed it is offered as unsafe, saying why."""
    fixes = {}
    for name, hint in (("guessed", ""), ("hinted", "# jaxlint: args x=f32[3], y=f32[4,3]\n")):
        (tmp_path / name).mkdir()
        path = write(tmp_path / name, "founding", FOUNDING.format(hint=hint))
        (tmp_path / name / "pyproject.toml").write_text("[tool.jaxlint]\n")
        result = check_in_process([str(path)], all_rules(), config=load_config([str(path)]))
        [finding] = [f for f in result.findings if f.code == "JX101"]
        fixes[name] = finding.fix
    assert fixes["hinted"].applicability == "safe"
    assert fixes["guessed"].applicability == "unsafe"
    assert "`mapped` ran only with guessed arguments (x=" in fixes["guessed"].message


RUNAWAY = textwrap.dedent('''\
    import itertools

    import jax.numpy as jnp
    from jaxtyping import Array, Float


    def quadrature(m: Float[Array, "d"]):  # sizes of 8: 10**8 points, a loop in Python
        count = sum(1 for _ in itertools.product(range(10), repeat=len(m)))
        return m * count


    def safe_log(x):
        return jnp.where(x > 0, jnp.log(x), 0.0)  # expect JX501
    ''')


def test_a_guess_that_runs_away_is_abandoned_and_the_module_goes_on(tmp_path: Path, monkeypatch) -> None:
    from jaxlint.worker import guards

    monkeypatch.setattr(guards, "GUESS_SECONDS", 2.0)
    path = write(tmp_path, "runaway", RUNAWAY)
    result = check_in_process([str(path)], all_rules(), config=load_config([str(path)]))
    assert {(f.code, f.span.start_line) for f in result.findings} == expected_markers(RUNAWAY)
    skipped = {s.target: s.reason for _, s in result.skipped}
    assert set(skipped) == {"quadrature"}
    assert "m=f32[8]: ran past 2 s" in skipped["quadrature"], skipped["quadrature"]


VECTORIZED = textwrap.dedent('''\
    from functools import partial

    import jax.numpy as jnp


    @partial(jnp.vectorize, signature="()->(2)")
    def rotation(theta):
        return jnp.array([jnp.cos(theta), jnp.log(1 + theta)])  # expect JX703
    ''')


def test_a_wrapper_that_takes_its_arguments_by_position_is_called_so(tmp_path: Path) -> None:
    # jnp.vectorize counts positional arguments alone: the keyword call fails, the positional one traces
    path = write(tmp_path, "vectorized", VECTORIZED)
    result = check_in_process([str(path)], all_rules(), config=load_config([str(path)]))
    assert {(f.code, f.span.start_line) for f in result.findings} == expected_markers(VECTORIZED)
