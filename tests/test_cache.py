"""The result cache (engine/cache.py): an unchanged module is not imported again, a change to
anything its result depends on is seen, and a damaged cache is never trusted. Real analyses; the
runs that must not import JAX are real processes."""
from __future__ import annotations

import json
import os
import pkgutil
import subprocess
import sys
import textwrap
from pathlib import Path
from unittest import mock

import pytest
from helpers import check_in_process

import jaxlint.rules
from jaxlint.config import load_config
from jaxlint.config.selection import select_rules
from jaxlint.engine.cache import ResultCache, index_bytes, read_index
from jaxlint.engine.results import CheckResult

RULES = select_rules(None, None)

HELPERS = """\
import jax.numpy as jnp


def shift(x):
    return x + 1
"""

MAIN = """\
import jax

from shifts import shift


def blackbox(x, y):
    x = shift(x)
    return x, x * y


@jax.jit
def mapped(x, y):
    x, y = jax.vmap(blackbox, in_axes=(None, 0))(x, y)
    return x[0], y


mapped(1.0, jax.numpy.arange(4.0))
"""

ALONE = """\
import jax


@jax.jit
def alone(x):
    return x * 2


alone(1.0)
"""


def project(tmp_path: Path) -> Path:
    (tmp_path / "jaxlint.toml").write_text("")  # the project root, wherever the test runs
    (tmp_path / "shifts.py").write_text(HELPERS)
    (tmp_path / "main.py").write_text(MAIN)
    (tmp_path / "alone.py").write_text(ALONE)
    return tmp_path


def run(root: Path, cache: bool = True) -> CheckResult:
    config = load_config([str(root)])
    assert config.root == str(root)  # (without a configuration file it would be the cwd)
    return check_in_process([str(root)], RULES, config=config,
                            cache=ResultCache(config.cache_dir, config.root) if cache else None)


def analyzed(result: CheckResult) -> set[str]:
    """The modules imported this run: those with a job whose result did not come from the cache
    (a fresh result has timings)."""
    return {Path(a.source.path).name for a in result.files if a.result is not None and a.result.timings}


def findings(result: CheckResult) -> list[tuple]:
    return [(Path(f.path).name, f.span.start_line, f.code, f.message) for f in result.findings]


def test_an_unchanged_tree_is_not_analyzed_again(tmp_path: Path) -> None:
    root = project(tmp_path)
    first = run(root)
    assert analyzed(first) == {"main.py", "alone.py"} and first.cached == 0
    assert any(code == "JX101" for _, _, code, _ in findings(first))
    second = run(root)
    assert second.cached == 2 and analyzed(second) == set() and second.workers_started == 0
    assert findings(second) == findings(first) and second.linted == first.linted
    # The cache folder keeps itself out of git, as ruff's does.
    assert (root / ".jaxlint_cache" / ".gitignore").read_text().endswith("*\n")


def test_a_changed_helper_invalidates_its_importers_only(tmp_path: Path) -> None:
    root = project(tmp_path)
    run(root)
    (root / "shifts.py").write_text(HELPERS.replace("x + 1", "x + 2"))
    assert analyzed(run(root)) == {"main.py"}
    (root / "alone.py").write_text(ALONE.replace("x * 2", "x * 3"))
    assert analyzed(run(root)) == {"alone.py"}
    assert analyzed(run(root)) == set()


def test_an_edit_of_an_imported_file_with_no_jax_is_seen_once(tmp_path: Path) -> None:
    """A module re-linted after an edit of a file it imports keeps its entry's key; the run's
    index must still be rewritten (the edited file, never scanned, changes no other key)."""
    root = project(tmp_path)
    (root / "constants.py").write_text("OFFSET = 1\n")
    (root / "offsets.py").write_text("import jax\n\nfrom constants import OFFSET\n\n\n@jax.jit\n"
                                     "def shifted(x):\n    return x + OFFSET\n\n\nshifted(1.0)\n")
    run(root)
    (root / "constants.py").write_text("OFFSET = 2\n")
    assert analyzed(run(root)) == {"offsets.py"}
    assert analyzed(run(root)) == set()


