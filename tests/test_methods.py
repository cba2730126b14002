"""Methods and nested functions end to end: the founding pattern inside each is found and located.

test_arguments.py checks the signatures of methods called at import; here each one holds the
founding pattern (a vmap output that depends on no mapped input, used one row at a time) and the
JX101 finding must point at its vmap call. One project, one check, in the test process
(helpers.check_in_process). Then methods nothing calls: traced with an instance jaxlint builds
(dataclasses, NamedTuples, pytree classes, equinox modules), or counted as not linted with why.
"""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from dataclasses import asdict
from pathlib import Path

import pytest
from helpers import check_in_process, expected_markers, write

from jaxlint.config import load_config
from jaxlint.rules import all_rules

MODULE = """\
import jax
import jax.numpy as jnp


def blackbox(x, y):
    x = x + 1
    return x, x * y


class Plain:
    def __init__(self, k):
        self.k = k  # a plain Python object: self is a static argument

    def apply(self, x, y):
        x, y = jax.vmap(blackbox, in_axes=(None, 0))(x, y)  # PLAIN
        return x[0] * self.k, y

    @staticmethod
    def static(x, y):
        x, y = jax.vmap(blackbox, in_axes=(None, 0))(x, y)  # STATIC
        return x[0], y


@jax.tree_util.register_pytree_node_class
class Params:
    def __init__(self, w, b):
        self.w = w
        self.b = b

    def tree_flatten(self):
        return (self.w, self.b), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)

    @jax.jit
    def apply(self, y):
        x, y = jax.vmap(blackbox, in_axes=(None, 0))(self.w, y)  # PYTREE
        return x[0] + self.b, y


@jax.jit
def outer(x, y):
    def inner(x, y):
        x, y = jax.vmap(blackbox, in_axes=(None, 0))(x, y)  # NESTED
        return x[0], y

    return inner(x * 2, y)


x = jnp.float32(1.0)
y = jnp.arange(10.0)
Plain(2.0).apply(x, y)
Plain.static(x, y)
Params(jnp.ones(3), jnp.float32(0.5)).apply(jnp.ones((10, 3)))
outer(x, y)
"""


def line_of(marker: str) -> int:
    return next(i for i, line in enumerate(MODULE.splitlines(), 1) if line.endswith(f"# {marker}"))


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory):
    root: Path = tmp_path_factory.mktemp("methods")
    (root / "methods.py").write_text(MODULE)
    result = check_in_process([str(root)], all_rules())
    traced = {t["target"]: t for fa in result.files if fa.result for t in map(asdict, fa.result.traced)}
    return result, traced


def test_every_target_is_traced_without_failures(checked) -> None:
    result, traced = checked
    assert result.skipped == []
    assert [f for f in result.findings if f.code.startswith("JX9")] == []
    assert set(traced) == {"Plain.apply", "Plain.static", "Params.apply", "outer"}


@pytest.mark.parametrize("target, marker", [
    ("Plain.apply", "PLAIN"),  # self recorded at import: a plain object, static
    ("Plain.static", "STATIC"),
    ("Params.apply", "PYTREE"),  # self is a pytree: its array leaves are abstract inputs
    ("outer", "NESTED"),  # inner is traced through outer and the finding points inside it
])
def test_founding_pattern_found_where_it_is(checked, target: str, marker: str) -> None:
    result, _ = checked
    found = [f for f in result.findings if f.target == target]
    assert [f.code for f in found] == ["JX101"], [f.message for f in found]
    span = found[0].span
    assert (span.start_line, span.start_col) == (line_of(marker), 15)
    assert found[0].fix is not None and found[0].fix.applicability == "safe"


def test_pytree_self_shows_its_abstract_leaves(checked) -> None:
    _, traced = checked
    assert traced["Params.apply"]["signature"] == "Params(f32[3], f32[]), f32[10,3]"
    assert traced["Plain.apply"]["signature"] == "<Plain object>, f32[], f32[10]"


# ---------------------------------------------------------------------------------------------
# Methods nothing calls (infer-arguments): traced with an instance jaxlint builds from inferred
# field values (worker/argsources/instances.py), or counted as not linted with why.

