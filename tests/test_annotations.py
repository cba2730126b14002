"""jaxtyping annotations as a source of abstract arguments, end to end through ``check``.

One project, one check (the modules below), in the test process (helpers.check_in_process); each
target contains a vmap, so the scanner makes it a target, and none is called at import unless a
test is about precedence. Whether the worker imports jaxtyping is the worker's own state: that
test keeps the real worker.
"""
import json
from dataclasses import asdict

import pytest
from helpers import check_in_process

pytest.importorskip("jaxtyping")  # only to check that it is installed: the worker imports it

from jaxlint.engine.check import check  # noqa: E402
from jaxlint.rules import all_rules  # noqa: E402

DTYPES = {  # annotation -> dtype as the signature prints it
    "Float": "f32", "Float32": "f32", "Float16": "f16", "BFloat16": "bf16",
    "Float64": "f32",  # x64 is off: JAX would make the array f32
    "Int": "i32", "Int8": "i8", "Integer": "i32", "UInt": "u32", "UInt8": "u8",
    "Bool": "bool", "Complex": "c64", "Complex64": "c64", "Inexact": "f32", "Real": "f32",
    "Num": "f32", "Shaped": "f32", "Key": "key<fry>",
}

ANNOTATED = """\
from functools import partial
from typing import Optional

import jax
import jax.numpy as jnp
import numpy as np
import jaxtyping
from jaxtyping import Array, Float, Float32, Int, Key, PRNGKeyArray, Scalar


def blackbox_function(x, y):  # given black box, cannot be split
    x = x + 1  # guaranteed not to depend on y
    y = x * y
    return x, y


@jax.jit
def founding(x: Float[Array, ""], y: Float[Array, "batch"]):
    x, y = jax.vmap(blackbox_function, in_axes=(None, 0))(x, y)
    return x[0], y


def shared(a: Float[Array, "n"], b: Float[Array, "n"]):
    return jax.vmap(lambda u, v: u + v)(a, b)


def mismatched(a: Float[Array, "n"], b: Float[Array, "m"]):
    return jax.vmap(lambda u, v: u + v)(a, b)


def fixed(x: Float32[Array, "n 3"], w: Float32[Array, "3 4"]):
    return jax.vmap(lambda row: row @ w)(x)


def forms(a: Float[jax.Array, "n"], b: Float[np.ndarray, "n"], c: jaxtyping.Float[jaxtyping.Array, "n"]):
    return jax.vmap(lambda u, v, w: u + v + w)(a, b, c)


def dims(a: Float[Array, "#n"], b: Float[Array, "k=3"], c: Float[Array, "_"], d: Float[Array, "2*n"]):
    return jax.vmap(lambda u: u)(a), b, c, d


def keyed(key: Key[Array, ""], x: Float[Array, "n"]):
    return jax.vmap(lambda v: v * 2)(x) + jax.random.normal(key, x.shape)


def legacy_union_key(key: PRNGKeyArray, x: Scalar):
    return jax.vmap(lambda v: v)(jax.random.split(key, 3)), x


def variadic(x: Float[Array, "*batch n"]):
    return jax.vmap(lambda v: v)(x)


def ellipsis(x: Float[Array, "... n"]):
    return jax.vmap(lambda v: v)(x)


def static_needed(x: Float[Array, "n"], n: int):
    return jax.vmap(lambda v: v * n)(x)


def unannotated(x: Float[Array, "n"], y):
    return jax.vmap(lambda v: v * y)(x)


def optional_needed(x: Float[Array, "n"], mask: Optional[Float[Array, "n"]]):
    return jax.vmap(lambda v: v)(x)


def defaults(x: Float[Array, "n"], scale: float = 2.0, mode="double", mask: Optional[Float[Array, "n"]] = None,
             *rest, **options):
    assert mode == "double" and mask is None
    return jax.vmap(lambda v: v * scale)(x)


@partial(jax.jit, static_argnames="k")
def jit_static(x: Float[Array, "n"], k: int = 2):
    return jax.vmap(lambda v: v * k)(x)


def positional(x: Float[Array, "n"], /, y: Int[Array, "n"], *, z: Float[Array, ""]):
    return jax.vmap(lambda u, v: u + v + z)(x, y)


class Model:
    def apply(self, x: Float[Array, "n"]):
        return jax.vmap(lambda v: v)(x)

    @staticmethod
    def static(x: Float[Array, "n"]):
        return jax.vmap(lambda v: v)(x)

    @classmethod
    def klass(cls, x: Float[Array, "n"]):
        return jax.vmap(lambda v: v)(x)
"""

