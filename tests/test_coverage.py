"""Coverage: the summary's "traced N of M", --show-untraced and --coverage-report."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import check_in_process

from jaxlint import scan
from jaxlint.config import load_config
from jaxlint.engine.jobs import make_job
from jaxlint.engine.results import CheckResult, FileAnalysis
from jaxlint.report.coverage import coverage
from jaxlint.report.summary import summary
from jaxlint.rules import all_rules
from jaxlint.text import read_source

REPO = Path(__file__).resolve().parent.parent

MODULE = """\
from functools import partial

import jax
import jax.numpy as jnp


@jax.jit
def traced(x):
    return jax.vmap(lambda r: r * 2)(x)


def never_called(x, y):
    return jax.vmap(lambda r: r * 2)(x) + y


@partial(jax.jit, static_argnums=1)
def with_static(x, n):
    return jax.vmap(lambda r: r * n)(x)


class Model:
    def apply(self, x):
        return jax.vmap(lambda r: r * 2)(x)

    @classmethod
    def make(cls, x, *, scale):
        return jax.vmap(lambda r: r * scale)(x)


# jaxlint: args x=f32[4, 3], n=2
@jax.jit
def branchy(x, n):
    y = jax.vmap(lambda r: r * 2)(x)
    if n > 0:
        return y
    return -y


traced(jnp.ones((4, 3)))
"""

BROKEN = """\
import jax

raise RuntimeError("boom")


@jax.jit
def lost(x):
    return jax.vmap(lambda r: r)(x)
"""


def jaxlint(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "jaxlint", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=600)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("coverage")
    (root / "mod.py").write_text(MODULE)
    (root / "broken.py").write_text(BROKEN)
    return root


@pytest.fixture(scope="module")
def run(project: Path) -> tuple[subprocess.CompletedProcess, dict]:
    # Without inference: these tests are about the targets nothing gives arguments and their hints.
    completed = jaxlint("check", "--no-infer-arguments", "--show-untraced", "--coverage-report", "coverage.json", ".",
                        cwd=project)
    return completed, json.loads((project / "coverage.json").read_text())


def test_show_untraced_lists_each_untraced_target_on_stderr(run) -> None:
    completed, _ = run
    assert completed.returncode == 1  # JX901 and JX601
    assert "untraced" not in completed.stdout and "jaxlint: args" not in completed.stdout
    err = completed.stderr.splitlines()
    start = err.index("untraced functions (6 of 7 JAX functions):")  # the summary's count
    assert err[start + 1:] == [
        "  broken.py:7: lost [import-failed] the module failed to import",
        "      no hint helps: the module failed to import (see the JX901 finding); fix that first",
        "  mod.py:12: never_called [no-arguments] no abstract arguments known",
        "      # jaxlint: args x=f32[...], y=f32[...]",
        "  mod.py:17: with_static [no-arguments] no abstract arguments known",
        "      # jaxlint: args x=f32[...], n=<static>",
        "      (n is static (static_argnums/static_argnames): write the Python value, e.g. n=3)",
        "  mod.py:22: Model.apply [no-arguments] no abstract arguments known",
        "      no hint helps: a hint cannot give `self`: call Model(...).apply(...) once while the module "
        "is imported, or register an instance in an examples file",
        "  mod.py:26: Model.make [no-arguments] no abstract arguments known",
        "      # jaxlint: args x=f32[...], scale=f32[...]",  # cls is bound: not in the hint
        "  mod.py:32: branchy [trace-error] trace error: x=f32[4,3], n=2: TracerBoolConversionError: "
        "Attempted boolean conversion of traced array with shape bool[]",
        "      # jaxlint: args x=f32[4, 3], n=2",  # the existing hint's values are kept
        "      (a traced value was used as a Python value (`if n > 0`, `range(n)`): that parameter must be "
        "static: give it a Python value in the hint and, under jax.jit, list it in "
        "static_argnums/static_argnames)",
        "2 files checked, linted 1 of 7 JAX functions (1 target traced, 6 skipped: no abstract arguments or "
        "errors), 2 findings.",
        "jaxlint: warning: linted only 1 of 7 JAX functions; give the targets arguments: a hint comment above "
        "each or an examples file (docs/arguments.md) (`--show-untraced` lists each function not linted, why, "
        "and the hint that would trace it)",
    ]


def test_coverage_report_json(run, project: Path) -> None:
    _, report = run
    assert report["summary"] == {"targets": 7, "traced": 1, "jax_functions": 7, "linted": 1, "dropped": []}
    assert report["traced"] == [{"path": str(project / "mod.py"), "target": "traced", "line": 8,
                                 "source": "import-call", "signatures": ["f32[4,3]"]}]
    untraced = report["untraced"]
    assert [(Path(u["path"]).name, u["line"], u["target"], u["kind"]) for u in untraced] == [
        ("broken.py", 7, "lost", "import-failed"),
        ("mod.py", 12, "never_called", "no-arguments"),
        ("mod.py", 17, "with_static", "no-arguments"),
        ("mod.py", 22, "Model.apply", "no-arguments"),
        ("mod.py", 26, "Model.make", "no-arguments"),
        ("mod.py", 32, "branchy", "trace-error"),
    ]
    assert set(untraced[1]) == {"path", "target", "line", "kind", "reason", "hint", "note"}
    assert untraced[1]["hint"] == "# jaxlint: args x=f32[...], y=f32[...]" and untraced[1]["note"] is None
    assert untraced[0]["hint"] is None and untraced[3]["hint"] is None


def test_without_the_flags_nothing_is_listed(project: Path, tmp_path: Path) -> None:
    completed = jaxlint("check", "mod.py", cwd=project)
    assert "untraced functions" not in completed.stderr
    bad = jaxlint("check", "--coverage-report", str(tmp_path / "missing" / "c.json"), "mod.py", cwd=project)
    assert bad.returncode == 2 and "cannot write the coverage report" in bad.stderr


MULTI = """\
import jax


