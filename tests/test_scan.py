import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import jaxlint.scan
from jaxlint.model import Span, Target
from jaxlint.scan import ScanSyntaxError, scan_file, scan_source


def scan(tmp_path, code: str, name: str = "mod.py") -> tuple[str, list[Target]]:
    source = textwrap.dedent(code)
    path = tmp_path / name
    path.write_text(source)
    return source, scan_file(str(path))


def text(source: str, span: Span) -> str:
    """The source text a span covers (libcst conventions: 1-based lines, exclusive end col)."""
    lines = source.splitlines()
    if span.start_line == span.end_line:
        return lines[span.start_line - 1][span.start_col : span.end_col]
    parts = [lines[span.start_line - 1][span.start_col :]]
    parts += lines[span.start_line : span.end_line - 1]
    parts.append(lines[span.end_line - 1][: span.end_col])
    return "\n".join(parts)


def by_qualname(targets: list[Target]) -> dict[str, Target]:
    return {t.qualname: t for t in targets}


# -- jit-decorated ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "imports, decorator",
    [
        ("import jax", "@jax.jit"),
        ("from jax import jit", "@jit"),
        ("import jax as jx", "@jx.jit"),
        ("from jax import jit as J", "@J"),
        ("import jax.numpy as jnp\nimport jax", "@jax.jit"),
        ("from jax._src.api import jit", "@jit"),
    ],
)
def test_jit_decorator_spellings(tmp_path, imports, decorator):
    source, targets = scan(tmp_path, f"{imports}\n\n{decorator}\ndef f(x, y):\n    return x + y\n")
    [t] = targets
    assert (t.kind, t.name, t.qualname, t.params) == ("jit-decorated", "f", "f", ["x", "y"])
    assert t.first_line == source.splitlines().index(decorator) + 1
    assert text(source, t.name_span) == "f"
    assert text(source, t.span) == "def f(x, y):\n    return x + y"
    assert t.static_argnums == () and t.static_argnames == () and t.calls == []


@pytest.mark.parametrize(
    "imports, decorator",
    [
        ("import jax\nfrom functools import partial", 'partial(jax.jit, static_argnums=(1,), static_argnames=("k",))'),
        ("import jax\nimport functools", 'functools.partial(jax.jit, static_argnums=1, static_argnames="k")'),
        ("import jax as jx\nfrom functools import partial as P", 'P(jx.jit, static_argnums=[1], static_argnames=["k"])'),
        ("import jax", 'jax.jit(static_argnums=1, static_argnames=("k",))'),  # jit's decorator-factory form
    ],
)
def test_jit_with_static_args(tmp_path, imports, decorator):
    _, [t] = scan(tmp_path, f"{imports}\n\n@{decorator}\ndef f(x, n, k):\n    return x\n")
    assert t.kind == "jit-decorated"
    assert t.static_argnums == (1,)
    assert t.static_argnames == ("k",)
    assert t.calls == []  # the target's own decorator is not a call inside it


def test_non_literal_static_args_are_ignored(tmp_path):
    _, [t] = scan(
        tmp_path,
        """
        import jax
        from functools import partial
        N = (1,)
        @partial(jax.jit, static_argnums=N, static_argnames=("a", 2))
        def f(x, n):
            return x
        """,
    )
    assert (t.static_argnums, t.static_argnames) == ((), ())


def test_partial_of_other_functions_and_unrelated_decorators(tmp_path):
    _, targets = scan(
        tmp_path,
        """
        import functools
        import jax

        @functools.partial(print, 1)
        def a(x): return x

        @functools.lru_cache
        def b(x): return x

        def jit(f): return f

        @jit  # a local function named jit, not jax.jit
        def c(x): return x
        """,
    )
    assert targets == []


def test_methods(tmp_path):
    source, targets = scan(
        tmp_path,
        """
        import jax

        class Model:
            @jax.jit
            def apply(self, x, *, scale=1.0):
                return x * scale

            def step(self, xs):
                return jax.lax.fori_loop(0, 3, lambda i, c: c, xs)

            def plain(self):
                return 1

            class Inner:  # only methods of module-level classes are targets
                @jax.jit
                def f(self, x):
                    return x
        """,
    )
    t = by_qualname(targets)
    assert list(t) == ["Model.apply", "Model.step"]
    assert t["Model.apply"].kind == "jit-decorated"
    assert t["Model.apply"].params == ["self", "x", "scale"]
    assert t["Model.apply"].name == "apply"
    assert text(source, t["Model.apply"].name_span) == "apply"
    assert t["Model.step"].kind == "contains-transform"
    assert [c.kind for c in t["Model.step"].calls] == ["fori_loop"]


