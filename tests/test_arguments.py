"""Where a target's abstract arguments come from: its first call during import, or a hint.

One project, one check: every target contains a vmap (so the scanner makes it a target) and is
called once at import in a different way; ``traced`` says with which signature it was traced.
The check runs in the test process (helpers.check_in_process).
"""

from dataclasses import asdict

import pytest
from helpers import check_in_process

from jaxlint.rules import all_rules

CALLS = """\
from functools import partial
from typing import NamedTuple

import numpy as np
import jax
import jax.numpy as jnp


class Pair(NamedTuple):
    a: jax.Array
    b: jax.Array


def double(v):
    return v * 2


def with_dict(d):
    return jax.vmap(double)(d["w"]) + d["b"]


def with_tuple(t):
    return jax.vmap(double)(t[0]) + t[1]


def with_list(items):
    return jax.vmap(double)(items[0]) + items[1]


def with_namedtuple(p):
    return jax.vmap(double)(p.a) + p.b


@partial(jax.jit, static_argnums=1)
def with_static(x, n):
    return jax.vmap(double)(x) * n


@jax.jit
def via_lower(x):
    return jax.vmap(double)(x)


@jax.jit
def via_trace(x):
    return jax.vmap(double)(x)


def plain(x):
    return jax.vmap(double)(x)


jitted_plain = jax.jit(plain)


def closure(x, y):
    return jax.vmap(lambda v: v + x)(y)  # x is a cell variable


def keywords(x, *rest, scale, **options):
    return jax.vmap(double)(x) * scale + options["shift"]


def from_numpy(x):
    return jax.vmap(double)(x)


def never_called(x):
    return jax.vmap(double)(x)


class Model:
    def __init__(self, k):
        self.k = k

    def apply(self, x):
        return jax.vmap(double)(x) * self.k

    @partial(jax.jit, static_argnums=0)
    def jitted(self, x):
        return jax.vmap(double)(x) * self.k

    @staticmethod
    def static(x):
        return jax.vmap(double)(x)

    @classmethod
    def klass(cls, x):
        return jax.vmap(double)(x)


x = jnp.ones((4, 3))
v = jnp.ones(3)
with_dict({"w": x, "b": v})
with_tuple((x, v))
with_list([x, v])
with_namedtuple(Pair(x, v))
with_static(x, 3)
via_lower.lower(x)
via_trace.trace(jax.ShapeDtypeStruct((5, 3), jnp.int32))
jitted_plain(jnp.ones((2, 2)))
closure(1.0, x)
keywords(x, v, scale=2.0, shift=v)
from_numpy(np.ones((2, 3)))  # float64 NumPy data: JAX makes it float32 (x64 is off)
model = Model(2.0)
model.apply(x)
model.jitted(x)
Model.static(x)
Model.klass(x)
"""

# Wrapper stacks the module calls with the batch: each is traced with what the module passed to
# the outermost wrapper (the batch), through the same stack; a function the module wraps in an
# expression of its own (jax.vmap(row)(x)) is traced alone, with what it received (one row).
# Bodies use lax.map (which makes them targets), not jax.vmap: jaxlint's vmap output markers do not
# survive an outer vmap on JAX 0.4.35 (optimization_barrier has no batching rule there).
STACKS = """\
from functools import partial

import jax
import jax.numpy as jnp


@jax.jit
@jax.vmap
def jit_of_vmap(i):
    return jnp.nonzero(jnp.arange(8) > i, size=4, fill_value=-1)[0]


@jax.vmap
@jax.jit
def vmap_of_jit(x):
    return jax.lax.map(jnp.sin, x)


@partial(jax.jit, static_argnums=1)
@partial(jax.vmap, in_axes=(0, None))
def static_of_vmap(x, n):
    return jnp.where(x > n, x, 0.0)


@jax.custom_jvp
@jax.jit
def custom_of_jit(x):
    return jax.lax.map(jnp.sin, x)


@custom_of_jit.defjvp
def _custom_of_jit_jvp(primals, tangents):
    return custom_of_jit(primals[0]), tangents[0]


@jax.checkpoint
@jax.vmap
def checkpoint_of_vmap(x):
    return jax.lax.map(jnp.sin, x)


@jax.jit
@jax.vmap
def lowered_rows(x):
    return x + 1


def row(x):
    return jax.vmap(jnp.cos)(x)


class Table:
    def __init__(self, k):
        self.k = k

    @partial(jax.jit, static_argnums=0)
    @partial(jax.vmap, in_axes=(None, 0))
    def rows(self, x):
        return x * self.k


x = jnp.ones((6, 3))
jit_of_vmap(jnp.arange(81))
vmap_of_jit(x)
static_of_vmap(jnp.ones(5), 2)  # a partial's static argument: the call's n=2, rows of f32[5]
custom_of_jit(x)
checkpoint_of_vmap(jnp.ones((7, 2)))
lowered_rows.lower(jnp.ones((9, 2)))
jax.vmap(row)(x)
table = Table(3.0)
table.rows(jnp.ones(4))
"""

HINTS = """\
import jax
import jax.numpy as jnp


# jaxlint: args x=f32[b, 3]
def symbolic(x):
    return jax.vmap(lambda row: row * 2)(x)


# jaxlint: args x=f32[b, n], w=f32[n]
def shared_dims(x, w):
    return jax.vmap(lambda row: row @ w)(x)


# jaxlint: args x=f32[7, 2]
def hint_wins(x):
    return jax.vmap(lambda row: row * 2)(x)


hint_wins(jnp.ones((3, 3)))
"""