def test_a_changed_examples_file_invalidates_the_modules_it_covers(tmp_path: Path) -> None:
    (tmp_path / "first.py").write_text("import jax.numpy as jnp\n\n\ndef f(x):\n    return jnp.sum(x)\n")
    (tmp_path / "second.py").write_text("import jax.numpy as jnp\n\n\ndef g(x):\n    return jnp.max(x)\n")
    examples = "import jax.numpy as jnp\nimport jaxlint\n\nfrom first import f\n\njaxlint.example(f, jnp.ones({n}))\n"
    (tmp_path / "examples.py").write_text(examples.format(n=3))
    # Without inference the examples file is the only source of arguments: g is traced only once
    # it registers g (with inference, test_an_example_replaces_inferred_arguments_of_a_cached_module).
    (tmp_path / "jaxlint.toml").write_text('examples = ["examples.py"]\ninfer-arguments = false\n')
    first = run(tmp_path)
    assert {"first.py", "second.py"} <= analyzed(first) and first.traced == 1
    (tmp_path / "examples.py").write_text(examples.format(n=5))
    assert analyzed(run(tmp_path)) == {"first.py"}  # second.py is not named by it
    # A new registration of second.py's function (it imports second now) re-analyzes second.py.
    (tmp_path / "examples.py").write_text(examples.format(n=5) + "from second import g\njaxlint.example(g, jnp.ones(2))\n")
    again = run(tmp_path)
    assert analyzed(again) == {"first.py", "second.py"} and again.traced == 2


def test_an_example_replaces_inferred_arguments_of_a_cached_module(tmp_path: Path) -> None:
    (tmp_path / "plain.py").write_text("import jax.numpy as jnp\n\n\ndef g(x):\n    return jnp.max(x)\n")
    (tmp_path / "examples.py").write_text("import jaxlint\n")
    (tmp_path / "jaxlint.toml").write_text('examples = ["examples.py"]\n')  # inference on: the default

    def sources(result: CheckResult) -> list[tuple[str, str]]:
        return [(t.target, t.source) for a in result.files if a.result is not None for t in a.result.traced]

    first = run(tmp_path)
    assert analyzed(first) == {"plain.py"} and sources(first) == [("g", "inferred")]
    assert analyzed(run(tmp_path)) == set()
    (tmp_path / "examples.py").write_text("import jax.numpy as jnp\nimport jaxlint\n\nfrom plain import g\n\n"
                                          "jaxlint.example(g, jnp.ones(2))\n")
    again = run(tmp_path)
    assert analyzed(again) == {"plain.py"} and sources(again) == [("g", "examples")]


def test_a_changed_signatures_entry_invalidates_its_module_only(tmp_path: Path) -> None:
    for name in ("first", "second"):
        (tmp_path / f"{name}.py").write_text(f"import jax.numpy as jnp\n\n\ndef {name}(x):\n    return jnp.sum(x)\n")
    (tmp_path / "jaxlint.toml").write_text("")  # the root: the signatures file is <root>/.jaxlint/
    signatures = tmp_path / ".jaxlint" / "signatures.json"
    signatures.parent.mkdir()

    def record(first_shape: str) -> None:
        functions = {f"{name}.py::{name}": {"params": ["x"], "signatures": [{"x": shape}]}
                     for name, shape in (("first", first_shape), ("second", "f32[2]"))}
        signatures.write_text(json.dumps({"version": 1, "functions": functions}))

    record("f32[3]")
    assert run(tmp_path).traced == 2
    record("f32[7]")
    assert analyzed(run(tmp_path)) == {"first.py"}


def test_a_corrupt_or_foreign_entry_is_ignored_and_rewritten(tmp_path: Path) -> None:
    root = project(tmp_path)
    expected = findings(run(root))
    entries = sorted((root / ".jaxlint_cache" / "results").rglob("*.json"))
    assert len(entries) == 2
    entries[0].write_text(entries[0].read_text()[:40])  # truncated
    foreign = json.loads(entries[1].read_text())
    foreign["key"] = "0" * 64  # an entry copied from elsewhere
    entries[1].write_text(json.dumps(foreign))
    assert run(root).cached == 2  # the run's index holds both entries whole: their files are not read
    for index in (root / ".jaxlint_cache" / "index").rglob("*.index"):
        index.write_bytes(index.read_bytes()[:100])  # a damaged index: ignored, so the entries' files are read
    again = run(root)
    assert again.cached == 0 and findings(again) == expected
    assert run(root).cached == 2  # rewritten whole


