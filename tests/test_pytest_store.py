"""The test-run store (engine/store.py): a real ``pytest --jaxlint`` run in one process writes it,
a real ``jaxlint check`` in another reads it. Projects are generated in tmp_path; findings are
compared by (code, file, line)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

HELPERS = '''\
import jax.numpy as jnp


def guarded_log(x):
    return jnp.where(x > 0, jnp.log(x), 0.0)
'''

MODEL = '''\
import jax
import jax.numpy as jnp

from pkg.helpers import guarded_log


def loss(x):
    return jnp.sum(guarded_log(x))


def noisy(key, x):
    a = jax.random.normal(key, x.shape)
    b = jax.random.normal(key, x.shape)
    return x + a + b
'''

OTHER = '''\
import jax.numpy as jnp


def unrelated(x):
    return jnp.sin(x)
'''

TESTS = '''\
import jax
import jax.numpy as jnp

from pkg.model import loss, noisy
from pkg.other import unrelated


def test_loss():
    assert loss(jnp.ones(3)) == 0.0


def test_noisy():
    assert noisy(jax.random.PRNGKey(0), jnp.ones(3)).shape == (3,)


def test_other():
    assert unrelated(jnp.zeros(2)).shape == (2,)
'''

# (code, file, line) the tests' calls show: JX501 in the helper, JX401 at the second draw.
EXPECTED = {("JX501", "pkg/helpers.py", 5), ("JX401", "pkg/model.py", 13)}


def project(tmp_path: Path, tests: str = TESTS, model: str = MODEL, config: str = "") -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.jaxlint]\n" + textwrap.dedent(config))
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "helpers.py").write_text(HELPERS)
    (tmp_path / "pkg" / "model.py").write_text(model)
    (tmp_path / "pkg" / "other.py").write_text(OTHER)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_model.py").write_text(tests)
    return tmp_path


def environment(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("JAXLINT_RECORD", "PYTEST_ADDOPTS", "JAXLINT_OUTPUT_FORMAT", "PYTEST_XDIST_WORKER",
                        "JAXLINT_NO_CACHE", "JAXLINT_CACHE_DIR")}
    env["JAX_PLATFORMS"] = "cpu"
    env.update(extra)
    return env


def pytest_run(root: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--jaxlint",
                           "--jaxlint-report", "report.json", *args],
                          cwd=root, env=environment(**env), capture_output=True, text=True, timeout=600)


def check(root: Path, *args: str, **env: str) -> tuple[list[dict], str]:
    """The JSON findings and the summary (stderr) of ``jaxlint check`` on the project's package,
    without inference: these tests are about what the test run linted, which check would
    otherwise trace again with guessed arguments."""
    run = subprocess.run([sys.executable, "-m", "jaxlint", "check", "--no-infer-arguments", "--output-format", "json",
                          *args, "pkg"],
                         cwd=root, env=environment(**env), capture_output=True, text=True, timeout=600)
    assert run.returncode in (0, 1), run.stdout + run.stderr
    return json.loads(run.stdout), run.stderr


def places(findings: list[dict], root: Path) -> set[tuple[str, str, int]]:
    return {(f["code"], os.path.relpath(f["filename"], root), f["location"]["row"]) for f in findings}


def stored_entries(root: Path) -> list[Path]:
    return sorted(p for p in (root / ".jaxlint_cache" / "tests").rglob("*.json") if p.name != "last-session.json")


def test_check_reports_what_the_test_run_linted(tmp_path: Path) -> None:
    root = project(tmp_path)
    run = pytest_run(root)
    assert run.returncode == 1 and "3 passed" in run.stdout, run.stdout + run.stderr
    from_pytest = json.loads((root / "report.json").read_text())
    assert places(from_pytest, root) == EXPECTED
    assert len(stored_entries(root)) == 3  # one per module the tests reached
    findings, summary = check(root)
    # The same findings as the plugin reported, each saying where it came from.
    assert places(findings, root) == EXPECTED
    by_code = {f["code"]: f for f in findings}
    assert by_code["JX401"]["origin"] == "test run"
    assert by_code["JX401"]["test"] == "tests/test_model.py::test_noisy"
    assert by_code["JX501"]["test"] == "tests/test_model.py::test_loss"
    # The four JAX functions, all linted, by the tests.
    assert "linted 4 of 4 JAX functions: 0 traced here, 4 in the test run of " in summary, summary
    # Without the cache, check reads no store.
    findings, summary = check(root, "--no-cache")
    assert findings == [] and "linted 0 of 4 JAX functions (" in summary
    assert "checked nothing" in summary and "run `pytest --jaxlint`" in summary  # the first-run line


@pytest.mark.slow
def test_what_the_test_run_linted_is_not_traced_again_with_guessed_arguments(tmp_path: Path) -> None:
    """Inference on (the default): the four functions the tests linted keep the tests' real
    arguments and findings; none is traced again with guesses (whose findings would rival them)."""
    root = project(tmp_path)
    assert "3 passed" in pytest_run(root).stdout
    run = subprocess.run([sys.executable, "-m", "jaxlint", "check", "--output-format", "json", "pkg"],
                         cwd=root, env=environment(), capture_output=True, text=True, timeout=600)
    assert "linted 4 of 4 JAX functions: 0 traced here, 4 in the test run of " in run.stderr, run.stderr
    findings = json.loads(run.stdout)
    assert places(findings, root) == EXPECTED and {f["origin"] for f in findings} == {"test run"}
    # With rerun-tests, a stale entry's functions wait for their tests, not for guesses: here the
    # tests cannot finish in time, so they stay changed since the test run, none traced here.
    (root / "pkg" / "helpers.py").write_text(HELPERS + "\n\nSCALE = 2\n")
    (root / "pyproject.toml").write_text("[tool.jaxlint]\nrerun-tests = true\nrerun-timeout = 0.5\n")
    run = subprocess.run([sys.executable, "-m", "jaxlint", "check", "--output-format", "json", "pkg"],
                         cwd=root, env=environment(), capture_output=True, text=True, timeout=600)
    assert "did not finish within the time limit" in run.stderr, run.stderr
    assert "0 traced here" in run.stderr and "3 changed since the test run" in run.stderr, run.stderr


def test_entries_check_reads_are_kept_and_orphans_pruned_after_a_month(tmp_path: Path) -> None:
    """The store's entries live in the result cache and are pruned as its others are: one that
    check read is touched (kept), one no run read for 30 days (a module since deleted, an old
    configuration) goes after a check that wrote; the last-session record stays."""
    root = project(tmp_path)
    assert "3 passed" in pytest_run(root).stdout
    entries = stored_entries(root)
    orphan = entries[0].parent / ("0" * 64 + ".json")
    orphan.write_text(entries[0].read_text())
    session = root / ".jaxlint_cache" / "tests" / "last-session.json"
    for path in entries + [orphan, session]:
        os.utime(path, (0, 0))  # unused since 1970
    (root / "pkg" / "extra.py").write_text("import jax\n\n\n@jax.jit\ndef twice(x):\n    return 2 * x\n")
    findings, summary = check(root)  # reads the entries, writes extra.py's: then prunes
    assert places(findings, root) == EXPECTED and "4 in the test run of" in summary, summary
    assert not orphan.exists() and session.exists()
    assert all(path.stat().st_mtime > 0 for path in entries), "the entries check read were not touched"


def test_an_edit_makes_the_entries_that_depend_on_it_stale(tmp_path: Path) -> None:
    root = project(tmp_path)
    pytest_run(root)
    helpers = root / "pkg" / "helpers.py"
    # A helper module the traced code calls: its own entry and the caller's are stale.
    helpers.write_text(HELPERS + "\n\nSCALE = 2\n")
    findings, summary = check(root, "--show-untraced")
    assert places(findings, root) == set()
    assert "linted 1 of 4 JAX functions: 0 traced here, 1 in the test run of " in summary, summary
    assert "3 changed since the test run of " in summary
    # The listing below names the tests that reached each, as the summary says it does.
    assert "(--show-untraced lists them, what changed and the tests that reached them)" in summary
    # Most of what is not linted changed since the tests ran: the one step is running them again.
    assert "linted only 1 of 4 JAX functions; run the tests again with `pytest --jaxlint`" in summary
    assert "pkg/model.py:11: noisy [changed-since-test-run]" in summary
    assert "changed since: pkg/helpers.py" in summary
    assert "tests/test_model.py::test_noisy" in summary and "tests/test_model.py::test_loss" in summary
    # Back as it was: the entries serve again.
    helpers.write_text(HELPERS)
    findings, summary = check(root)
    assert places(findings, root) == EXPECTED and "4 in the test run" in summary
    # A comment in the helper module: only its own entry is stale (its lines moved), the code the
    # caller's traces ran is the same. The helper's function is still known by its name.
    helpers.write_text("# Helpers.\n" + HELPERS)
    findings, summary = check(root, "--show-untraced")
    assert "linted 3 of 4 JAX functions" in summary and "1 changed since the test run" in summary, summary
    assert "pkg/model.py" not in summary
    assert "pkg/helpers.py:5: guarded_log [changed-since-test-run]" in summary
    helpers.write_text(HELPERS)
    # A module none of their traces ran: only its own entry is stale.
    (root / "pkg" / "other.py").write_text(OTHER + "# edited\n")
    findings, summary = check(root)
    assert places(findings, root) == EXPECTED
    assert "linted 3 of 4 JAX functions" in summary and "1 changed since the test run" in summary
    # The module itself.
    (root / "pkg" / "model.py").write_text(MODEL + "# edited\n")
    findings, summary = check(root)
    assert places(findings, root) == {("JX501", "pkg/helpers.py", 5)}


EDITS_MEANWHILE = TESTS + '''

import os
import pathlib


def test_zz_the_user_edits_a_helper_meanwhile():
    """As an editor's save while the tests (or the traces after them) run: the same size, and
    the modification time put back as it was."""
    helpers = pathlib.Path(__file__).parent.parent / "pkg" / "helpers.py"
    before = helpers.stat()
    helpers.write_text(helpers.read_text().replace("jnp.log(x)", "jnp.exp(x)"))
    os.utime(helpers, ns=(before.st_atime_ns, before.st_mtime_ns))
'''


@pytest.mark.parametrize("imported", ["by the tests", "before jaxlint"])
def test_an_edit_while_the_session_runs_leaves_its_entries_stale(tmp_path: Path, imported: str) -> None:
    """The session ran the helper as it was when imported; an edit after that (here by the last
    test, before the session writes the store) must not be vouched for by the entries: they hold
    the digest of the bytes the watched import compiled, or, for a module imported before jaxlint
    started (``-p``: no watched import), its digest is unknown, since its change time is after
    the session's start (the modification time put back cannot hide the edit)."""
    root = project(tmp_path, tests=EDITS_MEANWHILE)
    args = ["-p", "no:xdist"] + (["-p", "pkg.helpers"] if imported == "before jaxlint" else [])
    run = pytest_run(root, *args)
    assert "4 passed" in run.stdout, run.stdout + run.stderr
    assert "jnp.exp(x)" in (root / "pkg" / "helpers.py").read_text()
    # The report reads the code that ran, not the edit: the source the watched import compiled;
    # a module it did not compile is said to have changed, its findings left out.
    report = run.stdout[run.stdout.index("= jaxlint ="):]
    assert "jnp.exp" not in report, report
    if imported == "by the tests":
        assert "5 |     return jnp.where(x > 0, jnp.log(x), 0.0)" in report, report
        logged = [f for f in json.loads((root / "report.json").read_text()) if f["code"] == "JX501"]
        assert "excludes x=0 from jnp.log(x)" in logged[0]["message"] and logged[0]["fix"], logged
    else:
        assert "jaxlint: pkg/helpers.py changed during the session: its 1 finding left out of this report" in report
        assert [f["code"] for f in json.loads((root / "report.json").read_text())] == ["JX401"]
    findings, summary = check(root, "--show-untraced")
    # helpers.py and model.py, whose traces ran it (before jaxlint, other.py too when it was
    # written within the racy margin of the session's start: its times cannot vouch for it).
    assert "changed since the test run of " in summary and "linted 4 of 4" not in summary, summary
    assert "pkg/helpers.py:4: guarded_log [changed-since-test-run]" in summary
    assert "pkg/model.py:11: noisy [changed-since-test-run]" in summary
    assert ("JX501", "pkg/helpers.py", 5) not in places(findings, root)


