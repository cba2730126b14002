"""Source rules (``check_source``) run once per file, whether or not anything in it traced, and the
source index resolves names as the scanner does."""
from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest
from helpers import check_in_process

from jaxlint import scan
from jaxlint.engine.check import check
from jaxlint.model import Span
from jaxlint.rules import all_rules
from jaxlint.rules.base import SourceContext
from jaxlint.rules.runner import run_source_rules
from jaxlint.scan.index import SourceIndex

LOOP_ONLY = """\
import jax
import jax.numpy as jnp

w = jnp.ones(3)
for step in range(3):
    w = jax.jit(lambda w: w - 0.1 * w)(w)
"""

UNRELATED_TARGET = """

@jax.jit
def unrelated(x):
    return x * 2


unrelated(jnp.ones(2))
"""


def _codes(result) -> list[tuple[str, int]]:
    return [(f.code, f.span.start_line) for f in result.findings]


def test_jx203_alone_in_a_file_where_nothing_traces(tmp_path: Path) -> None:
    """The file has no target (nothing for the worker): JX203 still runs, in the parent."""
    (tmp_path / "loop.py").write_text(LOOP_ONLY)
    result = check([str(tmp_path)], all_rules())
    assert _codes(result) == [("JX203", 6)]
    assert result.workers_started == 0 and result.traced == 0
    # No traced function runs the loop, so the hoist cannot be proven on values: offered as unsafe.
    fix = result.findings[0].fix
    assert fix is not None and fix.applicability == "unsafe"
    assert "no traced function runs this code" in fix.message


def test_an_unrelated_traced_function_changes_nothing(tmp_path: Path) -> None:
    """Before source rules had their own hook, JX203 appeared only when something else traced."""
    (tmp_path / "loop.py").write_text(LOOP_ONLY + UNRELATED_TARGET)
    result = check([str(tmp_path)], all_rules())
    assert _codes(result) == [("JX203", 6)]
    assert result.workers_started == 1 and result.traced == 1