def test_the_index_is_rebuilt_and_entries_serve_without_it(tmp_path: Path) -> None:
    root = project(tmp_path)
    expected = findings(run(root))
    [index] = (root / ".jaxlint_cache" / "index").rglob("*.index")
    whole = index.read_bytes()
    for damaged in (whole[:-5], whole[:31], whole[:32] + b"\0" + whole[33:], b""):  # cut, checksum only, a byte changed
        index.write_bytes(damaged)
        again = run(root)
        assert again.cached == 2 and findings(again) == expected  # from the entries' own files
    assert sorted(read_index(str(index))["entries"]) == sorted(  # rebuilt from what served
        f"{p.parent.parent.name}/{p.stem}" for p in (root / ".jaxlint_cache").glob("[rs]*/*/*.json"))
    assert read_index(str(index))["entries"] == {  # as the entries' files hold them
        f"{p.parent.parent.name}/{p.stem}": json.loads(p.read_text())
        for p in (root / ".jaxlint_cache").glob("[rs]*/*/*.json")}
    foreign = read_index(str(index))
    foreign["key"] = "0" * 64  # an index copied from another run's
    index.write_bytes(index_bytes(foreign))
    assert run(root).cached == 2 and read_index(str(index))["key"] == index.stem
    index.write_bytes(index_bytes([foreign]))  # whole, but not an index
    assert run(root).cached == 2 and read_index(str(index))["key"] == index.stem
    index.unlink()
    assert run(root).cached == 2 and index.exists()
    other = check_in_process([str(root / "main.py")], RULES, config=load_config([str(root)]),  # another run's shape
                             cache=ResultCache(str(root / ".jaxlint_cache"), str(root)))
    assert other.cached == 1 and len(list((root / ".jaxlint_cache" / "index").rglob("*.index"))) == 2


def test_an_edit_that_keeps_the_size_and_the_time_is_seen(tmp_path: Path) -> None:
    """Files are hashed on every run, not trusted by size and modification time (git checkouts
    and some editors keep both while the bytes change)."""
    root = project(tmp_path)
    assert run(root).cached == 0
    alone = root / "alone.py"
    info = alone.stat()
    alone.write_text(ALONE.replace("x * 2", "x * 3"))  # the same size
    os.utime(alone, ns=(info.st_atime_ns, info.st_mtime_ns))
    assert alone.stat().st_size == info.st_size and alone.stat().st_mtime_ns == info.st_mtime_ns
    again = run(root)
    assert again.cached == 1  # main.py only: alone.py was analyzed again
    assert [f.message for f in again.findings] == [f.message for f in run(root, cache=False).findings]


def test_no_cache_neither_reads_nor_writes(tmp_path: Path) -> None:
    root = project(tmp_path)
    run(root, cache=False)
    assert not (root / ".jaxlint_cache").exists()


def test_a_timed_out_module_is_not_kept(tmp_path: Path) -> None:
    (tmp_path / "slow.py").write_text("import time\nimport jax\n\ntime.sleep(30)\n\n\n@jax.jit\ndef f(x):\n    return x\n")
    from jaxlint.engine.check import check

    (tmp_path / "jaxlint.toml").write_text("")
    config = load_config([str(tmp_path)])
    for _ in range(2):
        result = check([str(tmp_path)], RULES, timeout=2.0, config=config,
                       cache=ResultCache(str(tmp_path / ".jaxlint_cache"), str(tmp_path)))
        assert [f.code for f in result.findings] == ["JX902"] and result.cached == 0


def cli(root: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """jaxlint check in a fresh interpreter, saying at the end whether JAX was imported."""
    code = textwrap.dedent(f"""
        import sys
        from jaxlint.cli.main import main
        status = main(["check", *{list(args)!r}])
        print("jax imported" if "jax" in sys.modules else "jax not imported", file=sys.stderr)
        sys.exit(status)
    """)
    return subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=300,
                          env={**os.environ, **(env or {})})