@pytest.fixture(scope="module")
def traced(tmp_path_factory):
    root = tmp_path_factory.mktemp("arguments")
    (root / "calls.py").write_text(CALLS)
    (root / "hints.py").write_text(HINTS)
    (root / "stacks.py").write_text(STACKS)
    result = check_in_process([str(root)], all_rules())
    traced = {(fa.source.path.rsplit("/", 1)[1], t["target"]): t
              for fa in result.files if fa.result for t in map(asdict, fa.result.traced)}
    skipped = {(path.rsplit("/", 1)[1], s.target): s.reason for path, s in result.skipped}
    failures = {(f.path.rsplit("/", 1)[1], f.target): f.message for f in result.findings
                if f.code.startswith("JX9")}
    return traced, skipped, failures


def has_jax_export() -> bool:
    """jax.export (symbolic dimensions) needs absl-py on JAX 0.4.35, which JAX does not install."""
    try:
        from jax import export  # noqa: F401
    except ImportError:
        return False
    return True


def test_import_calls_give_no_analysis_failures(traced):
    _, _, failures = traced
    assert {key: message for key, message in failures.items() if key[0] in ("calls.py", "stacks.py")} == {}


@pytest.mark.parametrize("target, signature", [
    ("with_dict", "{'b': f32[3], 'w': f32[4,3]}"),
    ("with_tuple", "(f32[4,3], f32[3])"),
    ("with_list", "[f32[4,3], f32[3]]"),
    ("with_namedtuple", "(f32[4,3], f32[3])"),  # a NamedTuple prints as its fields
    ("with_static", "f32[4,3], 3"),  # static argument: its value
    ("via_lower", "f32[4,3]"),
    ("via_trace", "i32[5,3]"),
    ("jitted_plain", "f32[2,2]"),  # jax.jit(plain) bound to a name: the wrapped function's call
    ("closure", "1.0, f32[4,3]"),
    ("keywords", "f32[4,3], f32[3], scale=2.0, shift=f32[3]"),
    ("from_numpy", "f32[2,3]"),
    ("Model.apply", "<Model object>, f32[4,3]"),
    ("Model.jitted", "<Model object>, f32[4,3]"),
    ("Model.static", "f32[4,3]"),
    ("Model.klass", "f32[4,3]"),  # cls is bound already, not an argument
])
def test_first_import_call_gives_the_arguments(traced, target, signature):
    found, _, _ = traced
    assert found[("calls.py", target)]["source"] == "import-call"
    assert found[("calls.py", target)]["signature"] == signature


@pytest.mark.parametrize("target, signature", [
    ("jit_of_vmap", "i32[81]"),  # pgx's shogi.py: not the row (i32[]) vmap gave the function
    ("vmap_of_jit", "f32[6,3]"),
    ("static_of_vmap", "f32[5], 2"),
    ("custom_of_jit", "f32[6,3]"),
    ("checkpoint_of_vmap", "f32[7,2]"),
    ("lowered_rows", "f32[9,2]"),
    ("row", "f32[3]"),  # jax.vmap(row)(x): row itself is traced, with the row it received
    ("Table.rows", "<Table object>, f32[4]"),
])
def test_a_wrapper_stack_is_traced_with_what_the_module_passed(traced, target, signature):
    found, _, failures = traced
    assert ("stacks.py", target) not in failures, failures[("stacks.py", target)]
    assert found[("stacks.py", target)]["source"] == "import-call"
    assert found[("stacks.py", target)]["signature"] == signature


def test_target_never_called_is_skipped_without_inference(tmp_path):
    (tmp_path / "calls.py").write_text(CALLS)
    (tmp_path / "jaxlint.toml").write_text("infer-arguments = false\n")
    result = check_in_process([str(tmp_path)], all_rules())
    found = {(fa.source.path.rsplit("/", 1)[1], t.target) for fa in result.files if fa.result for t in fa.result.traced}
    skipped = {(path.rsplit("/", 1)[1], s.target): s.reason for path, s in result.skipped}
    assert ("calls.py", "never_called") not in found
    assert skipped[("calls.py", "never_called")] == "no abstract arguments known"


def test_target_never_called_gets_inferred_arguments_by_default(traced):
    found, skipped, _ = traced
    assert ("calls.py", "never_called") not in skipped
    assert (found[("calls.py", "never_called")]["source"], found[("calls.py", "never_called")]["signature"]) \
        == ("inferred", "x=f32[n]")


needs_export = pytest.mark.skipif(not has_jax_export(), reason="jax.export cannot be imported here")


@pytest.mark.parametrize("target, signature", [
    pytest.param("symbolic", "x=f32[b,3]", marks=needs_export),
    # One symbolic n for both arguments: the matmul's dimensions unify.
    pytest.param("shared_dims", "x=f32[b,n], w=f32[n]", marks=needs_export),
    ("hint_wins", "x=f32[7,2]"),  # a hint takes precedence over the import call
])
def test_hint_gives_the_arguments(traced, target, signature):
    found, _, failures = traced
    assert ("hints.py", target) not in failures, failures[("hints.py", target)]
    assert found[("hints.py", target)]["source"] == "hint"
    assert found[("hints.py", target)]["signature"] == signature