FUTURE = """\
from __future__ import annotations

from dataclasses import asdict

from typing import TYPE_CHECKING

import jax
from jaxtyping import Array, Float, Int

if TYPE_CHECKING:
    from collections.abc import Sequence  # never bound at run time


def strings(x: Float[Array, "b n"], y: Int[Array, "n"]):
    return jax.vmap(lambda row: row + y)(x)


def unresolvable(x: Float[Array, "b"], names: Sequence[str] = ()):
    return jax.vmap(lambda v: v)(x)
"""

PRECEDENCE = """\
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float


# jaxlint: args x=f32[7]
def hinted(x: Float[Array, "n"]):
    return jax.vmap(lambda v: v * 2)(x)


def annotated_and_called(x: Float[Array, "n"]):
    return jax.vmap(lambda v: v * 2)(x)


def called(x):
    return jax.vmap(lambda v: v * 2)(x)


annotated_and_called(jnp.ones(4))
called(jnp.ones(4))
"""

DTYPE_MODULE = "import jax\nfrom jaxtyping import Array, " + ", ".join(DTYPES) + "\n" + "".join(
    f"\n\ndef dtype_{name}(x: {name}[Array, \"n\"]):\n    return jax.vmap(lambda v: v)(x)\n" for name in DTYPES)


def _checked(root, modules):
    for name, text in modules:
        (root / f"{name}.py").write_text(text)
    result = check_in_process([str(root)], all_rules())
    traced = {(fa.source.path.rsplit("/", 1)[1], t["target"]): t
              for fa in result.files if fa.result for t in map(asdict, fa.result.traced)}
    skipped = {(path.rsplit("/", 1)[1], s.target): s.reason for path, s in result.skipped}
    return result, traced, skipped


@pytest.fixture(scope="module")
def checked(tmp_path_factory):
    return _checked(tmp_path_factory.mktemp("annotations"), [
        ("annotated", ANNOTATED), ("future", FUTURE), ("precedence", PRECEDENCE), ("dtypes", DTYPE_MODULE)])


@pytest.fixture(scope="module")
def checked_without_inference(tmp_path_factory):
    """annotated.py in a project that turned inference off: annotations are the last source."""
    root = tmp_path_factory.mktemp("annotations_only")
    (root / "jaxlint.toml").write_text("infer-arguments = false\n")
    return _checked(root, [("annotated", ANNOTATED)])


def signature(checked, target, file="annotated.py"):
    _, traced, skipped = checked
    assert (file, target) in traced, skipped.get((file, target))
    assert traced[(file, target)]["source"] == "annotations"
    return traced[(file, target)]["signature"]


def test_founding_pattern_from_annotations_alone(checked):
    result, _, _ = checked
    assert signature(checked, "founding") == "x=f32[], y=f32[batch]"
    jx101 = [f for f in result.findings if f.code == "JX101" and f.path.endswith("annotated.py")]
    assert len(jx101) == 1
    vmap_line = ANNOTATED.splitlines().index("    x, y = jax.vmap(blackbox_function, in_axes=(None, 0))(x, y)")
    assert (jx101[0].span.start_line, jx101[0].target) == (vmap_line + 1, "founding")
    assert "(batch copies)" in jx101[0].message  # the symbolic batch size


@pytest.mark.parametrize("target, expected", [
    ("shared", "a=f32[n], b=f32[n]"),  # one symbol n: the two adds unify
    ("fixed", "x=f32[n,3], w=f32[3,4]"),
    ("forms", "a=f32[n], b=f32[n], c=f32[n]"),  # jax.Array, np.ndarray, jaxtyping.Array
    ("dims", "a=f32[n], b=f32[3], c=f32[_1], d=f32[2*n]"),  # #n, n=3, _ (fresh symbol), 2*n
    ("keyed", "key=key<fry>[], x=f32[n]"),
    ("optional_needed", "x=f32[n], mask=f32[n]"),  # a union with no default: its array member
    ("legacy_union_key", "key=key<fry>[], x=f32[]"),  # PRNGKeyArray, Scalar
    ("defaults", "x=f32[n]"),  # defaults (and *rest, **options) are left to the function
    ("jit_static", "x=f32[n]"),
    ("positional", "f32[n], y=i32[n], z=f32[]"),
    ("Model.static", "x=f32[n]"),
    ("Model.klass", "x=f32[n]"),  # cls is bound already
])
def test_annotations_give_the_arguments(checked, target, expected):
    assert signature(checked, target) == expected


def test_distinct_names_are_distinct_dims(checked):
    _, _, skipped = checked
    assert "a=f32[n], b=f32[m]" in skipped[("annotated.py", "mismatched")]  # n + m fails to trace


