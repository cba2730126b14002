"""The ``ast`` scanner (jaxlint.scan) against the libcst scanner it replaced (the reference).

Both run on a corpus of tricky snippets, on every jax source the other tests write, on examples/,
and (slow) on every module of the installed jax, flax, equinox and optax. Their Target lists must
be equal field by field, except for the deliberate differences tested at the end of this file.
"""
from __future__ import annotations

import ast
import importlib.util
import os
import textwrap
from pathlib import Path

import libcst_scan_reference as reference
import pytest

from jaxlint import scan

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent


def both(source: str, path: str = "mod.py") -> tuple[object, object]:
    """(new, reference) results: the targets, or ("error", line, column) for a syntax error.
    Targets only a hint or a jaxtyping annotation makes (kinds "hinted", "annotated", which the
    reference never had) are left out: see test_a_hint_makes_a_plain_function_a_target at the end."""
    results = []
    for module in (scan, reference):
        try:
            results.append([t for t in module.scan_source(path, source) if t.kind not in ("hinted", "annotated")])
        except module.ScanSyntaxError as error:
            results.append(("error", error.line, error.column))
    return results[0], results[1]


def assert_same(source: str, path: str = "mod.py") -> list:
    new, old = both(source, path)
    assert new == old
    return new  # type: ignore[return-value]