@pytest.mark.slow
def test_a_failing_session_stores_and_the_cache_switches_turn_the_store_off(tmp_path: Path) -> None:
    root = project(tmp_path, tests=TESTS + "\n\ndef test_fails():\n    assert loss(jnp.ones(2)) == 1.0\n")
    run = pytest_run(root, "--jaxlint-no-cache")
    assert "1 failed, 3 passed" in run.stdout and not (root / ".jaxlint_cache").exists()
    run = pytest_run(root, JAXLINT_NO_CACHE="1")
    assert "1 failed, 3 passed" in run.stdout and not (root / ".jaxlint_cache").exists()
    run = pytest_run(root, JAXLINT_CACHE_DIR=str(root / "elsewhere"))
    assert "1 failed, 3 passed" in run.stdout and not (root / ".jaxlint_cache").exists()
    findings, _ = check(root, JAXLINT_CACHE_DIR=str(root / "elsewhere"))
    assert places(findings, root) == EXPECTED
    findings, _ = check(root, "--cache-dir", "elsewhere")
    assert places(findings, root) == EXPECTED
    findings, _ = check(root)  # the default folder holds none
    assert findings == []


@pytest.mark.slow
def test_check_settles_stored_findings_with_its_own_configuration(tmp_path: Path) -> None:
    # The suppression is in the file during the test run: the store keeps the raw finding and
    # check applies the comment (--ignore-noqa shows it was stored).
    model = MODEL.replace("b = jax.random.normal(key, x.shape)", "b = jax.random.normal(key, x.shape)  # noqa: JX401")
    root = project(tmp_path, model=model)
    pytest_run(root)
    assert places(json.loads((root / "report.json").read_text()), root) == {("JX501", "pkg/helpers.py", 5)}
    findings, _ = check(root)
    assert places(findings, root) == {("JX501", "pkg/helpers.py", 5)}
    findings, _ = check(root, "--ignore-noqa")
    assert places(findings, root) == EXPECTED
    # per-file-ignores configured after the test run apply too; the entries stay current.
    (root / "pyproject.toml").write_text('[tool.jaxlint]\nper-file-ignores = {"pkg/helpers.py" = ["JX501"]}\n')
    findings, summary = check(root)
    assert findings == [] and "4 in the test run" in summary
    # A narrower selection is served by the entries of the wider one.
    findings, _ = check(root, "--select", "JX501", "--isolated")
    assert places(findings, root) == {("JX501", "pkg/helpers.py", 5)}