KINDS = textwrap.dedent('''\
    import dataclasses
    from typing import NamedTuple, TypeVar

    import jax
    import jax.numpy as jnp
    from jax.typing import ArrayLike


    @dataclasses.dataclass
    class Plain:  # not a pytree: built inside the trace, its field an input all the same
        r: jax.Array

        def inverse_root(self):
            return jnp.where(self.r > 0, 1 / jnp.sqrt(self.r), 0.0)  # expect JX501

        def safe_root(self):  # the near miss: the input is guarded, no finding
            return 1 / jnp.sqrt(jnp.where(self.r > 0, self.r, 1.0))


    class Pair(NamedTuple):
        r: jax.Array
        scale: float = 1.0

        def inverse_root(self, x):
            return jnp.where(self.r > 0, x / jnp.sqrt(self.r), 0.0) * self.scale  # expect JX501


    @jax.tree_util.register_pytree_node_class
    class Params:
        def __init__(self, r, w):
            self.r = r
            self.w = w

        def tree_flatten(self):
            return (self.r, self.w), None

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children)

        def inverse_root(self):
            return jnp.where(self.r > 0, self.w / jnp.sqrt(self.r), 0.0)  # expect JX501

        @property
        def log_r(self):
            return jnp.where(self.r > 0, jnp.log(self.r), 0.0)  # expect JX501


    @jax.tree_util.register_pytree_node_class
    class Normal:  # its __init__ refuses abstract values (as numpyro's do): it runs in the trace
        def __init__(self, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0):  # a union: read by its members
            self.loc, self.scale = jnp.broadcast_arrays(loc, scale)

        def tree_flatten(self):
            return (self.loc, self.scale), None

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children)

        def log_prob(self, value: ArrayLike):
            return jnp.where(self.scale > 0, jnp.log(self.scale), 0.0) * (value - self.loc)  # expect JX501


    @dataclasses.dataclass
    class Rows:
        m: jax.Array

        def total(self):
            n, d = self.m.shape  # rank 2: the lower rungs are never tried
            return jnp.sum(jnp.sqrt(jnp.abs(self.m) + 1.0)) / d


    @jax.tree_util.register_pytree_node_class
    class Counts:  # bounds whose defaults are Python ints hold integers: i32, no log1p to suggest
        def __init__(self, low: jax.Array = 0, high: jax.Array = 1):
            self.low, self.high = low, high

        def tree_flatten(self):
            return (self.low, self.high), None

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children)

        def entropy(self):
            return jnp.log(self.high - self.low + 1)


    class Jittable:  # registered when the first instance is made, as distrax's classes are
        def __new__(cls, *args, **kwargs):
            try:
                registered = jax.tree_util.register_pytree_node_class(cls)
            except ValueError:
                registered = cls
            return object.__new__(registered)

        def tree_flatten(self):
            return tuple(self.__dict__.values()), tuple(self.__dict__)

        @classmethod
        def tree_unflatten(cls, names, values):
            instance = object.__new__(cls)
            instance.__dict__ = dict(zip(names, values))
            return instance


    EventT = TypeVar("EventT", bound=jax.Array)


    class Exponential(Jittable):
        def __init__(self, rate: ArrayLike):
            self.rate = rate

        def log_prob(self, value: EventT):  # a type variable: read by its bound
            return jnp.log(self.rate) - self.rate * value
    ''')


@pytest.fixture(scope="module")
def kinds(tmp_path_factory: pytest.TempPathFactory):
    root: Path = tmp_path_factory.mktemp("kinds")
    path = write(root, "kinds", KINDS)
    (root / "pyproject.toml").write_text("[tool.jaxlint]\n")
    return check_in_process([str(path)], all_rules(), config=load_config([str(path)]))


def test_methods_of_each_kind_of_class_are_traced_with_a_built_instance(kinds) -> None:
    assert {(f.code, f.span.start_line) for f in kinds.findings} == expected_markers(KINDS)
    assert all(f.arguments == "inferred" for f in kinds.findings)
    assert kinds.skipped == []
    signatures = {t.target: t.signature for fa in kinds.files for t in fa.result.traced}
    assert signatures == {
        "Plain.inverse_root": "self=Plain(r=f32[])", "Plain.safe_root": "self=Plain(r=f32[])",
        "Pair.inverse_root": "self=Pair(r=f32[], scale=f32[]), x=f32[]",
        "Params.inverse_root": "self=Params(r=f32[], w=f32[])", "Params.log_r": "self=Params(r=f32[], w=f32[])",
        "Normal.log_prob": "self=Normal(loc=f32[], scale=f32[]), value=f32[]",
        "Rows.total": "self=Rows(m=f32[n,n])", "Counts.entropy": "self=Counts(low=i32[], high=i32[])",
        "Exponential.log_prob": "self=Exponential(rate=f32[]), value=f32[]",
        "Normal.__init__": "loc=f32[], scale=f32[]",  # its own operations: traced by making an instance
    }