CORPUS = {
    "decorator spellings": """
        import jax
        import jax as j
        from jax import jit as J, vmap
        from functools import partial
        import functools as ft

        @jax.jit
        def a(x): return x
        @j.jit(static_argnums=(0,), static_argnames="k")
        def b(n, x, k=1): return x
        @J
        def c(x): return vmap(f)(x)
        @partial(jax.jit, static_argnums=[1], donate_argnums=0)
        def d(x, n): return x
        @ft.partial(J, static_argnames=("n",))
        def e(x, n): return x
        @jax.jit(**opts)
        def g(x): return x
        @partial(*args)
        def h(x): return x
        @partial(k=1, *args)
        def i(x): return x
        @jax.vmap
        @jax.jit
        def k(x): return x
        @jax.jit(static_argnums=N)
        def m(x): return x
    """,
    "lax and dotted imports": """
        import jax.lax
        import jax.lax as lax
        from jax import lax as L
        from jax.lax import scan, fori_loop as F, while_loop
        from jax._src import api
        from jax._src.api import vmap as V
        from jax import _src
        import jax.numpy as jnp

        def a(x): return jax.lax.scan(f, 0, x)
        def b(x): return lax.cond(x, f, g, x) + L.switch(0, [f], x)
        def c(x): return scan(f, 0, x), F(0, 3, f, x), while_loop(c, b, x)
        def d(x): return api.jit(f)(x), api.vmap(f)(x), V(f)(x)
        def e(x): return jnp.vectorize(f)(x), jax.lax.map(f, x), map(f, x)
        def g(x): return jax.lax[0].scan(f, x), jax.numpy.sin(x).vmap(f), (a + b).vmap(f)
        def h(x): return _src.api.vmap(f)(x), jnp.vmap(f)(x), jax.numpy.vmap(f)(x)
    """,
    "shadowing": """
        import jax
        from jax import jit, vmap

        def param(jit, x):
            return jit(f)(x) + vmap(f)(x)

        def local(x):
            vmap = make()
            return vmap(f)(x)

        def later_local(x):
            y = vmap(f)(x)
            vmap = 3
            return y

        def attribute_local(x):
            y = jax.vmap(f)(x)
            jax = 3
            return y

        def inner_import(x):
            from jax import lax
            return lax.scan(f, 0, x)

        def inner_alias(x):
            import numpy as jax
            return jax.vmap(f)(x)

        def lambda_param(x):
            return (lambda jax: jax.vmap(f))(x), (lambda: jax.vmap(f))()

        def comprehension(xs):
            return [jax.vmap(f)(x) for x in xs], [jax.vmap(f) for jax in xs]

        def nested(x):
            def vmap(f):
                return f
            return vmap(g)(x)

        def uses_global(x):
            global vmap
            vmap = mine
            return vmap(g)(x)

        def outer():
            lax = None
            def inner(x):
                nonlocal lax
                from jax import lax
                return lax.map(f, x)
            return inner

        class C:
            vmap = staticmethod(mine)
            def method(self, x):
                return vmap(f)(x)  # the class attribute is invisible here
            @jit
            def decorated(self, x):
                return x
    """,
    "module-level rebinding": """
        from jax import vmap
        import jax

        @vmap
        def a(x): return x

        def vmap(f):
            return f

        def b(x): return vmap(f)(x)
        @vmap
        def c(x): return jax.lax.map(f, x)
        jax = None
    """,
    "jax as a module-level variable": """
        import pytest
        jax = pytest.importorskip("jax")
        functools = pytest.importorskip("functools")

        @jax.jit
        def f(x): return x
        @functools.partial(jax.jit, static_argnums=0)
        def g(n, x): return x
    """,
    "class named like the module": """
        class jax:
            jit = staticmethod(lambda f: f)
            @jit
            def f(self, x): return x
            def g(self, x): return lax.scan(f, 0, x)
            class lax:
                scan = None
    """,
    "conditional and star imports": """
        try:
            from jax import jit
        except ImportError:
            jit = lambda f: f
        if TYPE_CHECKING:
            from jax.lax import scan
        from jax import *
        from . import vmap
        from .jax import lax

        @jit
        def f(x): return scan(g, 0, x) + vmap(g)(x) + lax.map(g, x)
    """,
    "methods, nested classes, async": """
        import jax
        from functools import partial

        class Outer:
            @partial(jax.jit, static_argnums=(0,))
            def m(self, x): return jax.vmap(f)(x)
            async def am(self, x):
                return await jax.lax.map(f, x)
            class Inner:
                @jax.jit
                def f(self, x): return x
            @staticmethod
            @jax.jit
            def s(x): return x

        async def top(x):
            async with ctx() as jit:
                return jit(x), [jax.vmap(f)(y) async for y in x]

        if True:
            class InIf:
                def m(self, x): return jax.lax.cond(x, f, g, x)
        def f():
            class Local:
                @jax.jit
                def m(self, x): return x
            @jax.vmap
            @partial(jax.jit, static_argnums=0)
            def g(x): return x
            return Local
    """,
    "calls everywhere in a body": """
        import jax
        from jax import vmap, lax

        def f(x, g=jax.vmap(h), *args, k: vmap(t) = 1, **kw) -> lax.map(a, b):
            a = {jax.vmap(f): lax.scan(g, 0, x), **{k: vmap(v) for k, v in d.items()}}
            b = {vmap(q) for q in x} | set(lax.map(f, y) for y in x)
            c = vmap(f)(x) if lax.cond(p, f, g, x) else lax.switch(0, [f], x)
            d = (vmap(f))(x), ((vmap)(f))(x), (vmap(vmap(f)))(x)
            e = lambda y, z=vmap(f): lax.map(f, y)
            if (w := vmap(f)) is not None:
                pass
            s = x[vmap(f)(x):lax.map(f, x)]
            t = f"{vmap(f)(x)!r:>{lax.map(f, x)}}"
            print(*[vmap(f)], **{"k": lax.map(f, x)})
            del a
            assert vmap(f), lax.map(f, x)
            raise vmap(f) from lax.map(f, x)
            with vmap(f) as g, lax.map(f, x):
                for i in vmap(f)(x):
                    while lax.map(f, x):
                        yield vmap(f)
            try:
                pass
            except vmap(f) as err:
                pass
            finally:
                return lax.fori_loop(0, 3, f, x)
    """,
    "jit-bound assignments": """
        import jax
        from jax import jit as J
        from functools import partial
        from typing import Callable

        def f(x, n):
            return jax.vmap(g)(x)

        fast = jax.jit(f, static_argnums=(1,), static_argnames="n")
        ann: Callable = J(f)
        (paren) = partial(jax.jit, static_argnums=0)(f)
        factory = jax.jit(static_argnames=("n",))(f)
        ext = jax.jit(jax.vmap(jax.numpy.sin))
        two = three = jax.jit(f)
        tup, le = jax.jit(f), 1
        star = jax.jit(*fs)
        nothing = jax.jit()
        many = jax.jit(f, g)
        only_kw = jax.jit(fun=f)
        not_jit = jax.vmap(f)
        bare: Callable
        later = jax.jit(h)
        def h(x): return jax.lax.map(g, x)
        f = jax.jit(f)
        if True:
            cond_bound = jax.jit(h, static_argnums=N)
        class K:
            inside = jax.jit(f)
    """,
    "hints": """
        import jax

        # jaxlint: args x=f32[8, 3]
        @jax.jit
        # a comment between
        @other
        def f(x): return x

        class C:
            #   jaxlint:   args   self=None
            @jax.jit
            def m(self): return 1

        # jaxlint: args f32[2]
        g = jax.jit(f)
        # jaxlint: args
        def h(x): return jax.vmap(f)(x)
    """,
    "positions: unicode, tabs, strings": """
        import jax
        def ƒ(é, x):
        \tσ = "ü→"; return jax.vmap(g)(x) + jax.lax.map(h, "ñ")
        def 函数(x): return "日本語", jax.vmap(g)(x)
        class Ünïcode:
            @jax.jit
            def méthode(self, x): return x
        s = "é"; b = jax.jit(ƒ)
        def doc(x):
            \"\"\"Docstring with ünïcode
            over lines.\"\"\"
            return jax.vmap(lambda y: "ß" + y)(x)
    """,
    "positions: continuations and parentheses": """
        import jax
        @(
            jax.jit
        )
        def a(x): return x
        @\\
          jax.jit
        def b(x): return x
        def \\
          c(x):
            return jax.vmap(
                f,
                in_axes=0,  # comment
            )(x) + \\
                jax.lax.map(f, x)
        async \\
          def d(x): return (jax.vmap(f)
                            )(x)
        e = \\
            jax.jit(a)
        def f(x): return jax.vmap(g)(x);
        def g(x):
            return jax.vmap(h)(x)
            # trailing comment

        def h(x):
            if x:
                return jax.vmap(h)(x)
            else:
                pass  # comment
    """,
    "statements: match, try, with, for": """
        import jax
        def f(x):
            match x:
                case [a, *rest] if jax.lax.cond(a, f, g, x):
                    return jax.vmap(f)(rest)
                case {"k": v, **others}:
                    return jax.lax.map(f, v)
                case Point(x=0) | None:
                    pass
            with open(x) as fh, jax.lax.map(f, x) as lax:
                return lax.scan(f, 0, x)
        def g(x):
            try:
                pass
            except* ValueError as jax:
                pass
            return jax.vmap(f)(x)
        def h(x):
            for jax in x:
                pass
            return jax.vmap(f)(x)
        for jax in range(3):
            pass
        @jax.jit
        def i(x): return x
    """,
    "static argument literals": """
        import jax
        from functools import partial
        @partial(jax.jit, static_argnums=(0, True), static_argnames=["a", 2])
        def a(x): return x
        @partial(jax.jit, static_argnums=-1, static_argnames=("k"))
        def b(x, k): return x
        @partial(jax.jit, static_argnums=(
            0,  # comment
            1,
        ), static_argnames=f"k")
        def c(x, y): return x
        @partial(jax.jit, static_argnums=1, static_argnums=2)
        def d(x, y, z): return x
        @jax.jit(static_argnums={0}, static_argnames=())
        def e(x): return x
    """,
    "no targets": """
        import jax
        import jax.numpy as jnp
        def f(x): return jnp.sum(jax.grad(jnp.sin)(x))
        def only_jit(x): return jax.jit(jnp.sin)(x)
    """,
    "syntax error": """
        import jax
        @jax.jit
        def f(x:
            return x
    """,
}