@pytest.mark.slow
def test_a_function_linted_here_and_in_the_test_run_counts_once(tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / "pkg" / "other.py").write_text(OTHER.replace("def unrelated", "# jaxlint: args x=f32[2]\ndef unrelated"))
    pytest_run(root)
    findings, summary = check(root)  # unrelated is a hinted target: traced here too
    assert places(findings, root) == EXPECTED
    assert "linted 4 of 4 JAX functions: 1 traced here, 3 in the test run of " in summary, summary


@pytest.mark.slow
def test_a_damaged_entry_is_ignored(tmp_path: Path) -> None:
    root = project(tmp_path)
    pytest_run(root)
    for entry in stored_entries(root):
        entry.write_text(entry.read_text()[:40])
    findings, summary = check(root)
    assert findings == [] and "test run" not in summary
    pytest_run(root)  # rewritten whole
    findings, _ = check(root)
    assert places(findings, root) == EXPECTED


@pytest.mark.slow
def test_under_xdist_the_controller_writes_the_store(tmp_path: Path) -> None:
    pytest.importorskip("xdist")
    # loss is called with two shapes, so JX501's place is seen by two signatures (maybe two workers)
    root = project(tmp_path, tests=TESTS + "\n\ndef test_loss_again():\n    assert loss(jnp.ones(5)) == 0.0\n")
    run = pytest_run(root, "-n", "2")
    assert "4 passed" in run.stdout, run.stdout + run.stderr
    findings, summary = check(root)
    assert places(findings, root) == EXPECTED
    assert "4 in the test run" in summary
    tests = {f["code"]: f["test"] for f in findings}
    assert tests["JX401"] == "tests/test_model.py::test_noisy"
    assert tests["JX501"] in ("tests/test_model.py::test_loss", "tests/test_model.py::test_loss_again")
    entries = [json.loads(p.read_text()) for p in stored_entries(root)]
    assert len(entries) == 3  # one per module the tests reached, not one per xdist worker
    for entry in entries:  # and each place once, whichever worker or signature saw it
        at = [(f["code"], tuple(sorted(f["span"].items()))) for f in entry["findings"]]
        assert len(at) == len(set(at)), at