# What a warm run has no use for, imported lazily (bench/bench_cache.py times the warm run): the
# installed distributions' metadata (--version's), the writers of other output formats, the rule
# pages (formats that link or show them), and what only a cache miss or `jaxlint clean` needs:
# the rule modules (the catalog has their metadata) and the IR they read.
RULE_MODULES = [f"jaxlint.rules.{module.name}" for module in pkgutil.iter_modules(jaxlint.rules.__path__)
                if module.name not in ("catalog", "registry")] + ["jaxlint.ir"]
LAZY = ["importlib.metadata", "jaxlint.report.junit", "jaxlint.report.sarif", "jaxlint.report.gitlab",
        "jaxlint.report.ruledocs", "jaxlint.report.statistics", "xml.etree.ElementTree", *RULE_MODULES]

# A suppression that suppresses nothing: every run settles it (JX800) from the file's comments.
SUPPRESSED = """\
import jax


@jax.jit
def double(x):
    return x * 2  # noqa: JX101


double(1.0)
"""


def warm_imports(root: Path) -> tuple[set[str], int]:
    """Which of LAZY a `jaxlint check .` in a fresh interpreter imported, and how many texts it
    tokenized (suppression comments the scan cache did not have)."""
    code = textwrap.dedent(f"""
        import json
        import sys
        import jaxlint.scan.noqa as noqa
        texts = []
        tokenized = noqa.tokenized
        noqa.tokenized = lambda text: texts.append(text) or tokenized(text)
        from jaxlint.cli.main import main
        main(["check", "."])
        print(json.dumps([sorted(set({LAZY!r}) & set(sys.modules)), len(texts)]))
    """)
    run = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=300)
    imported, tokenized = json.loads(run.stdout.splitlines()[-1])
    return set(imported), tokenized


@pytest.mark.slow
def test_the_command_line_second_run_imports_no_jax_and_clean_removes_the_cache(tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / "suppressed.py").write_text(SUPPRESSED)
    first = cli(root, "--timings", ".")
    assert first.returncode == 1 and "JX101" in first.stdout and "worker-start 0.0 ms" not in first.stderr
    assert "suppressed.py:6:19: JX800" in first.stdout
    second = cli(root, "--timings", ".")
    assert second.stdout == first.stdout and second.returncode == 1
    # No worker started (one imports JAX), and jaxlint's own process never imports it.
    assert "worker-start 0.0 ms" in second.stderr and second.stderr.endswith("jax not imported\n")
    assert warm_imports(root) == (set(), 0)
    assert "worker-start 0.0 ms" not in cli(root, "--no-cache", "--timings", ".").stderr
    assert "worker-start 0.0 ms" not in cli(root, "--timings", ".", env={"JAXLINT_NO_CACHE": "1"}).stderr
    clean = subprocess.run([sys.executable, "-m", "jaxlint", "clean"], cwd=root, capture_output=True, text=True)
    assert clean.returncode == 0 and "Removing cache at:" in clean.stderr
    assert not (root / ".jaxlint_cache").exists()


def test_clean_removes_no_folder_jaxlint_did_not_make(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture) -> None:
    """A project's `cache-dir` can name any folder: `jaxlint clean` removes it only when jaxlint made it."""
    from jaxlint.cli.main import main

    home = tmp_path / "home"
    (home / "notes").mkdir(parents=True)
    (home / "notes" / "todo.txt").write_text("keep me")
    project = tmp_path / "project"
    project.mkdir()
    (project / "jaxlint.toml").write_text(f'cache-dir = "{home}"\n')
    monkeypatch.chdir(project)
    assert main(["clean"]) == 2
    assert capsys.readouterr().err.startswith(f"jaxlint: not removed: {home} holds no CACHEDIR.TAG written by jaxlint")
    assert (home / "notes" / "todo.txt").read_text() == "keep me"
    cache = ResultCache(str(project / "made"), str(project))
    cache._prepare()  # the folder as jaxlint makes it, with its markers
    (project / "jaxlint.toml").write_text('cache-dir = "made"\n')
    assert main(["clean"]) == 0 and not (project / "made").exists()