def test_params_in_signature_order(tmp_path):
    _, [t] = scan(
        tmp_path,
        """
        import jax
        @jax.jit
        def f(a, b=1, /, c=2, *args, d, e=3, **kwargs):
            return a
        """,
    )
    assert t.params == ["a", "b", "c", "args", "d", "e", "kwargs"]
    _, [t] = scan(tmp_path, "import jax\n@jax.jit\ndef g(a, *, b):\n    return a\n", "g.py")
    assert t.params == ["a", "b"]


# -- jit-bound ----------------------------------------------------------------------------


def test_jit_bound(tmp_path):
    source, targets = scan(
        tmp_path,
        """
        import jax
        from jax import jit as J
        from functools import partial

        def f(x, n):
            return jax.vmap(jax.numpy.sin)(x)

        fast = jax.jit(f, static_argnums=(1,), static_argnames="n")
        fast2 = J(f)
        fast3 = partial(jax.jit, static_argnums=0)(f)
        fast4 = jax.jit(static_argnames=("n",))(f)
        ext = jax.jit(jax.numpy.sin)
        ann: object = jax.jit(f)
        not_jit = jax.vmap(f)
        """,
    )
    t = by_qualname(targets)
    assert list(t) == ["f", "fast", "fast2", "fast3", "fast4", "ext", "ann"]
    fast = t["fast"]
    assert (fast.kind, fast.name, fast.bound_name) == ("jit-bound", "f", "fast")
    assert text(source, fast.span) == 'fast = jax.jit(f, static_argnums=(1,), static_argnames="n")'
    assert text(source, fast.name_span) == "fast"
    assert fast.first_line == fast.span.start_line
    assert fast.params == ["x", "n"]
    assert (fast.static_argnums, fast.static_argnames) == ((1,), ("n",))
    # The wrapped def's transform calls belong to the jit-bound target too; the jit itself does not.
    assert [c.kind for c in fast.calls] == ["vmap"]
    assert t["fast2"].params == ["x", "n"] and t["fast2"].calls == fast.calls
    assert t["fast3"].static_argnums == (0,) and t["fast3"].calls == fast.calls
    assert t["fast4"].static_argnames == ("n",) and t["fast4"].calls == fast.calls
    assert (t["ext"].name, t["ext"].params, t["ext"].calls) == ("ext", [], [])
    assert t["ann"].kind == "jit-bound" and text(source, t["ann"].name_span) == "ann"


def test_rebinding_jit_replaces_the_def_target(tmp_path):
    # ``f = jax.jit(f)``: the module attribute f is the jitted object; trace it once.
    _, targets = scan(
        tmp_path,
        """
        import jax
        def f(x):
            return jax.vmap(g)(x)
        f = jax.jit(f)
        """,
    )
    [t] = targets
    assert (t.kind, t.qualname, t.name, t.bound_name) == ("jit-bound", "f", "f", "f")
    assert [c.kind for c in t.calls] == ["vmap"]


def test_calls_inside_jit_bound_expression(tmp_path):
    source, [t] = scan(tmp_path, "import jax\ndef f(x): return x\ng = jax.jit(jax.vmap(f))\n")
    assert t.name == "g" and t.params == []
    [c] = t.calls
    assert c.kind == "vmap" and text(source, c.span) == "jax.vmap(f)"


def test_assignments_inside_functions_are_not_jit_bound(tmp_path):
    _, targets = scan(tmp_path, "import jax\ndef f(x):\n    g = jax.jit(x)\n    return g\n")
    assert targets == []


# -- contains-transform and calls ---------------------------------------------------------