LOGGED_TESTS = TESTS + '''

import os
import pytest


@pytest.fixture(autouse=True)
def log_the_test(request):
    with open(os.path.join(os.path.dirname(__file__), "..", "ran.log"), "a") as log:
        log.write(request.node.nodeid + "\\n")
'''


@pytest.mark.slow
def test_rerun_tests_runs_exactly_the_recorded_tests_of_the_stale_modules(tmp_path: Path) -> None:
    root = project(tmp_path, tests=LOGGED_TESTS)
    pytest_run(root)
    log = root / "ran.log"
    assert len(log.read_text().split()) == 3
    log.unlink()
    (root / "pkg" / "helpers.py").write_text(HELPERS + "\n\nSCALE = 2\n")
    run = subprocess.run([sys.executable, "-m", "jaxlint", "check", "--output-format", "json", "--rerun-tests", "pkg"],
                         cwd=root, env=environment(), capture_output=True, text=True, timeout=600)
    # helpers.py and model.py are stale: the tests that reached them, not test_other.
    assert sorted(log.read_text().split()) == ["tests/test_model.py::test_loss", "tests/test_model.py::test_noisy"]
    assert "2 modules changed since the test run (pkg/helpers.py, pkg/model.py)" in run.stderr, run.stderr
    assert places(json.loads(run.stdout), root) == EXPECTED
    assert "linted 4 of 4 JAX functions: 0 traced here, 4 in the test run" in run.stderr
    assert "changed since" not in run.stderr.splitlines()[-1]
    # The same in the configuration; a time limit that runs out is said, and nothing is lost. The
    # tests' limit is their own: the check's `timeout` (for import and tracing) does not bound them.
    log.unlink()
    # The re-run's tests import helpers.py: its 2 s sleep makes sure they cannot finish within the
    # 0.5 s limit on a fast machine (on a busy one they never did), so the count below is fixed.
    (root / "pkg" / "helpers.py").write_text(HELPERS + "\n\nimport time\ntime.sleep(2)\nSCALE = 3\n")
    (root / "pyproject.toml").write_text("[tool.jaxlint]\nrerun-tests = true\ntimeout = 30\n")
    findings, summary = check(root, "--rerun-timeout", "0.5")
    assert "did not finish within the time limit (0.5 s per module, --rerun-timeout, 1 s in all)" in summary, summary
    assert "3 changed since the test run" in summary and findings == []