def once(x):
    return jax.vmap(lambda r: r * 2)(x)


def reshaped(x):
    return jax.vmap(lambda r: r * 2)(x).reshape(6)  # only the 2x3 signature traces
"""


def test_a_target_traced_with_several_signatures_counts_once(tmp_path: Path, monkeypatch) -> None:
    """Analyzed in this process, with an argument source giving two signatures per target."""
    import jax

    from jaxlint.worker import analyze
    from jaxlint.worker.argsources import ArgumentSet

    def two_signatures(request):
        return [ArgumentSet("test", (jax.ShapeDtypeStruct(shape, "float32"),), {}) for shape in ((2, 3), (4, 3))]

    monkeypatch.setattr(analyze, "arguments_for", two_signatures)
    path = tmp_path / "multi.py"
    path.write_text(MULTI)
    source = read_source(str(path))
    targets = scan.scan_source(str(path), source.text)
    job = make_job(source, targets, [r.code for r in all_rules()], load_config([str(path)]).settings())
    from jaxlint.scan.functions import jax_functions
    from jaxlint.scan.index import SourceIndex

    functions = jax_functions(SourceIndex(str(path), source.text))
    result = CheckResult([FileAnalysis(source, targets, job, analyze.analyze(job), functions=functions)], {})
    assert result.traced == 2 and result.skipped == []
    assert "(2 targets traced)" in summary(result, "none")
    report = coverage(result).to_json()
    assert report["summary"] == {"targets": 2, "traced": 2, "jax_functions": 2, "linted": 2, "dropped": []}
    assert [(t["target"], t["signatures"]) for t in report["traced"]] == [
        ("once", ["f32[2,3]", "f32[4,3]"]), ("reshaped", ["f32[2,3]"])]


def test_a_factory_is_not_traceable_not_a_trace_error(tmp_path: Path) -> None:
    """A function returning a function (an optimizer factory) is skipped, not a JX601."""
    (tmp_path / "factory.py").write_text(
        "import jax\n\n\n"
        "def make_update(scale):\n"
        "    def update(x):\n"
        "        return jax.lax.cond(x.sum() > 0, lambda v: v * scale, lambda v: v, x)\n"
        "    return update\n\n\n"
        "update = make_update(2.0)\n")
    result = check_in_process([str(tmp_path)], all_rules())
    assert result.findings == []
    [(_, skipped)] = result.skipped
    assert skipped.kind == "not-traceable" and "returns function" in skipped.reason