@pytest.mark.parametrize(
    "imports, call, kind, qualified",
    [
        ("import jax", "jax.vmap(f)", "vmap", "jax.vmap"),
        ("from jax import vmap as V", "V(f)", "vmap", "jax.vmap"),
        ("import jax.lax as lax", "lax.scan(f, 0, x)", "scan", "jax.lax.scan"),
        ("import jax.lax", "jax.lax.scan(f, 0, x)", "scan", "jax.lax.scan"),
        ("from jax import lax", "lax.fori_loop(0, 3, f, x)", "fori_loop", "jax.lax.fori_loop"),
        ("from jax.lax import scan", "scan(f, 0, x)", "scan", "jax.lax.scan"),
        ("from jax.lax import while_loop as W", "W(f, f, x)", "while_loop", "jax.lax.while_loop"),
        ("import jax", "jax.lax.cond(x, f, f, x)", "cond", "jax.lax.cond"),
        ("import jax", "jax.lax.switch(0, [f], x)", "switch", "jax.lax.switch"),
        ("import jax", "jax.lax.map(f, x)", "map", "jax.lax.map"),
    ],
)
def test_transform_spellings(tmp_path, imports, call, kind, qualified):
    source, [t] = scan(tmp_path, f"{imports}\n\ndef g(x):\n    return {call}\n")
    assert (t.kind, t.qualname, t.params) == ("contains-transform", "g", ["x"])
    [c] = t.calls
    assert (c.kind, c.qualified_name) == (kind, qualified)
    assert text(source, c.span) == call and c.span == c.transform_span


def test_non_transforms_are_ignored(tmp_path):
    _, targets = scan(
        tmp_path,
        """
        import jax
        import jax.numpy as jnp
        def f(x):
            return jnp.sum(jax.grad(jnp.sin)(x)) + list(map(abs, x))[0]
        def only_jit(x):  # jit inside a body alone does not make a target
            return jax.jit(jnp.sin)(x)
        """,
    )
    assert targets == []


def test_applied_transform_counted_once(tmp_path):
    source, [t] = scan(
        tmp_path,
        """
        import jax
        def f(x, y):
            return jax.vmap(g, in_axes=(0, None))(x, y)
        """,
    )
    [c] = t.calls
    assert text(source, c.span) == "jax.vmap(g, in_axes=(0, None))(x, y)"
    assert text(source, c.transform_span) == "jax.vmap(g, in_axes=(0, None))"


def test_nested_applied_transforms(tmp_path):
    source, [t] = scan(tmp_path, "import jax\ndef f(x):\n    return jax.vmap(jax.vmap(g))(x)\n")
    outer, inner = t.calls
    assert text(source, outer.span) == "jax.vmap(jax.vmap(g))(x)"
    assert text(source, outer.transform_span) == "jax.vmap(jax.vmap(g))"
    assert text(source, inner.span) == text(source, inner.transform_span) == "jax.vmap(g)"


def test_nested_defs_belong_to_the_enclosing_function(tmp_path):
    source, targets = scan(
        tmp_path,
        """
        import jax
        from functools import partial

        def outer(xs):
            def body(carry, x):
                return jax.lax.cond(x > 0, lambda: carry, lambda: -carry), x

            @jax.vmap
            def per_item(x):
                return x

            @partial(jax.jit, static_argnums=0)
            def helper(n, x):
                return x

            square = lambda v: jax.lax.map(lambda u: u * u, v)
            return jax.lax.scan(body, 0.0, xs)
        """,
    )
    [t] = targets  # body / per_item / helper are not targets of their own
    assert t.qualname == "outer"
    assert [(c.kind, text(source, c.span)) for c in t.calls] == [
        ("cond", "jax.lax.cond(x > 0, lambda: carry, lambda: -carry)"),
        ("vmap", "jax.vmap"),
        ("jit", "partial(jax.jit, static_argnums=0)"),
        ("map", "jax.lax.map(lambda u: u * u, v)"),
        ("scan", "jax.lax.scan(body, 0.0, xs)"),
    ]
    assert all(c.span == c.transform_span for c in t.calls)


def test_decorated_target_records_calls_in_body_only(tmp_path):
    source, [t] = scan(
        tmp_path,
        """
        import jax
        @jax.jit
        def f(x):
            y = jax.jit(g)(x)
            return jax.lax.while_loop(c, b, y)
        """,
    )
    assert [(c.kind, c.qualified_name) for c in t.calls] == [("jit", "jax.jit"), ("while_loop", "jax.lax.while_loop")]
    assert text(source, t.calls[0].transform_span) == "jax.jit(g)"