@pytest.mark.slow
def test_rerun_tests_finds_tests_outside_the_project_folder(tmp_path: Path) -> None:
    """Tests in a sibling folder (equinox's and diffrax's releases ship none: their repositories'
    tests are run from beside them): pytest's rootdir is the common parent, and the recorded ids
    still run from the project's root, in the session the user gets by hand from there. The
    project's pytest section (here, a -k that would leave test_noisy out) is not that session's:
    a path among the re-run's arguments once made pytest take it (equinox's turns on run-time
    type checks: its re-run was 2.5 s slower than by hand)."""
    (tmp_path / "project").mkdir()
    root = project(tmp_path / "project", tests=LOGGED_TESTS)
    with open(root / "pyproject.toml", "a") as pyproject:
        pyproject.write('\n[tool.pytest.ini_options]\naddopts = "-k test_loss"\n')
    (tmp_path / "suite").mkdir()
    (root / "tests" / "test_model.py").rename(tmp_path / "suite" / "test_model.py")
    run = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", "--jaxlint",
                          "../suite"], cwd=root, env=environment(PYTHONPATH=os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])), capture_output=True,
                         text=True, timeout=600)
    assert "3 passed" in run.stdout, run.stdout + run.stderr
    log = tmp_path / "ran.log"  # beside the suite folder
    log.unlink()
    (root / "pkg" / "helpers.py").write_text(HELPERS + "\n\nSCALE = 2\n")
    run = subprocess.run([sys.executable, "-m", "jaxlint", "check", "--output-format", "json", "--rerun-tests", "pkg"],
                         cwd=root, env=environment(PYTHONPATH=os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])), capture_output=True, text=True, timeout=600)
    assert "ran them in" in run.stderr, run.stderr
    ran = sorted(log.read_text().split())  # as the re-run's pytest names them
    assert [nodeid.rpartition("::")[2] for nodeid in ran] == ["test_loss", "test_noisy"], ran
    assert places(json.loads(run.stdout), root) == EXPECTED
    # The re-run's session, started with node ids, wrote the store: its ids name the test file from
    # the root too, so a second edit runs them again (equinox's tests, re-run from node ids, were
    # once recorded as `::test_x`, which pytest refuses).
    stored = {t for entry in stored_entries(root) for f in json.loads(entry.read_text())["functions"] for t in f["tests"]}
    assert stored and all(t.startswith(f"..{os.sep}suite{os.sep}test_model.py::") for t in stored), stored
    log.unlink()
    (root / "pkg" / "helpers.py").write_text(HELPERS + "\n\nSCALE = 3\n")
    run = subprocess.run([sys.executable, "-m", "jaxlint", "check", "--output-format", "json", "--rerun-tests", "pkg"],
                         cwd=root, env=environment(PYTHONPATH=os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])), capture_output=True, text=True, timeout=600)
    assert "ran them in" in run.stderr, run.stderr
    assert sorted(nodeid.rpartition("::")[2] for nodeid in log.read_text().split()) == ["test_loss", "test_noisy"]


NICENESS_LOGGED = MODEL + '''

import os as _os
import sys as _sys

with open(_os.path.join(_os.path.dirname(__file__), "..", "niceness.log"), "a") as _log:
    _log.write(f"{'pytest' if 'pytest' in _sys.modules else 'check'} {_os.nice(0)}\\n")
'''


@pytest.mark.slow
def test_rerun_tests_lowers_checks_priority_below_the_tests(tmp_path: Path) -> None:
    """The report waits for the tests: check's workers, started after the session, run at a lower
    CPU priority than it (os.nice(0) as the project's module reads it at import in each)."""
    root = project(tmp_path, model=NICENESS_LOGGED)
    pytest_run(root)
    log = root / "niceness.log"
    log.unlink()
    (root / "pkg" / "helpers.py").write_text(HELPERS + "\n\nSCALE = 2\n")
    run = subprocess.run([sys.executable, "-m", "jaxlint", "check", "--output-format", "json", "--rerun-tests", "pkg"],
                         cwd=root, env=environment(), capture_output=True, text=True, timeout=600)
    assert "ran them in" in run.stderr, run.stderr
    seen = {tuple(line.split()) for line in log.read_text().splitlines()}
    tests = {int(n) for who, n in seen if who == "pytest"}
    check = {int(n) for who, n in seen if who == "check"}
    base = os.nice(0)
    assert tests == {base} and check == {min(base + 10, 19)}, seen