@pytest.mark.slow
def test_the_cache_folder_from_the_flag_the_environment_or_the_configuration(tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / "jaxlint.toml").write_text('cache-dir = "build/lint-cache"\n')  # relative to its file
    cli(root, ".")
    assert (root / "build" / "lint-cache" / "results").is_dir()
    cli(root, ".", env={"JAXLINT_CACHE_DIR": str(tmp_path / "from-env")})
    assert (tmp_path / "from-env" / "results").is_dir()
    cli(root, "--cache-dir", "from-flag", ".", env={"JAXLINT_CACHE_DIR": str(tmp_path / "unused")})
    assert (root / "from-flag" / "results").is_dir() and not (tmp_path / "unused").exists()
    assert not (root / ".jaxlint_cache").exists()


def test_two_concurrent_runs_agree_and_leave_whole_entries(tmp_path: Path) -> None:
    root = project(tmp_path)
    code = "import sys\nfrom jaxlint.cli.main import main\nsys.exit(main(['check', '.']))\n"
    runs = [subprocess.Popen([sys.executable, "-c", code], cwd=root, stdout=subprocess.PIPE, text=True)
            for _ in range(2)]
    outputs = [process.communicate(timeout=300)[0] for process in runs]
    assert outputs[0] == outputs[1] and "JX101" in outputs[0]
    for entry in (root / ".jaxlint_cache" / "results").rglob("*"):
        if entry.is_file():
            json.loads(entry.read_text())  # never half-written
    assert run(root).cached == 2


@pytest.mark.slow
def test_fix_works_from_cached_results_and_the_fixed_file_is_analyzed_again(tmp_path: Path) -> None:
    root = project(tmp_path)
    assert "JX101" in cli(root, ".").stdout
    fixed = cli(root, "--fix", ".")  # the findings come from the cache; the fix is verified anew
    assert fixed.returncode == 0 and "1 fixed" in fixed.stderr
    assert "out_axes" in (root / "main.py").read_text()
    after = run(root)
    assert analyzed(after) == {"main.py"} and not [f for f in after.findings if f.code == "JX101"]


def test_an_unchanged_file_is_not_scanned_again(tmp_path: Path) -> None:
    """The scan (targets, JAX functions, source-rule findings) is kept by the file's bytes."""
    root = project(tmp_path)
    first = run(root)
    with mock.patch("jaxlint.engine.check._scan", side_effect=AssertionError("scanned")):
        second = run(root)
    assert [(a.targets, a.functions) for a in second.files] == [(a.targets, a.functions) for a in first.files]
    (root / "alone.py").write_text(ALONE + "\n# changed\n")
    with mock.patch("jaxlint.engine.check._scan", side_effect=AssertionError("scanned")):
        try:
            run(root)
        except AssertionError as error:
            assert str(error) == "scanned"
        else:
            raise AssertionError("a changed file was not scanned")


@pytest.mark.slow
def test_diff_reads_the_cache_and_writes_nothing(tmp_path: Path) -> None:
    root = project(tmp_path)
    diff = cli(root, "--diff", ".")
    assert "+++ b/main.py" in diff.stdout and not (root / ".jaxlint_cache").exists()
    cli(root, ".")
    again = cli(root, "--diff", "--timings", ".")
    assert again.stdout == diff.stdout and "worker-start 0.0 ms" in again.stderr  # the findings were cached