def test_source_rules_run_when_the_import_fails(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text(LOOP_ONLY + UNRELATED_TARGET + "\nraise RuntimeError('no data here')\n")
    result = check_in_process([str(tmp_path)], all_rules())
    assert sorted(_codes(result)) == [("JX203", 6), ("JX901", 16)]


def test_jx204_alone_in_a_file_whose_import_fails(tmp_path: Path) -> None:
    """A list as a static argument raises at import: JX204 explains it instead of JX901."""
    (tmp_path / "static.py").write_text(textwrap.dedent("""\
        from functools import partial

        import jax


        @partial(jax.jit, static_argnums=1)
        def scale(x, factors):
            return x * len(factors)


        scale(1.0, [1, 2])
        """))
    result = check_in_process([str(tmp_path)], all_rules())
    assert _codes(result) == [("JX204", 11)]


def test_a_source_rule_runs_once_per_file_not_per_target(tmp_path: Path) -> None:
    many = LOOP_ONLY + "".join(f"\n\n@jax.jit\ndef f{i}(x):\n    return x + {i}\n\n\nf{i}(jnp.ones(2))\n"
                               for i in range(4))
    (tmp_path / "many.py").write_text(many)
    result = check_in_process([str(tmp_path)], all_rules())
    assert result.traced == 4
    assert _codes(result) == [("JX203", 6)]


def test_a_crashing_source_rule_is_an_internal_error(tmp_path: Path) -> None:
    from jaxlint.rules.base import Rule

    class Crashes(Rule):
        code, name, severity, summary = "JX001", "crashes", "info", "Raises on every file."

        @classmethod
        def check_source(cls, ctx: SourceContext):
            raise KeyError("surprising syntax")

    context = SourceContext("/p/m.py", "x = 1\n", SourceIndex("/p/m.py", "x = 1\n"))
    [finding] = run_source_rules([Crashes], context, {"JX001", "JX906"})
    assert finding.code == "JX906" and "running rule JX001" in finding.message and "KeyError" in finding.message
    assert finding.span == Span(1, 0, 1, 0)


# -- one resolver: the source index answers as the scanner does ------------------------------

RESOLVER_CASES = {
    "import as": ("import jax as j\n", "j.jit(f)", {"jax.jit"}),
    "from import": ("from jax import jit\n", "jit(f)", {"jax.jit"}),
    "from import as": ("from jax import jit as J\n", "J(f)", {"jax.jit"}),
    "submodule": ("import jax.numpy as jnp\n", "jnp.array([1])", {"jax.numpy.array"}),
    "parameter shadows": ("import jax\ndef g(jax):\n    ", "jax.jit(f)", {"g.<locals>.jax.jit"}),
    "local shadows": ("from jax import jit\ndef g():\n    jit = print\n    ", "jit(f)", {"g.<locals>.jit"}),
    "later rebinding": ("from jax import jit\n", "jit(f)\njit = print", {"jax.jit"}),
    "class body invisible": ("from jax import jit\nclass C:\n    jit = print\n    def m(self):\n        ",
                             "jit(f)", {"jax.jit"}),
    "builtin": ("", "print(f)", set()),
}


@pytest.mark.parametrize("prefix, call, expected", RESOLVER_CASES.values(), ids=RESOLVER_CASES.keys())
def test_the_index_resolves_calls_as_the_scanner_names_them(prefix: str, call: str, expected: set) -> None:
    source = prefix + call + "\n"
    index = SourceIndex("m.py", source)
    first = call.split("\n")[0]
    node = next(n for n in index.calls if index.text(n) == first)
    assert index.call_names(node) == expected


def test_the_index_and_the_scanner_agree_on_transform_calls() -> None:
    """Every transform call the scanner finds, the index resolves to the same qualified name."""
    source = textwrap.dedent("""\
        import functools
        import jax as jx
        from jax import lax, vmap as V
        from jax.lax import scan


        def f(x):
            return x


        @jx.jit
        def a(x):
            y = V(f)(x)
            z = lax.cond(True, f, f, y)
            return scan(lambda c, v: (c, v), 0, z)


        def b(x, vmap=None):
            return vmap(f)(x)  # the parameter, not jax.vmap


        c = functools.partial(jx.jit, static_argnums=0)(f)
        """)
    index = SourceIndex("m.py", source)
    scanned = {(call.transform_span, call.qualified_name) for t in scan.scan_source("m.py", source) for call in t.calls}
    assert scanned  # the scanner found vmap, cond and scan in `a`
    for span, name in scanned:
        node = index.node_at(span, ast.Call)
        assert node is not None and name in index.call_names(node), (span, name)
    b_call = next(n for n in index.calls if index.text(n) == "vmap(f)")
    assert index.call_names(b_call) == {"b.<locals>.vmap"}
    assert not any(c.kind == "vmap" and c.span.start_line == 19 for t in scan.scan_source("m.py", source)
                   for c in t.calls)


def test_the_parent_runs_source_rules_without_importing_jax(tmp_path: Path) -> None:
    """Source rules in the parent, program rules in the worker: the jaxlint process never imports
    JAX, even when it runs every rule's source half and fixes nothing."""
    import subprocess
    import sys

    (tmp_path / "loop.py").write_text(LOOP_ONLY)
    (tmp_path / "traced.py").write_text(LOOP_ONLY + UNRELATED_TARGET)
    code = ("import sys\nfrom jaxlint.engine.check import check\nfrom jaxlint.rules import all_rules\n"
            f"result = check([{str(tmp_path)!r}], all_rules())\n"
            "print(sorted((f.code, f.path.rsplit('/', 1)[1]) for f in result.findings), 'jax' in sys.modules)\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[('JX203', 'loop.py'), ('JX203', 'traced.py')] False"