@pytest.mark.slow
def test_rerun_tests_leaves_out_a_test_file_deleted_since(tmp_path: Path) -> None:
    """One recorded test file gone would fail the whole session (pytest's usage error): the tests
    of the files that remain run. The gone file was an input of every entry its tests reached:
    other.py's too, whose test in the remaining file runs again."""
    root = project(tmp_path, tests=LOGGED_TESTS)
    (root / "tests" / "test_gone.py").write_text(LOGGED_TESTS.replace("def test_", "def test_gone_"))
    pytest_run(root)
    (root / "ran.log").unlink()
    (root / "tests" / "test_gone.py").unlink()
    (root / "pkg" / "helpers.py").write_text(HELPERS + "\n\nSCALE = 2\n")
    run = subprocess.run([sys.executable, "-m", "jaxlint", "check", "--output-format", "json", "--rerun-tests", "pkg"],
                         cwd=root, env=environment(), capture_output=True, text=True, timeout=600)
    assert "running the 3 tests that reached them again" in run.stderr and "ran them in" in run.stderr, run.stderr
    assert sorted((root / "ran.log").read_text().split()) == ["tests/test_model.py::test_loss",
                                                              "tests/test_model.py::test_noisy",
                                                              "tests/test_model.py::test_other"]
    assert places(json.loads(run.stdout), root) == EXPECTED


INTERRUPTED = TESTS + '''

def test_stop():
    raise KeyboardInterrupt  # pytest's own Ctrl-C path: the session ends as interrupted
'''


def test_an_interrupted_session_stores_what_its_tests_reached(tmp_path: Path) -> None:
    root = project(tmp_path, tests=INTERRUPTED)
    run = pytest_run(root, "-p", "no:xdist")
    assert run.returncode == 2 and "KeyboardInterrupt" in run.stdout, run.stdout + run.stderr
    assert "the tests were interrupted: linting the" in run.stderr
    findings, summary = check(root)
    assert places(findings, root) == EXPECTED  # the three tests before the interrupt reached both
    assert "in the test run of " in summary


def test_a_check_in_another_environment_says_why_the_store_is_not_used(tmp_path: Path) -> None:
    root = project(tmp_path)
    pytest_run(root, "-p", "no:xdist", JAX_PLATFORMS="cpu")
    findings, summary = check(root, JAX_PLATFORMS="")  # as a plain `jaxlint check` after `JAX_PLATFORMS=cpu pytest`
    assert findings == []
    assert "its results are not used: the test run of " in summary, summary
    assert "ran with JAX_PLATFORMS=cpu (JAX_PLATFORMS= here)" in summary, summary
    findings, summary = check(root, JAX_PLATFORMS="cpu")  # the same variables: used
    assert places(findings, root) == EXPECTED and "not used" not in summary


TRAIN = '''\
import jax
import jax.numpy as jnp


def step(x):
    return x * 2.0


def train(steps):
    x = jnp.ones(3)
    for _ in range(steps):
        x = jax.jit(step)(x)
    return x


def train_from(x):
    for _ in range(3):
        x = jax.jit(step)(x)
    return x
'''

TRAIN_TESTS = '''\
import jax.numpy as jnp

from pkg.train import train, train_from


def test_train():
    assert train(3).shape == (3,)


def test_train_from():
    assert train_from(jnp.ones(3)).shape == (3,)
'''


def test_a_safe_fix_in_code_no_linted_function_runs_is_unsafe_in_the_plugin_as_in_check(tmp_path: Path) -> None:
    """`train(3)` is called with no array, so the session traces nothing that runs its loop: its
    hoist cannot be compared on values and is not safe; `train_from`'s can, in the session."""
    root = project(tmp_path, tests=TRAIN_TESTS)
    (root / "pkg" / "train.py").write_text(TRAIN)
    pytest_run(root, "-p", "no:xdist")
    fixes = {f["location"]["row"]: f["fix"] for f in json.loads((root / "report.json").read_text())
             if f["code"] == "JX203"}
    assert fixes[12]["applicability"] == "unsafe" and "no traced function runs this code" in fixes[12]["message"]
    assert fixes[18]["applicability"] == "safe", fixes
    # check runs only what it traces itself: without the tests' arguments for `train_from`, it
    # cannot compare values there either, and says so.
    findings, _ = check(root)
    fixes = {f["location"]["row"]: f["fix"] for f in findings if f["code"] == "JX203"}
    assert set(fixes) == {12, 18}
    assert all(fix["applicability"] == "unsafe" and "no traced function runs this code" in fix["message"]
               for fix in fixes.values())


TRAIN_PROGRAM = '''\
import jax.numpy as jnp

from pkg.train import train, train_from

train(3)
train_from(jnp.ones(3))
'''