def test_entries_unused_for_a_month_are_pruned_after_a_run_that_wrote(tmp_path: Path) -> None:
    root = project(tmp_path)
    run(root)

    def entries() -> list[tuple[str, str]]:
        return sorted((p.parent.parent.name, Path(json.loads(p.read_text())["path"]).name)
                      for p in (root / ".jaxlint_cache").glob("[rs]*/*/*.json"))

    before = entries()
    assert before == [("results", "alone.py"), ("results", "main.py"),
                      ("scans", "alone.py"), ("scans", "main.py"), ("scans", "shifts.py")]
    for entry in (root / ".jaxlint_cache").rglob("*.json"):
        os.utime(entry, (0, 0))  # unused since 1970
    run(root)  # wrote nothing: pruned nothing, and touched the index that served it
    assert entries() == before and all(p.stat().st_mtime > 0 for p in (root / ".jaxlint_cache" / "index").rglob("*"))
    for entry in (root / ".jaxlint_cache").rglob("*.json"):
        os.utime(entry, (0, 0))
    (root / "alone.py").write_text(ALONE + "\n# changed\n")
    run(root)  # wrote alone.py's new entries; its old ones served nobody: gone
    assert entries() == before  # the others untouched for a month, but held by the index that served
    assert len(list((root / ".jaxlint_cache").glob("[rs]*/*/*.json"))) == 5
    (root / "alone.py").write_text(ALONE + "\n# changed again\n")
    for old in (root / ".jaxlint_cache").rglob("*.json"):
        os.utime(old, (0, 0))  # index and entries alike unused for a month
    assert run(root).cached == 1  # main.py, from the index, which the run touched and wrote anew
    assert entries() == before  # alone.py's previous entries gone, the rest held by that index


def test_a_job_is_keyed_by_the_text_of_its_json(tmp_path: Path) -> None:
    """The key hashes a job's fields without dataclasses.asdict's deep copies: the same JSON text."""
    from jaxlint.engine.cache import _plain
    from jaxlint.engine.check import prepare

    root = project(tmp_path)
    config = load_config([str(root)])
    job = prepare(str(root / "main.py"), [r.code for r in RULES], config).job
    assert job is not None and job.targets and job.settings.rule_options
    assert json.dumps(_plain(job), sort_keys=True) == json.dumps(job.to_json(), sort_keys=True)


RUNAWAY_GUESS = """\
import itertools

import jax.numpy as jnp
from jaxtyping import Array, Float


def safe_log(x):
    return jnp.where(x > 0, jnp.log(x), 0.0)


def quadrature(m: Float[Array, "d"]):  # sizes of 8: 100**8 points, a loop in Python no limit outlasts
    return m * sum(1 for _ in itertools.product(range(100), repeat=len(m)))
"""


@pytest.mark.slow  # two checks of a guess that runs past its limit: about 40 s
def test_a_module_whose_guess_ran_past_its_limit_is_not_kept(tmp_path: Path) -> None:
    # The job's 40 s leave each guess what is left less 8 s (guards.GUESS_MARGIN), at most
    # GUESS_SECONDS: the runaway guess is cut short whatever the load, and what was linted
    # depends on the load.
    pytest.importorskip("jaxtyping")
    (tmp_path / "runaway.py").write_text(RUNAWAY_GUESS)
    (tmp_path / "plain.py").write_text(ALONE)
    from jaxlint.engine.check import check

    (tmp_path / "jaxlint.toml").write_text("")
    config = load_config([str(tmp_path)])
    for _ in range(2):
        result = check([str(tmp_path)], RULES, timeout=40.0, config=config,
                       cache=ResultCache(str(tmp_path / ".jaxlint_cache"), str(tmp_path)))
        assert [f.code for f in result.findings if f.path.endswith("runaway.py")] == ["JX501"]
    assert result.cached == 1  # plain.py only


SLOW_INIT = """\
import jax.numpy as jnp


class Spinning:
    def __init__(self, scale):
        self.scale = scale
        while True:  # runs past the instance's limit
            pass

    def apply(self, x):
        return jnp.sin(self.scale * x)
"""


def test_a_module_whose_instance_ran_past_its_limit_is_load_dependent(tmp_path: Path, monkeypatch) -> None:
    from jaxlint.worker import plain_classes

    monkeypatch.setattr(plain_classes, "INIT_SECONDS", 0.2)
    (tmp_path / "spinning.py").write_text(SLOW_INIT)
    result = check_in_process([str(tmp_path / "spinning.py")], RULES, config=load_config([str(tmp_path)]))
    [analysis] = result.files
    assert analysis.result.load_dependent  # so the result cache does not keep it
    assert "ran past 0.2 s" in {s.target: s.reason for _, s in result.skipped}["Spinning.apply"]