def test_local_shadowing_is_respected(tmp_path):
    _, targets = scan(
        tmp_path,
        """
        import jax
        def f(jax):
            return jax.vmap(g)
        """,
    )
    assert targets == []


def test_module_level_defs_under_if(tmp_path):
    _, targets = scan(
        tmp_path,
        """
        import sys
        import jax
        if sys.version_info >= (3, 9):
            @jax.jit
            def f(x):
                return x
        """,
    )
    assert [t.qualname for t in targets] == ["f"]


def test_targets_in_source_order(tmp_path):
    _, targets = scan(
        tmp_path,
        """
        import jax
        def b(x): return jax.vmap(f)(x)
        class A:
            @jax.jit
            def m(self): return 1
        a = jax.jit(b)
        @jax.jit
        def c(x): return x
        """,
    )
    assert [t.qualname for t in targets] == ["b", "A.m", "a", "c"]


# -- hint comments ------------------------------------------------------------------------


def test_hint_comment_above_decorators(tmp_path):
    source, targets = scan(
        tmp_path,
        """
        import jax

        # jaxlint: args x=f32[8, 3], n=4
        @jax.jit
        @other
        def f(x, n):
            return x

        class C:
            #   jaxlint:   args   self=None   
            @jax.jit
            def m(self):
                return 1

        # jaxlint: args f32[2]
        g = jax.jit(f)
        """,
    )
    t = by_qualname(targets)
    assert t["f"].hint == "x=f32[8, 3], n=4"
    assert text(source, t["f"].hint_span) == "# jaxlint: args x=f32[8, 3], n=4"
    assert t["f"].hint_span.start_line == t["f"].first_line - 1
    assert t["C.m"].hint == "self=None"
    assert text(source, t["C.m"].hint_span) == "#   jaxlint:   args   self=None"
    assert t["g"].hint == "f32[2]"


def test_hint_ends_at_a_further_comment(tmp_path):
    # A suppression after the hint (`# noqa: JX905`) is not part of the arguments.
    source, targets = scan(
        tmp_path,
        """
        import jax

        # jaxlint: args x=f32[3]  # noqa: JX905
        @jax.jit
        def f(x):
            return x
        """,
    )
    assert targets[0].hint == "x=f32[3]"
    assert text(source, targets[0].hint_span) == "# jaxlint: args x=f32[3]  # noqa: JX905"


def test_hint_must_be_directly_above(tmp_path):
    _, targets = scan(
        tmp_path,
        """
        import jax

        # jaxlint: args x=f32[3]

        @jax.jit
        def f(x):
            return x

        @jax.jit
        # jaxlint: args x=f32[3]
        def g(x):
            return x
        """,
    )
    assert [(t.qualname, t.hint, t.hint_span) for t in targets] == [("f", None, None), ("g", None, None)]


@pytest.mark.parametrize(
    "comment", ["# jaxlint: ignore JX101", "# jaxlint: argsx=1", "# jaxlint:", "x = 1  # jaxlint: args x=1"]
)
def test_non_hint_comments_ignored(tmp_path, comment):
    _, [t] = scan(tmp_path, f"import jax\n{comment}\n@jax.jit\ndef f(x):\n    return x\n")
    assert t.hint is None and t.hint_span is None


def test_empty_hint(tmp_path):
    _, [t] = scan(tmp_path, "import jax\n# jaxlint: args\n@jax.jit\ndef f():\n    return 1\n")
    assert t.hint == ""


# -- errors, encodings, speed -------------------------------------------------------------


def test_syntax_error_reports_position(tmp_path):
    path = tmp_path / "bad.py"
    path.write_text("import jax\n\n@jax.jit\ndef f(x:\n    return x\n")
    with pytest.raises(ScanSyntaxError) as info:
        scan_file(str(path))
    assert info.value.line == 4
    assert info.value.column >= 0 and info.value.message


def test_syntax_error_in_file_without_targets(tmp_path):
    with pytest.raises(ScanSyntaxError) as info:
        scan_source("x.py", "import jax\nx = (\n")
    assert info.value.line == 2