def test_a_finding_in_a_method_names_self_and_its_fields(kinds) -> None:
    [finding] = [f for f in kinds.findings if f.target == "Pair.inverse_root"]
    assert "(seen with arguments jaxlint inferred: self=Pair(r=f32[], scale=f32[]), x=f32[]; " in finding.message


UNBUILDABLE = textwrap.dedent('''\
    from __future__ import annotations

    import abc
    import dataclasses

    import jax
    import jax.numpy as jnp


    class Plain:
        def __init__(self, r, model):
            self.r = model(r)

        def inverse_root(self):
            return jnp.where(self.r > 0, 1 / jnp.sqrt(self.r), 0.0)


    @dataclasses.dataclass
    class WithFunction:
        layers: tuple

        def inverse_root(self, x):
            return jnp.where(x > 0, 1 / jnp.sqrt(self.layers[0](x)), 0.0)


    @dataclasses.dataclass
    class Base(abc.ABC):
        r: jax.Array

        @abc.abstractmethod
        def scale(self): ...

        def inverse_root(self):
            return jnp.where(self.r > 0, self.scale() / jnp.sqrt(self.r), 0.0)


    @jax.tree_util.register_pytree_node_class
    class Refuses:
        def __init__(self, r):
            raise ValueError("made only by a factory")

        def tree_flatten(self):
            return (self.r,), None

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children)

        def inverse_root(self):
            return jnp.where(self.r > 0, 1 / jnp.sqrt(self.r), 0.0)
    ''')


def test_a_class_no_instance_can_be_built_of_is_counted_with_why(tmp_path: Path) -> None:
    path = write(tmp_path, "unbuildable", UNBUILDABLE)
    (tmp_path / "pyproject.toml").write_text("[tool.jaxlint]\n")
    result = check_in_process([str(path)], all_rules(), config=load_config([str(path)]))
    assert result.findings == []
    skipped = {s.target: (s.kind, s.reason) for _, s in result.skipped}
    assert set(skipped) == {"Plain.inverse_root", "WithFunction.inverse_root", "Base.inverse_root",
                            "Refuses.inverse_root"}
    assert {kind for kind, _ in skipped.values()} == {"no-arguments"}
    why = "arguments not inferred: no {} instance: {}"
    assert skipped["Plain.inverse_root"][1] == why.format("Plain", "self.model (a function, pytree or object, by its name)")
    assert skipped["WithFunction.inverse_root"][1] == why.format("WithFunction", "self.layers: tuple (its item [0] is called)")
    assert skipped["Base.inverse_root"][1] == why.format(
        "Base", "an abstract class, and no concrete subclass in its package inherits the method")
    # An __init__ that raises: each guess fails in the trace, and the reason quotes the error.
    assert skipped["Refuses.inverse_root"][1].startswith("no inferred signature traced: self=Refuses(r=f32[]): ")
    assert "made only by a factory" in skipped["Refuses.inverse_root"][1]


EQUINOX = textwrap.dedent('''\
    import equinox as eqx
    import jax
    import jax.numpy as jnp


    class Radial(eqx.Module):
        r: jax.Array
        k: int = eqx.field(static=True, default=2)  # static: its default, not an input

        def __call__(self, x):
            return jnp.where(self.r > 0, x / jnp.sqrt(self.r), 0.0) * self.k  # expect JX501

        @eqx.filter_jit
        def safe(self):
            return jnp.sqrt(jnp.abs(self.r) + 1.0)


    class Wrapper(eqx.Module):
        inner: Radial  # a field holding another module: built by the same rules

        def __call__(self, x):
            return jnp.tanh(self.inner(x))
    ''')


def test_an_equinox_module_is_built_from_its_fields(tmp_path: Path) -> None:
    pytest.importorskip("equinox")
    path = write(tmp_path, "radial", EQUINOX)
    (tmp_path / "pyproject.toml").write_text("[tool.jaxlint]\n")
    result = check_in_process([str(path)], all_rules(), config=load_config([str(path)]))
    assert {(f.code, f.span.start_line) for f in result.findings} == expected_markers(EQUINOX)
    signatures = {t.target: t.signature for fa in result.files for t in fa.result.traced}
    assert signatures == {"Radial.__call__": "self=Radial(r=f32[], k=2), x=f32[]",
                          "Radial.safe": "self=Radial(r=f32[], k=2)",
                          "Wrapper.__call__": "self=Wrapper(inner=Radial(r=f32[], k=2)), x=f32[]"}
    assert result.skipped == []