def test_a_test_run_and_a_program_s_run_store_the_same_undemoted_fixes(tmp_path: Path) -> None:
    """Demotion is a decision about what is shown: both watched runs show `train`'s hoist as
    unsafe (nothing they traced runs it) and both store it as the rule made it, safe, for check to
    judge by what it traces."""
    root = project(tmp_path, tests=TRAIN_TESTS)
    (root / "pkg" / "train.py").write_text(TRAIN)
    (root / "prog.py").write_text(TRAIN_PROGRAM)
    pytest_run(root, "-p", "no:xdist")
    run = subprocess.run([sys.executable, "-m", "jaxlint", "run", "--output-format", "json", "--", "python", "prog.py"],
                         cwd=root, env=environment(), capture_output=True, text=True, timeout=600)
    shown = {f["location"]["row"]: f["fix"]["applicability"] for f in json.loads(run.stdout) if f["code"] == "JX203"}
    assert shown == {12: "unsafe", 18: "safe"}, run.stderr
    stored = {}
    for entry in stored_entries(root):
        data = json.loads(entry.read_text())
        if data["path"].endswith("train.py"):
            stored[data["origin"]] = sorted((f["span"]["start_line"], f["fix"]["applicability"], f["fix"]["message"])
                                            for f in data["findings"] if f["code"] == "JX203")
    assert set(stored) == {"test run", "jaxlint run"}
    assert stored["test run"] == stored["jaxlint run"]
    assert [(line, applicability) for line, applicability, _ in stored["jaxlint run"]] == [(12, "safe"), (18, "safe")]
    assert not any("unsafe:" in message for _, _, message in stored["jaxlint run"])


MAPPED = '''\
import jax


def blackbox_function(x, y):
    x = x + 1
    y = x * y
    return x, y


@jax.jit
def mapped(x, y):
    x, y = jax.vmap(blackbox_function, in_axes=(None, 0))(x, y)
    return x[0], y
'''

MAPPED_TWICE = '''\
import jax.numpy as jnp

from pkg.mapped import mapped


def test_mapped():
    mapped(1.0, jnp.ones(10))
    mapped(1.0, jnp.ones(7))
'''


def test_two_signatures_finding_one_place_report_once_in_every_driver_and_are_stored_once(tmp_path: Path) -> None:
    """Batches of 10, then 7: the plugin and `jaxlint run` keep every signature's finding, settle
    reports the first signature's; the store keeps one per place, which check reports."""
    root = project(tmp_path, tests=MAPPED_TWICE)
    (root / "pkg" / "mapped.py").write_text(MAPPED)
    (root / "prog.py").write_text(MAPPED_TWICE + "\n\ntest_mapped()\n")
    pytest_run(root, "-p", "no:xdist")
    [shown] = json.loads((root / "report.json").read_text())
    assert shown["code"] == "JX101" and "(10 copies)" in shown["message"]
    [entry] = [data for data in map(json.loads, map(Path.read_text, stored_entries(root)))
               if data["path"].endswith("mapped.py")]
    assert [f["code"] for f in entry["findings"]] == ["JX101"]
    findings, _ = check(root)
    assert [(f["code"], "(10 copies)" in f["message"]) for f in findings] == [("JX101", True)]
    run = subprocess.run([sys.executable, "-m", "jaxlint", "run", "--no-cache", "--output-format", "json", "--",
                          "python", "prog.py"], cwd=root, env=environment(), capture_output=True, text=True, timeout=600)
    assert [(f["code"], "(10 copies)" in f["message"]) for f in json.loads(run.stdout)] == [("JX101", True)], run.stderr


@pytest.mark.slow
def test_the_tests_named_to_rerun_are_those_that_gave_a_signature(tmp_path: Path) -> None:
    """optax's `partition`: its first three tests pass empty trees (no array, nothing to lint), a
    fourth passes arrays. The store names that fourth test first, so after an edit `--rerun-tests`
    lints the function again instead of losing it."""
    tests = textwrap.dedent('''\
        import jax.numpy as jnp

        from pkg.model import loss


        def test_empty_a():
            assert loss([]) == 0.0


        def test_empty_b():
            assert loss(()) == 0.0


        def test_empty_c():
            assert loss({}) == 0.0


        def test_arrays():
            assert loss([jnp.ones(2)]) == 0.0
        ''')
    model = "import jax.numpy as jnp\n\n\ndef loss(tree):\n    return sum(jnp.sum(jnp.log(x)) for x in tree)\n"
    root = project(tmp_path, tests=tests, model=model)
    assert "4 passed" in pytest_run(root, "-p", "no:xdist").stdout
    _, summary = check(root)
    assert "linted 1 of 3 JAX functions: 0 traced here, 1 in the test run" in summary, summary
    (root / "pkg" / "model.py").write_text(model + "\n\nSCALE = 2\n")
    _, summary = check(root, "--rerun-tests")
    assert "running the 3 tests that reached it again" in summary, summary
    assert "linted 1 of 3 JAX functions: 0 traced here, 1 in the test run" in summary, summary


