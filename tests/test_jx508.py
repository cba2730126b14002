"""JX508 float64-truncated: what its case cannot say. The messages say what JAX made of the
request and what to do; the spans are the call that asked (character columns on a line with
non-ASCII text); the recorder catches only JAX's truncation warnings and leaves the user's
warnings and filters as they were; ``check`` with worker processes traces afresh what the import
traced; and ``pytest --jaxlint`` (and ``jaxlint run``) report a request in a helper module at the
helper's line, one inside an installed package at the project's call, and nothing with x64 on,
while the tests still show JAX's own warning."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import jax
import jax.numpy as jnp
from helpers import case_line, case_source, checked_case

from jaxlint.ir.truncations import TruncationRecorder
from jaxlint.jaxapi import logs
from jaxlint.model import Finding


def findings() -> dict[tuple[str, int], Finding]:
    _, result = checked_case("JX508")
    return {(Path(f.path).name, f.span.start_line): f for f in result.findings if f.code == "JX508"}


def spanned(file: str, finding: Finding) -> str:
    line = (case_source("JX508") / file).read_text(encoding="utf-8").splitlines()[finding.span.start_line - 1]
    assert finding.span.end_line == finding.span.start_line
    return line[finding.span.start_col:finding.span.end_col]


def test_messages_say_what_jax_makes_of_the_request_and_what_to_do() -> None:
    zeros = findings()[("model.py", case_line("JX508", "x + jnp.zeros(3, dtype=jnp.float64)", "model.py"))]
    assert zeros.message == (
        "`zeros` asks for float64, but jax_enable_x64 is off: JAX makes it float32, so the value is computed "
        "in float32 (about 7 significant digits, not 16). Enable x64 at startup "
        '(`jax.config.update("jax_enable_x64", True)`) if float64 is meant, or ask for float32 explicitly.')
    counts = findings()[("counts.py", case_line("JX508", 'dtype="int64"', "counts.py"))]
    assert counts.message.startswith("`array` asks for int64, but jax_enable_x64 is off: JAX makes it int32, "
                                     "so the value is int32 and wraps around past 2**31 - 1")
    # A helper that passes its caller's dtype on did not ask: its caller, which names float64, did.
    forwarded = findings()[("model.py", case_line("JX508", "cast(x, jnp.float64)", "model.py"))]
    assert forwarded.message.startswith(
        f"`astype` asks for float64 (inside counts.py:{case_line('JX508', 'x.astype(dtype)', 'counts.py')}, "
        "which this line calls), but jax_enable_x64 is off")
    mapped = findings()[("model.py", case_line("JX508", "jnp.complex128", "model.py"))]
    assert "JAX makes it complex64" in mapped.message and "ask for complex64 explicitly" in mapped.message


def test_spans_are_the_calls_that_asked() -> None:
    found = findings()
    assert spanned("model.py", found[("model.py", case_line("JX508", "jnp.zeros(3, dtype=jnp.float64)",
                                                            "model.py"))]) == "jnp.zeros(3, dtype=jnp.float64)"
    assert spanned("counts.py", found[("counts.py", 5)]) == 'jnp.array(x, dtype="int64")'
    # Columns count characters: "größe" is 7 bytes for 5 characters.
    labelled = found[("model.py", case_line("JX508", "größe", "model.py"))]
    assert spanned("model.py", labelled) == "x.astype(jnp.int64)"
    scanned = found[("model.py", case_line("JX508", "jnp.ones_like(row", "model.py"))]
    assert spanned("model.py", scanned) == "jnp.ones_like(row, dtype=jnp.float64)"


def _requests(x: jax.Array) -> jax.Array:
    warnings.warn("the user's own warning", UserWarning, stacklevel=1)
    return x.astype(jnp.float64) + jnp.zeros(3, dtype=jnp.float32)


def test_the_recorder_catches_only_truncations_and_takes_out_only_its_filter() -> None:
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        before = list(warnings.filters)
        with TruncationRecorder() as found:
            jax.make_jaxpr(_requests)(jnp.ones(3))
        assert warnings.filters == before
        # A filter the code adds inside the block (a module's, at import) stays.
        with TruncationRecorder():
            warnings.filterwarnings("ignore", message="a module's own filter")
        assert warnings.filters[1:] == before and warnings.filters[0][1].pattern == "a module's own filter"
    assert [str(w.message) for w in shown] == ["the user's own warning"]
    assert [(t.requested, t.result, t.api) for t in found] == [("float64", "float32", "astype")]
    innermost = found[0].frames[0]
    assert innermost.path == __file__
    assert innermost.span.start_line == _requests.__code__.co_firstlineno + 2


def test_a_users_error_filter_does_not_fail_the_trace() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with TruncationRecorder() as found:
            jax.make_jaxpr(lambda x: x.astype(jnp.int64))(jnp.ones(3))
    assert [(t.requested, t.result) for t in found] == [("int64", "int32")]


def test_both_forms_of_jaxs_message_are_read() -> None:
    # 0.10.x names the dtype; 0.4.x shows the class, and leaves out "requested in" for scalar types.
    assert logs.truncation("Explicitly requested dtype float64 requested in zeros is not available, and will "
                             "be truncated to dtype float32. To enable more dtypes, ...") == (
        "float64", "float32", "zeros")
    assert logs.truncation("Explicitly requested dtype <class 'jax.numpy.float64'>  is not available, and "
                             "will be truncated to dtype float32.") == ("float64", "float32", "")
    assert logs.truncation("Explicitly requested dtype <class 'numpy.complex128'> requested in asarray is "
                             "not available, and will be truncated to dtype complex64.") == (
        "complex128", "complex64", "asarray")
    assert logs.truncation("some other warning") is None


def test_check_with_worker_processes_reports_the_helper_at_its_line(tmp_path: Path) -> None:
    # The module's own calls traced the functions at import: the worker must trace them afresh.
    for source in case_source("JX508").iterdir():
        (tmp_path / source.name).write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text("[tool.jaxlint]\n")
    ran = subprocess.run([sys.executable, "-m", "jaxlint", "check", "--output-format", "json", "--select", "JX508",
                          "."], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert ran.returncode == 1, ran.stderr
    found = {(Path(f["filename"]).name, f["location"]["row"]) for f in json.loads(ran.stdout)}
    assert found == set(findings())


HELPERS = '''\
import jax.numpy as jnp


def as_counts(x):
    return jnp.array(x, dtype="int64")
'''
EXTLIB = '''\
import jax.numpy as jnp


def widen(x):
    return jnp.asarray(x, dtype=jnp.float64)
'''
MODEL = '''\
import extlib
import jax
import jax.numpy as jnp

from pkg.helpers import as_counts


@jax.jit
def step(x):
    return x + as_counts(x) + extlib.widen(x)


@jax.jit
def quiet(x):
    return x + jnp.zeros(3, jnp.float32)
'''
TESTS = '''\
import jax.numpy as jnp

from pkg.model import quiet, step


def test_step():
    assert step(jnp.ones(3)).shape == (3,)
    assert step(jnp.ones(3)).shape == (3,)


def test_quiet():
    assert quiet(jnp.ones(3)).shape == (3,)
'''
MAIN = '''\
import jax.numpy as jnp

from pkg.model import step

for _ in range(3):
    step(jnp.ones(3))
'''


def _project(tmp_path: Path, conftest: str = "") -> tuple[Path, dict[str, str]]:
    """The project's folder, and the environment its runs use (the package outside the project
    on PYTHONPATH)."""
    root, lib = tmp_path / "project", tmp_path / "site"
    for path, text in {root / "pkg" / "__init__.py": "", root / "pkg" / "helpers.py": HELPERS,
                       root / "pkg" / "model.py": MODEL, root / "tests" / "test_model.py": TESTS,
                       root / "tests" / "conftest.py": conftest, root / "main.py": MAIN,
                       lib / "extlib.py": EXTLIB}.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    env = {k: v for k, v in os.environ.items() if k not in (
        "JAXLINT_RECORD", "PYTEST_ADDOPTS", "JAXLINT_OUTPUT_FORMAT", "PYTEST_XDIST_WORKER", "JAXLINT_RUN")}
    # Kept: a PYTHONPATH that chose which jaxlint runs (the JAX 0.4.35 environment's).
    paths = [str(lib)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env.update(JAX_PLATFORMS="cpu", PYTHONPATH=os.pathsep.join(paths))
    return root, env


def _session(tmp_path: Path, conftest: str = "") -> tuple[subprocess.CompletedProcess, list[dict]]:
    root, env = _project(tmp_path, conftest)
    run = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--jaxlint", "--jaxlint-report",
                          "report.json", "tests"], cwd=root, env=env, capture_output=True, text=True, timeout=600)
    return run, json.loads((root / "report.json").read_text())


def test_pytest_session_reports_at_the_projects_lines(tmp_path: Path) -> None:
    run, report = _session(tmp_path)
    assert "2 passed" in run.stdout, run.stdout + run.stderr
    found = {(Path(f["filename"]).name, f["location"]["row"]): f["message"] for f in report if f["code"] == "JX508"}
    assert set(found) == {("helpers.py", 5), ("model.py", 10)}, found
    assert found[("model.py", 10)].startswith("`asarray` asks for float64 (inside extlib.py:5, which this line calls)")
    # The tests saw JAX's warning as before: the plugin catches it only while it traces again.
    assert "Explicitly requested dtype int64 requested in array" in run.stdout


def test_pytest_session_with_x64_on_is_quiet(tmp_path: Path) -> None:
    run, report = _session(tmp_path, 'import jax\n\njax.config.update("jax_enable_x64", True)\n')
    assert "2 passed" in run.stdout, run.stdout + run.stderr
    assert [f for f in report if f["code"] == "JX508"] == []
    assert "Explicitly requested dtype" not in run.stdout


def test_jaxlint_run_reports_the_programs_requests(tmp_path: Path) -> None:
    root, env = _project(tmp_path)
    run = subprocess.run([sys.executable, "-m", "jaxlint", "run", "--no-cache", "--output-format", "json", "-o",
                          "report.json", "main.py"], cwd=root, env=env, capture_output=True, text=True, timeout=600)
    report = json.loads((root / "report.json").read_text())
    assert {(Path(f["filename"]).name, f["location"]["row"]) for f in report if f["code"] == "JX508"} == {
        ("helpers.py", 5), ("model.py", 10)}, run.stderr