def test_no_jax_no_targets():
    assert scan_source("x.py", "def jit(f):\n    return f\n@jit\ndef g(): pass\n") == []
    assert scan_source("x.py", "import jax\nimport jax.numpy as jnp\ndef f(x): return jnp.sin(x)\n") == []


def test_coding_cookie_and_bom(tmp_path):
    latin = tmp_path / "latin.py"
    latin.write_bytes(b"# -*- coding: latin-1 -*-\nimport jax\n# \xe9\n@jax.jit\ndef f(x):\n    return x\n")
    [t] = scan_file(str(latin))
    assert t.first_line == 4
    bom = tmp_path / "bom.py"
    bom.write_bytes(b"\xef\xbb\xbfimport jax\n@jax.jit\ndef f(x):\n    return x\n")
    [t] = scan_file(str(bom))
    assert t.name_span == Span(3, 4, 3, 5)


def test_bad_encoding_is_a_scan_error(tmp_path):
    path = tmp_path / "bad.py"
    path.write_bytes(b"import jax\nx = '\xff'\n")
    with pytest.raises(ScanSyntaxError):
        scan_file(str(path))


def test_target_json_round_trip(tmp_path):
    _, targets = scan(tmp_path, "import jax\n# jaxlint: args x=1\n@jax.jit\ndef f(x):\n    return jax.vmap(g)(x)\n")
    assert [Target.from_json(t.to_json()) for t in targets] == targets


def test_scanning_does_not_import_jax(tmp_path):
    path = tmp_path / "m.py"
    path.write_text("import jax\n@jax.jit\ndef f(x):\n    return jax.vmap(g)(x)\n")
    code = f"import sys; from jaxlint.scan import scan_file; scan_file({str(path)!r}); print('jax' in sys.modules)"
    repo = Path(jaxlint.scan.__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=repo)
    assert out.stdout.strip() == "False"


# -- positions the ast scanner must convert or recover ------------------------------------


def test_spans_count_characters_on_non_ascii_lines(tmp_path):
    source, [t] = scan(
        tmp_path,
        """
        import jax
        def été(x):
            s = "ü→日本"; return jax.vmap(g)(x) + jax.lax.map(h, "ñ")
        """,
    )
    assert text(source, t.name_span) == "été"
    assert [text(source, c.span) for c in t.calls] == ["jax.vmap(g)(x)", 'jax.lax.map(h, "ñ")']
    assert text(source, t.calls[0].transform_span) == "jax.vmap(g)"


def test_def_span_ends_at_its_last_statement(tmp_path):
    source, targets = scan(
        tmp_path,
        """
        import jax
        def f(x): return jax.vmap(g)(x) ;  # comment
        def h(x):
            if x:
                y = jax.vmap(g)(x);
            else:
                y = 2 ;
            # trailing comment
            return y;
        """,
    )
    assert [text(source, t.span) for t in targets] == [
        "def f(x): return jax.vmap(g)(x)",
        "def h(x):\n    if x:\n        y = jax.vmap(g)(x);\n    else:\n        y = 2 ;\n"
        "    # trailing comment\n    return y",
    ]


def test_decorator_and_name_on_continued_lines(tmp_path):
    source, [a, b] = scan(
        tmp_path,
        """
        import jax
        @(
            jax.jit
        )
        def a(x): return x
        @jax.jit
        async \\
            def \\
              b(x): return x
        """,
    )
    lines = source.splitlines()
    assert lines[a.first_line - 1] == "@("
    assert lines[b.first_line - 1] == "@jax.jit"
    assert (text(source, a.name_span), text(source, b.name_span)) == ("a", "b")
    assert text(source, b.span).startswith("async \\\n    def")


def test_deeply_nested_expressions_are_walked(tmp_path):
    terms = " + ".join(["x"] * 600)
    _, [t] = scan(tmp_path, f"import jax\ndef f(x):\n    return jax.vmap(g)({terms})\n")
    assert [c.kind for c in t.calls] == ["vmap"]


def test_byte_order_mark_in_text_is_not_code():
    [t] = scan_source("x.py", "\ufeffimport jax\n@jax.jit\ndef f(x): return x\n")
    assert t.name_span == Span(3, 4, 3, 5)