@pytest.mark.slow
def test_a_fix_of_a_stored_finding_is_verified_on_the_targets_check_traced(tmp_path: Path) -> None:
    """The test run linted ``guarded_log``, so check does not guess its arguments; the fixed file is
    verified on the same targets, not on a guess that was not traced before the fix."""
    root = project(tmp_path)
    assert "3 passed" in pytest_run(root).stdout
    run = subprocess.run([sys.executable, "-m", "jaxlint", "check", "--fix", "--unsafe-fixes", "pkg"],
                         cwd=root, env=environment(), capture_output=True, text=True, timeout=600)
    assert "not traced before the fix" not in run.stderr + run.stdout, run.stderr
    assert "jnp.log(jnp.where(x > 0, x, 1.0))" in (root / "pkg" / "helpers.py").read_text(), run.stdout + run.stderr


CONFTEST = '''\
import jax.numpy as jnp
import pytest


@pytest.fixture
def ones():
    return jnp.ones(3)
'''

FIXTURE_TESTS = TESTS.replace("def test_loss():\n    assert loss(jnp.ones(3)) == 0.0",
                              "def test_loss(ones):\n    assert loss(ones) == 0.0")


def test_an_edit_of_a_test_or_a_conftest_makes_the_entries_its_tests_reached_stale(tmp_path: Path) -> None:
    """The calls a module's functions were traced with come from the tests and their fixtures:
    an edit of the test module or of a conftest.py above it leaves the entries of what its tests
    reached stale, as an edit of a module does (content digests: an edit in the same second,
    its time put back, too), and ``--rerun-tests`` runs those tests again. The files are written
    just before the session: their digests are of the bytes pytest imported, not judged by their
    times."""
    root = project(tmp_path, tests=FIXTURE_TESTS)
    conftest = root / "tests" / "conftest.py"
    conftest.write_text(CONFTEST)
    assert "3 passed" in pytest_run(root).stdout
    findings, summary = check(root)
    assert places(findings, root) == EXPECTED and "linted 4 of 4 JAX functions" in summary, summary
    assert "changed since" not in summary
    tests = root / "tests" / "test_model.py"
    # A comment: the same code ran, the entries stand.
    tests.write_text("# The model's tests.\n" + FIXTURE_TESTS)
    findings, summary = check(root)
    assert places(findings, root) == EXPECTED and "changed since" not in summary, summary
    # Another call, the same size, its modification time put back: every module its tests reached
    # (all four: one test module).
    before = tests.stat()
    tests.write_text(tests.read_text().replace("jnp.ones(3)).shape", "jnp.ones(4)).shape"))
    os.utime(tests, ns=(before.st_atime_ns, before.st_mtime_ns))
    findings, summary = check(root, "--show-untraced")
    assert "linted 0 of 4 JAX functions" in summary and "4 changed since the test run" in summary, summary
    assert "pkg/other.py:4: unrelated [changed-since-test-run]" in summary
    assert "changed since: tests/test_model.py" in summary
    # Run again, they serve; then the conftest.py above the tests.
    tests.write_text(FIXTURE_TESTS)
    findings, summary = check(root)
    assert "linted 4 of 4 JAX functions" in summary and "changed since" not in summary, summary
    conftest.write_text(CONFTEST.replace("jnp.ones(3)", "jnp.ones(5)"))
    findings, summary = check(root, "--show-untraced")
    assert "changed since: tests/conftest.py" in summary, summary
    assert ("JX501", "pkg/helpers.py", 5) not in places(findings, root)
    # --rerun-tests runs the tests that reached the stale entries: fresh again.
    findings, summary = check(root, "--rerun-tests")
    assert places(findings, root) == EXPECTED and "linted 4 of 4 JAX functions" in summary, summary
    assert "changed since" not in summary.splitlines()[-1]


CONFTEST_EDITED_MEANWHILE = CONFTEST + '''

def pytest_sessionfinish(session):
    """As an editor's save while the tests run: the same size, the modification time put back."""
    import os
    import pathlib

    conftest = pathlib.Path(__file__)
    before = conftest.stat()
    conftest.write_text(conftest.read_text().replace("jnp.ones(3)", "jnp.ones(4)"))
    os.utime(conftest, ns=(before.st_atime_ns, before.st_mtime_ns))
'''


def test_a_conftest_edited_while_the_session_runs_leaves_the_entries_stale(tmp_path: Path) -> None:
    root = project(tmp_path, tests=FIXTURE_TESTS)
    (root / "tests" / "conftest.py").write_text(CONFTEST_EDITED_MEANWHILE)
    assert "3 passed" in pytest_run(root, "-p", "no:xdist").stdout
    assert "jnp.ones(4)" in (root / "tests" / "conftest.py").read_text()
    findings, summary = check(root, "--show-untraced")
    assert "changed since: tests/conftest.py" in summary and "linted 4 of 4" not in summary, summary