@pytest.mark.parametrize("name", DTYPES)
def test_dtype_classes(checked, name):
    assert signature(checked, f"dtype_{name}", "dtypes.py") == f"x={DTYPES[name]}[n]"


def test_future_annotations(checked):
    assert signature(checked, "strings", "future.py") == "x=f32[b,n], y=i32[n]"
    # get_type_hints fails on the TYPE_CHECKING-only name; the other annotations still count.
    assert signature(checked, "unresolvable", "future.py") == "x=f32[b]"


UNBUILDABLE = [
    ("variadic", "x: variadic dims *batch cannot be made abstract; add a hint"),
    ("ellipsis", "x: variadic dims ... cannot be made abstract; add a hint"),
    ("static_needed", "static argument n: int unknown; add a hint"),
    ("unannotated", "argument y has no annotation; add a hint"),
    ("Model.apply", "self of Model is unknown; use an examples file"),
]


@pytest.mark.parametrize("target, reason", UNBUILDABLE)
def test_unbuildable_signatures_are_skipped_with_the_reason(checked_without_inference, target, reason):
    _, traced, skipped = checked_without_inference
    assert ("annotated.py", target) not in traced
    assert skipped[("annotated.py", target)] == reason


@pytest.mark.parametrize("target, reason", UNBUILDABLE)
def test_unbuildable_signatures_fall_back_to_inferred_arguments(checked, target, reason):
    """With inference on (the default) a guess traces what the annotations could not describe; the
    annotations' reason stays, as a note of the trace or the start of the skip reason."""
    _, traced, skipped = checked
    guessed = {"variadic": "x=f32[n]", "ellipsis": "x=f32[n]", "static_needed": "x=f32[n], n=2",
               # x vmapped: rank 1 at the first rung, y rank 0 (argsources/rank_floors.py)
               "unannotated": "x=f32[n], y=f32[]",
               "Model.apply": "self=Model(), x=f32[n]"}  # a plain class: built by its __init__
    assert ("annotated.py", target) not in skipped
    entry = traced[("annotated.py", target)]
    assert (entry["source"], entry["signature"], entry["notes"]) == ("inferred", guessed[target], [reason])


def test_precedence(checked):
    _, traced, _ = checked
    assert traced[("precedence.py", "hinted")]["source"] == "hint"  # a hint beats annotations
    assert traced[("precedence.py", "hinted")]["signature"] == "x=f32[7]"
    # Annotations beat the import-time call (f32[4]); without them the call is used.
    assert signature(checked, "annotated_and_called", "precedence.py") == "x=f32[n]"
    assert traced[("precedence.py", "called")]["source"] == "import-call"


def test_no_analysis_failures_besides_the_expected(checked):
    result, _, _ = checked
    failures = {(f.path.rsplit("/", 1)[1], f.target) for f in result.findings
                if f.code.startswith("JX9") or f.code == "JX601"}
    assert failures == {("annotated.py", "mismatched")}


def test_jaxtyping_is_not_imported_for_modules_without_it(tmp_path):
    """The worker looks for jaxtyping annotations only if the user's code imported jaxtyping.
    The real worker: in the test process jaxtyping is imported already (importorskip above)."""
    record = tmp_path / "record.json"
    (tmp_path / "plain.py").write_text(f"""\
import json
import sys

import jax
import jax.numpy as jnp


def f(x: jax.Array):
    with open({str(record)!r}, "w") as out:  # at trace time, after the argument sources ran
        json.dump("jaxtyping" in sys.modules, out)
    return jax.vmap(lambda v: v)(x)


f(jnp.ones(3))
""")
    result = check([str(tmp_path)], all_rules())
    assert [t["source"] for fa in result.files if fa.result for t in map(asdict, fa.result.traced)] == ["import-call"]
    assert json.loads(record.read_text()) is False


def test_arrays_only_through_varargs_are_not_guessed(tmp_path):
    """``f(*trees, rtol=...)``: the annotations cannot say how many arrays come through *args;
    calling it with none would be a false trace error."""
    path = tmp_path / "varargs.py"
    path.write_text(
        "import jax\nimport jax.numpy as jnp\nfrom jaxtyping import Array, ArrayLike, Float, PyTree\n\n\n"
        "@jax.jit\ndef total(*xs: PyTree, rtol: Float[ArrayLike, ''] = 0.0) -> Array:\n"
        "    return jnp.sum(xs[0]) * rtol\n")
    result = check_in_process([str(path)], all_rules())
    assert result.findings == []
    [(_, skipped)] = result.skipped
    assert skipped.kind == "no-arguments" and "its arrays come through *args" in skipped.reason