@pytest.mark.parametrize("name", list(CORPUS))
def test_corpus(name):
    source = textwrap.dedent(CORPUS[name])
    targets = assert_same(source)
    if name not in ("no targets", "syntax error"):
        assert targets, "a corpus snippet that finds nothing tests little"


@pytest.mark.parametrize("newline", ["\r\n", "\r"])
def test_corpus_with_other_line_endings(newline):
    for name, code in CORPUS.items():
        source = textwrap.dedent(code).replace("\n", newline)
        new, old = both(source)
        assert new == old, name


def test_corpus_after_a_byte_order_mark():
    # Text decoded without utf-8-sig keeps the BOM: it is no part of the code (columns after it).
    for name, code in CORPUS.items():
        if name != "syntax error":  # libcst's fallback parse reported the BOM itself there
            new, old = both("\ufeff" + textwrap.dedent(code).lstrip("\n"))
            assert new == old, name


def _sources_in_tests() -> list[str]:
    """Every string literal in tests/*.py that holds jax code: the modules the tests write."""
    found = []
    for path in sorted(TESTS.glob("*.py")):
        if path.name == Path(__file__).name:  # its corpus runs above; its differences below
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and "jax" in node.value and (
                    "import" in node.value and "\n" in node.value):
                found.append(textwrap.dedent(node.value))
    return found


def test_sources_the_tests_write():
    sources = _sources_in_tests()
    assert len(sources) > 50
    with_targets = 0
    for source in sources:
        new, old = both(source)
        assert new == old, source
        with_targets += bool(new and isinstance(new, list))
    assert with_targets > 30


def test_examples():
    for path in sorted((REPO / "examples").glob("*.py")):
        assert assert_same(path.read_text(encoding="utf-8"), str(path))


@pytest.mark.slow
@pytest.mark.parametrize("package", ["optax", "equinox", "flax", "jax"])
def test_installed_packages(package):
    spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None:
        pytest.skip(f"{package} is not installed")
    root = Path(spec.origin).parent
    paths = sorted(root.rglob("*.py"))
    if package == "jax" and not os.environ.get("JAXLINT_FULL_DIFFERENTIAL"):
        # jax is 300k lines: ~5 min through libcst. Every 4th file keeps CI reasonable;
        # JAXLINT_FULL_DIFFERENTIAL=1 compares all of them (done for the scanner's introduction).
        paths = paths[::4]
    differences, targets = [], 0
    for path in paths:
        source = path.read_text(encoding="utf-8")
        new, old = both(source, str(path))
        if new != old:
            differences.append(str(path.relative_to(root)))
        targets += len(new) if isinstance(new, list) else 0
    assert differences == []
    assert package == "equinox" or targets > 0