def test_a_jaxtyping_field_gives_its_rank_and_dtype(tmp_path: Path) -> None:
    pytest.importorskip("jaxtyping")
    path = write(tmp_path, "typed", textwrap.dedent('''\
        import dataclasses

        import jax.numpy as jnp
        from jaxtyping import Array, Float, Int


        @dataclasses.dataclass
        class Grid:
            points: Float[Array, "n 3"]
            counts: Int[Array, "n"]

            def mean(self):
                return jnp.sum(self.points, axis=0) / jnp.maximum(jnp.sum(self.counts), 1)
        '''))
    (tmp_path / "pyproject.toml").write_text("[tool.jaxlint]\n")
    result = check_in_process([str(path)], all_rules(), config=load_config([str(path)]))
    signatures = {t.target: t.signature for fa in result.files for t in fa.result.traced}
    assert signatures == {"Grid.mean": "self=Grid(points=f32[n,3], counts=i32[n])"}


def test_a_test_class_is_not_made_a_target(tmp_path: Path) -> None:
    """In a test file, a class's methods are targets, a test class's are not (pytest makes its
    instances): neither traced nor counted as skipped."""
    path = write(tmp_path, "test_radial", textwrap.dedent('''\
        import dataclasses

        import jax
        import jax.numpy as jnp


        @dataclasses.dataclass
        class Radial:
            r: jax.Array

            def inverse_root(self):
                return jnp.where(self.r > 0, 1 / jnp.sqrt(self.r), 0.0)  # expect JX501


        class TestRadial:
            def make(self):
                return Radial(jnp.ones(3))

            def test_root(self):
                assert self.make().inverse_root().shape == (3,)
        '''))
    (tmp_path / "pyproject.toml").write_text("[tool.jaxlint]\n")
    result = check_in_process([str(path)], all_rules(), config=load_config([str(path)]))
    assert [(f.code, f.target) for f in result.findings] == [("JX501", "Radial.inverse_root")]
    assert [t.target for fa in result.files for t in fa.result.traced] == ["Radial.inverse_root"]
    assert result.skipped == []


def test_the_issue_example_from_a_plain_check(tmp_path: Path) -> None:
    """issue 48: a dataclass whose method computes ``jnp.where(r > 0, 1 / jnp.sqrt(r), 0)`` from
    its field gives JX501 from ``jaxlint check``, with no configuration."""
    (tmp_path / "radial.py").write_text(textwrap.dedent('''\
        import dataclasses

        import jax
        import jax.numpy as jnp


        @dataclasses.dataclass
        class Radial:
            r: jax.Array

            def inverse_root(self):
                return jnp.where(self.r > 0, 1 / jnp.sqrt(self.r), 0)
        '''))
    run = subprocess.run([sys.executable, "-m", "jaxlint", "check", "--isolated", "--no-cache", "--output-format",
                          "json", "radial.py"], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert run.returncode == 1, run.stderr
    [finding] = json.loads(run.stdout)
    assert (finding["code"], finding["location"]["row"], finding["arguments"]) == ("JX501", 12, "inferred")
    assert "self=Radial(r=f32[])" in finding["message"]


def test_explain_names_self_and_its_fields(tmp_path: Path) -> None:
    (tmp_path / "pair.py").write_text(textwrap.dedent('''\
        from typing import NamedTuple

        import jax
        import jax.numpy as jnp


        class Pair(NamedTuple):
            r: jax.Array
            scale: float = 1.0

            def inverse_root(self, x):
                return jnp.where(self.r > 0, x / jnp.sqrt(self.r), 0.0) * self.scale
        '''))
    run = subprocess.run([sys.executable, "-m", "jaxlint", "explain", "pair.py::Pair.inverse_root"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    assert "arguments (inferred): self: Pair(r=f32[], scale=f32[]), x: f32[]\n" in run.stdout


STACK = textwrap.dedent('''\
    import dataclasses

    import jax
    import jax.numpy as jnp


    @dataclasses.dataclass
    class Stack:
        m: jax.Array

        def total(self):  # rank 3 from its body: past the ladder's rungs, taken as the body shows
            b, r, c = self.m.shape
            return jnp.where(self.m > 0, jnp.log(self.m), 0.0).sum() / (b * r * c)  # expect JX501
    ''')


def test_a_field_the_body_reads_at_rank_three_gets_that_rank(tmp_path: Path) -> None:
    path = write(tmp_path, "stack", STACK)
    (tmp_path / "pyproject.toml").write_text("[tool.jaxlint]\n")
    result = check_in_process([str(path)], all_rules(), config=load_config([str(path)]))
    assert {(f.code, f.span.start_line) for f in result.findings} == expected_markers(STACK)
    assert {t.target: t.signature for fa in result.files for t in fa.result.traced} == {
        "Stack.total": "self=Stack(m=f32[n,n,n])"}