# -- deliberate differences: where libcst was wrong, the ast scanner follows Python ---------


def test_form_feed_before_a_module_level_def_counts_as_a_column():
    source = "import jax\n\x0cdef f(x):\n    return jax.vmap(g)(x)\n"
    [t] = scan.scan_source("m.py", source)
    line = source.split("\n")[1]
    assert line[t.span.start_col :].startswith("def f")  # libcst said column 0
    assert line[t.name_span.start_col : t.name_span.end_col] == "f"
    [old] = reference.scan_source("m.py", source)
    assert (old.span.start_col, old.name_span.start_col) == (0, 4)


def test_identifiers_are_nfkc_normalized_as_python_binds_them():
    # ``def ﬁx`` (a ligature) defines the module attribute "fix": the worker looks targets up by
    # name, so libcst's raw "ﬁx" could never be found. The span still covers the name as written.
    source = "import jax\ndef ﬁx(ﬁrst):\n    return jax.vmap(g)(ﬁrst)\n"
    [t] = scan.scan_source("m.py", source)
    assert (t.name, t.qualname, t.params) == ("fix", "fix", ["first"])
    assert source.split("\n")[1][t.name_span.start_col : t.name_span.end_col] == "ﬁx"
    [old] = reference.scan_source("m.py", source)
    assert (old.name, old.params) == ("ﬁx", ["ﬁrst"])
    assert old.name_span == t.name_span


def test_match_capture_binds_the_name():
    # ``case vmap:`` assigns vmap in f: the call is not jax.vmap (libcst read it as jax.vmap).
    source = textwrap.dedent("""
        from jax import vmap
        def f(x, cfg):
            match cfg:
                case vmap:
                    pass
            return vmap(g)(x)
    """)
    assert scan.scan_source("m.py", source) == []
    assert [t.qualname for t in reference.scan_source("m.py", source)] == ["f"]


def test_module_level_nonlocal_is_a_syntax_error():
    # CPython rejects it when compiling; libcst's scope analysis raised NotImplementedError.
    with pytest.raises(scan.ScanSyntaxError) as info:
        scan.scan_source("m.py", "import jax\nnonlocal x\n@jax.jit\ndef f(x): return x\n")
    assert (info.value.line, info.value.column) == (2, 0)
    with pytest.raises(NotImplementedError):
        reference.scan_source("m.py", "import jax\nnonlocal x\n@jax.jit\ndef f(x): return x\n")


def test_deep_expressions():
    # The walk over expressions is iterative: 400 nested operators are fine (libcst's recursive
    # visitors give up long before CPython's parser does); too deep for CPython is a syntax error.
    deep = "import jax\ndef f(x):\n    y = " + " + ".join(["x"] * 400) + "\n    return jax.vmap(g)(y)\n"
    [t] = scan.scan_source("m.py", deep)
    assert [c.kind for c in t.calls] == ["vmap"]
    too_deep = deep.replace(" + ".join(["x"] * 400), " + ".join(["x"] * 5000))
    with pytest.raises(scan.ScanSyntaxError, match="too deeply nested"):
        scan.scan_source("m.py", too_deep)


def test_a_hint_makes_a_plain_function_a_target():
    source = "import jax.numpy as jnp\n\n\n# jaxlint: args x=f32[3]\ndef f(x):\n    return jnp.sin(x)\n"
    [target] = scan.scan_source("m.py", source)
    assert (target.kind, target.qualname, target.hint) == ("hinted", "f", "x=f32[3]")
    assert reference.scan_source("m.py", source) == []


def test_a_jaxtyping_annotation_makes_a_plain_function_a_target():
    source = ("import jax.numpy as jnp\nfrom jaxtyping import Array, Float\n\n\n"
              "def f(x: Float[Array, 'n'], y: int):\n    return jnp.sin(x) * y\n\n\n"
              "def g(x: 'Float[Array, \"n\"]'):\n    return x\n\n\ndef h(x: list[int]):\n    return x\n")
    assert [(t.qualname, t.kind) for t in scan.scan_source("m.py", source)] == [("f", "annotated"), ("g", "annotated")]
    assert reference.scan_source("m.py", source) == []
    plain = source.replace("from jaxtyping import Array, Float\n", "from mytypes import Array, Float\n")
    assert scan.scan_source("m.py", plain) == []  # Float of another library
