"""Bad input never crashes jaxlint and never costs the other files their analysis.

Each project puts the founding example (which must still give its JX101) next to the bad
modules and runs the whole check, as a user would. One check per project keeps the number of
worker processes (each pays the JAX import) small.
"""
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from jaxlint.engine.check import check
from jaxlint.engine.results import CheckResult
from jaxlint.model import Finding
from jaxlint.processes import run_queue_wait
from jaxlint.rules import all_rules

REPO = Path(__file__).resolve().parents[1]
FOUNDING = (REPO / "examples" / "founding.py").read_text()
# Appended to a bad module so it has a target: modules without one are never imported.
TARGET = "\n\n@jax.jit\ndef target(x):\n    return x\n"


def write(root: Path, files: dict[str, str | bytes]) -> None:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(textwrap.dedent(content))


def run(root: Path, timeout: float = 60.0, jobs: int = 1) -> CheckResult:
    """One worker lane by default, so the tests can count workers started."""
    # Without the variable (set on some machines) Python writes bytecode: jaxlint must not.
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
        return check([str(root)], all_rules(), timeout=timeout, jobs=jobs)


def by_file(result: CheckResult, root: Path) -> dict[str, list[Finding]]:
    found: dict[str, list[Finding]] = {}
    for finding in result.findings:
        found.setdefault(Path(finding.path).relative_to(root).as_posix(), []).append(finding)
    return found


def only(findings: list[Finding], code: str) -> Finding:
    assert [f.code for f in findings] == [code], [(f.code, f.message) for f in findings]
    return findings[0]


def line_of(root: Path, name: str, text: str) -> int:
    """1-based number of the line of ``name`` that contains ``text``."""
    lines = (root / name).read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


def assert_founding_found(found: dict[str, list[Finding]], name: str = "good.py") -> None:
    finding = only(found.get(name, []), "JX101")
    assert (finding.span.start_line, finding.span.start_col) == (13, 11)


def pycache_in(root: Path) -> list[str]:
    return [str(p) for p in root.rglob("*") if p.name == "__pycache__" or p.suffix == ".pyc"]


# -- modules that raise, exit, or cannot be read: the worker survives them -----------------


@pytest.fixture(scope="module")
def broken(tmp_path_factory):
    root = tmp_path_factory.mktemp("broken")
    marker = root / "imported.txt"
    write(root, {
        "good.py": FOUNDING,
        "raises.py": textwrap.dedent("""\
            import jax
            value = 1
            raise ValueError("broken on purpose")
        """) + TARGET,
        "exits.py": textwrap.dedent("""\
            import sys
            import jax
            sys.exit(3)
        """) + TARGET,
        # A tracer error at import time is a trace error (JX601), at the line that raised.
        "tracer_at_import.py": """\
            import jax
            import jax.numpy as jnp

            @jax.jit
            def positive(x):
                if x.sum() > 0:
                    return x
                return -x

            positive(jnp.ones(3))
        """,
        # The exception comes from a helper module (which never mentions JAX).
        "uses_helper.py": "import jax\nimport broken_helper\n" + TARGET,
        "broken_helper.py": "VALUE = 1\nraise KeyError('missing setting')\n",
        # Reading stdin must neither hang nor consume jaxlint's jobs.
        "reads_stdin.py": "import jax\nanswer = input()\n" + TARGET,
        # The worker gives a module the argv of its own program, `[its path]`, not the worker's.
        "parses_args.py": "import argparse\nimport jax\nargs = argparse.ArgumentParser().parse_args()\n" + TARGET,
        "reads_argv.py": "import sys\nimport jax\nif len(sys.argv) > 1:\n    raise SystemExit('bad')\n" + TARGET,
        "requires_arg.py": textwrap.dedent("""\
            import argparse
            import jax
            parser = argparse.ArgumentParser()
            parser.add_argument("--x", required=True)
            args = parser.parse_args()
        """) + TARGET,
        "syntax.py": "import jax\n\ndef f(x:\n    return x\n",
        "undecodable.py": b"import jax\nname = '\xff\xfe'\n",
        # Deep enough to exhaust libcst's recursion, and too deep for Python's parser.
        "deeply_nested.py": "import jax\nx = " + "[" * 1000 + "]" * 1000 + "\n" + TARGET,
        # Never mentions the word, so it is never imported (the marker file would prove it).
        "never_imported.py": f"open({str(marker)!r}, 'w').close()\nraise RuntimeError('imported!')\n",
        "undecodable_no_jax.py": b"name = '\xff\xfe'\n",
        # Untraceable functions: JAX's error, at the user's line.
        "untraceable.py": """\
            import jax
            import jax.numpy as jnp

            def f(x):
                y = jax.vmap(lambda v: v * 2)(x)
                if y.sum() > 0:
                    return y
                return -y

            f(jnp.ones(3))
        """,
        "exits_when_traced.py": """\
            import sys
            import jax
            import jax.numpy as jnp

            def g(x):
                y = jax.vmap(lambda v: v * 2)(x)
                if isinstance(y, jax.core.Tracer):
                    sys.exit("no tracing, please")
                return y

            g(jnp.ones(3))
        """,
        "hints.py": """\
            import jax

            # jaxlint: args x=f32[3
            def unbalanced(x):
                return jax.vmap(lambda v: v)(x)

            # jaxlint: args z=f32[3]
            def wrong_name(x):
                return jax.vmap(lambda v: v)(x)

            # jaxlint: args x=float[3]
            def bad_dtype(x):
                return jax.vmap(lambda v: v)(x)

            # jaxlint: args x=f32[3]
            def missing(x, y, scale=2.0, *rest):
                return jax.vmap(lambda v: v)(x) + y * scale

            # jaxlint: args
            def empty(x):
                return jax.vmap(lambda v: v)(x)
        """,
    })
    result = run(root)
    return root, result, by_file(result, root), marker


def test_good_file_is_checked_next_to_broken_ones(broken):
    root, result, found, _ = broken
    assert_founding_found(found)
    assert result.workers_started == 1  # raising and exiting modules do not kill the worker


def test_module_that_raises_gives_import_error_at_its_line(broken):
    root, _, found, _ = broken
    finding = only(found["raises.py"], "JX901")
    assert "ValueError: broken on purpose" in finding.message
    assert finding.span.start_line == line_of(root, "raises.py", "raise ValueError")


def test_module_that_exits_gives_import_error(broken):
    root, _, found, _ = broken
    finding = only(found["exits.py"], "JX901")
    assert "SystemExit(3)" in finding.message
    assert finding.span.start_line == line_of(root, "exits.py", "sys.exit(3)")


def test_module_sees_its_own_program_argv(broken):
    root, result, found, _ = broken
    assert "parses_args.py" not in found and "reads_argv.py" not in found
    for name in ("parses_args.py", "reads_argv.py"):
        analysis = next(a for a in result.files if a.source.path == str(root / name))
        assert [s.kind for s in analysis.result.skipped if s.kind == "import-failed"] == []


def test_module_that_exits_in_argparse_quotes_its_message(broken):
    root, _, found, _ = broken
    finding = only(found["requires_arg.py"], "JX901")
    assert "SystemExit(2)" in finding.message
    assert "requires_arg.py: error: the following arguments are required: --x" in finding.message
    assert finding.span.start_line == line_of(root, "requires_arg.py", "parse_args()")


def test_tracer_error_at_import_points_at_its_line(broken):
    root, _, found, _ = broken
    finding = only(found["tracer_at_import.py"], "JX601")
    assert "TracerBoolConversionError" in finding.message
    assert finding.span.start_line == line_of(root, "tracer_at_import.py", "if x.sum() > 0")


def test_error_raised_in_a_helper_names_the_helper(broken):
    root, _, found, _ = broken
    finding = only(found["uses_helper.py"], "JX901")
    assert "KeyError" in finding.message and "(raised at broken_helper.py:2)" in finding.message
    assert finding.span.start_line == line_of(root, "uses_helper.py", "import broken_helper")
    assert "broken_helper.py" not in found  # it never mentions jax: not a module jaxlint checks


def test_reading_stdin_at_import_sees_end_of_file(broken):
    _, _, found, _ = broken
    assert "EOFError" in only(found["reads_stdin.py"], "JX901").message


def test_syntax_and_decoding_errors(broken):
    root, _, found, _ = broken
    finding = only(found["syntax.py"], "JX900")
    assert finding.span.start_line == 3
    assert "cannot decode" in only(found["undecodable.py"], "JX900").message
    assert "too many nested parentheses" in only(found["deeply_nested.py"], "JX900").message


def test_file_without_jax_is_never_imported(broken):
    _, _, found, marker = broken
    assert "never_imported.py" not in found and "undecodable_no_jax.py" not in found
    assert not marker.exists()


def test_untraceable_function_gives_trace_error_at_user_line(broken):
    root, _, found, _ = broken
    finding = only(found["untraceable.py"], "JX601")
    assert "TracerBoolConversionError" in finding.message
    assert "use jnp.where or lax.cond" in finding.message  # the class-specific hint
    assert "f(f32[3])" in finding.message
    assert finding.span.start_line == line_of(root, "untraceable.py", "if y.sum() > 0")
    assert finding.target == "f"


def test_exit_while_traced_is_a_trace_error(broken):
    root, _, found, _ = broken
    finding = only(found["exits_when_traced.py"], "JX601")
    assert "SystemExit" in finding.message
    assert finding.span.start_line == line_of(root, "exits_when_traced.py", "sys.exit(")


def test_invalid_hints_say_what_is_wrong(broken):
    root, _, found, _ = broken
    by_target = {f.target: f for f in found["hints.py"]}
    assert {f.code for f in by_target.values()} == {"JX905"}
    assert "unbalanced brackets" in by_target["unbalanced"].message
    assert "'z'" in by_target["wrong_name"].message and "wrong_name(x)" in by_target["wrong_name"].message
    assert "unknown dtype 'float'" in by_target["bad_dtype"].message
    # A hint that leaves out a parameter is the hint's mistake, not a trace error of the code.
    assert "hint gives no value for 'y', a parameter without a default" in by_target["missing"].message
    assert "hint gives no value for 'x'" in by_target["empty"].message
    assert by_target["unbalanced"].span.start_line == line_of(root, "hints.py", "x=f32[3")


def test_worker_writes_no_bytecode_into_the_project(broken):
    root = broken[0]
    assert pycache_in(root) == []


# -- modules that kill or hang the worker: it is replaced, the next module is analyzed ------


@pytest.fixture(scope="module")
def killers(tmp_path_factory):
    root = tmp_path_factory.mktemp("killers")
    # z_good.py sorts last: it runs in the worker that replaced the last killed one.
    write(root, {
        "crash_exit.py": "import os\nimport jax\nos._exit(4)\n" + TARGET,
        "crash_segfault.py": "import ctypes\nimport jax\nctypes.string_at(0)\n" + TARGET,
        # faulthandler writes a path's non-ASCII characters as escapes: still found at its line
        "crash_ségfault_数.py": "import ctypes\nimport jax\n\nctypes.string_at(0)\n" + TARGET,
        "hang_loop.py": "import jax\nwhile True:\n    pass\n" + TARGET,
        "hang_sleep.py": "import time\nimport jax\ntime.sleep(1000)\n" + TARGET,
        "z_good.py": FOUNDING,
    })
    result = run(root, timeout=5.0)
    return root, result, by_file(result, root)


def test_good_file_is_checked_after_crashes_and_hangs(killers):
    _, result, found = killers
    assert_founding_found(found, "z_good.py")
    assert result.workers_started == 6  # each killer costs its worker


def test_os_exit_is_a_worker_crash_at_its_line(killers):
    root, _, found = killers
    finding = only(found["crash_exit.py"], "JX903")
    assert "exited with status 4" in finding.message
    assert finding.span.start_line == line_of(root, "crash_exit.py", "os._exit(4)")


def test_segfault_is_a_worker_crash_at_its_line(killers):
    root, _, found = killers
    finding = only(found["crash_segfault.py"], "JX903")
    assert "SIGSEGV" in finding.message
    assert finding.span.start_line == line_of(root, "crash_segfault.py", "string_at")
    outside_ascii = only(found["crash_ségfault_数.py"], "JX903")
    assert outside_ascii.span.start_line == line_of(root, "crash_ségfault_数.py", "string_at") == 4


@pytest.mark.parametrize("name, line_text", [("hang_loop.py", "while True"), ("hang_sleep.py", "time.sleep")])
def test_hang_is_a_timeout_at_the_line_it_hung(killers, name, line_text):
    root, _, found = killers
    finding = only(found[name], "JX902")
    assert "5 s" in finding.message
    # A spinning loop may be caught on either of its two lines.
    assert finding.span.start_line in (line_of(root, name, line_text), line_of(root, name, line_text) + 1)
    assert finding.span.end_col > finding.span.start_col  # the code on that line


# -- output of the user's code never reaches jaxlint's stdout ------------------------------


def test_printing_modules_keep_json_output_parseable(tmp_path):
    write(tmp_path, {
        "good.py": FOUNDING,
        "noisy.py": """\
            import os
            import sys
            import jax
            import jax.numpy as jnp

            print("NOISE print")
            print("NOISE stderr", file=sys.stderr)
            sys.stdout.write("NOISE write")
            os.write(1, b"NOISE fd1\\n")
            os.write(2, b"NOISE fd2\\n")

            def f(x):
                print("NOISE while traced")
                return jax.vmap(lambda v: v)(x)

            f(jnp.ones(3))
        """,
        "noisy_crash.py": "import os\nimport jax\nprint('NOISE then exit')\nos.write(1, b'NOISE')\nos._exit(1)\n"
                          + TARGET,
    })
    process = subprocess.run(
        [sys.executable, "-m", "jaxlint", "check", "--output-format", "json", str(tmp_path)],
        capture_output=True, text=True, cwd=REPO, timeout=300)
    assert "NOISE" not in process.stdout
    findings = json.loads(process.stdout)
    assert process.returncode == 1, process.stderr
    codes = {(Path(f["filename"]).name, f["code"]) for f in findings}
    assert codes == {("good.py", "JX101"), ("noisy_crash.py", "JX903")}


# -- imports as the user's project does them -----------------------------------------------


def test_package_relative_imports(tmp_path):
    write(tmp_path, {
        "proj/pkg/__init__.py": "",
        "proj/pkg/helpers.py": """\
            SHIFT = 1

            def blackbox(x, y):  # given black box, cannot be split
                x = x + SHIFT  # guaranteed not to depend on y
                y = x * y
                return x, y
        """,
        "proj/pkg/model.py": """\
            import jax
            import jax.numpy as jnp

            from . import helpers
            from .helpers import blackbox


            @jax.jit
            def my_mapped_function(x, y):
                x, y = jax.vmap(blackbox, in_axes=(None, 0))(x, y)
                return x[0] + helpers.SHIFT, y


            my_mapped_function(1, jnp.arange(10))
        """,
        "proj/pkg/sub/__init__.py": "",
        "proj/pkg/sub/deep.py": """\
            import jax
            import jax.numpy as jnp

            from ..helpers import blackbox


            @jax.jit
            def deep(x, y):
                x, y = jax.vmap(blackbox, in_axes=(None, 0))(x, y)
                return x[0], y


            deep(1, jnp.arange(10))
        """,
    })
    result = run(tmp_path / "proj")
    found = by_file(result, tmp_path / "proj")
    assert set(found) == {"pkg/model.py", "pkg/sub/deep.py"}
    assert only(found["pkg/model.py"], "JX101").span.start_line == 10
    assert only(found["pkg/sub/deep.py"], "JX101").span.start_line == 9
    assert pycache_in(tmp_path) == []


def test_same_module_names_in_two_folders(tmp_path):
    """Two scripts' folders, each with its own utils.py: each model sees its own."""
    for name in ("first", "second"):
        write(tmp_path, {
            f"{name}/utils.py": f"def {name}_blackbox(x, y):\n    x = x + 1\n    return x, x * y\n",
            f"{name}/model.py": FOUNDING.replace("def blackbox_function", "def unused").replace(
                "import jax.numpy as jnp\n",
                f"import jax.numpy as jnp\nfrom utils import {name}_blackbox as blackbox_function\n"),
        })
    found = by_file(run(tmp_path), tmp_path)
    assert set(found) == {"first/model.py", "second/model.py"}
    assert only(found["first/model.py"], "JX101").span.start_line == 14
    assert only(found["second/model.py"], "JX101").span.start_line == 14


# -- a tree without JAX code costs no JAX import -------------------------------------------


def test_tree_without_jax_starts_no_worker(tmp_path):
    write(tmp_path, {
        "plain.py": "raise RuntimeError('never imported')\n",
        "lib/numeric.py": "import numpy\n\ndef scan(xs):\n    return [x for x in xs]  # jit? vmap? lax?\n",
    })
    result = run(tmp_path)
    assert result.findings == [] and result.workers_started == 0
    # Nor does the jaxlint process itself import JAX.
    code = (f"import sys\nfrom jaxlint.engine.check import check\nfrom jaxlint.rules import all_rules\n"
            f"check([{str(tmp_path)!r}], all_rules())\nprint('jax' in sys.modules)\n")
    process = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             cwd=REPO, timeout=120)
    assert process.stdout.strip() == "False", process.stderr


def test_parallel_workers_give_the_same_report(tmp_path: Path) -> None:
    """Two lanes of workers, one module killing its worker: same findings as one lane."""
    files = {f"good{index}.py": FOUNDING for index in range(3)}
    files["killer.py"] = """
        import os
        import jax

        @jax.jit
        def f(x):
            return x + 1

        os._exit(4)
    """
    write(tmp_path, files)
    serial = run(tmp_path, jobs=1)
    parallel = run(tmp_path, jobs=2)
    summary = lambda r: sorted((Path(f.path).name, f.code, f.span.start_line) for f in r.findings)  # noqa: E731
    assert summary(parallel) == summary(serial)
    assert [c for _, c, _ in summary(serial)] == ["JX101"] * 3 + ["JX903"]
    assert parallel.workers_started >= 2


# -- the limit counts the module's own time, not the time other processes held the CPU ----------


def _pinned_to(cpu: int) -> None:
    os.sched_setaffinity(0, {cpu})


@pytest.mark.slow  # the check runs at a quarter of one CPU: 20-40 s
@pytest.mark.skipif(not hasattr(os, "sched_setaffinity") or run_queue_wait(os.getpid()) is None,
                    reason="needs Linux's CPU affinity and schedstat")
def test_a_module_slowed_by_other_processes_is_not_a_timeout(tmp_path):
    # The module works for 1 s of CPU at import, under a limit of 3 s. Three busy processes share its
    # one CPU, so it takes about 4 s of wall time: a limit on wall time called it hung (JX902).
    write(tmp_path, {"busy.py": "import time\nimport jax\nstart = time.process_time()\n"
                                "while time.process_time() - start < 1.0:\n    pass\n" + TARGET})
    cpu = min(os.sched_getaffinity(0))
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"], preexec_fn=lambda: _pinned_to(cpu))
            for _ in range(3)]
    try:
        done = subprocess.run([sys.executable, "-m", "jaxlint", "check", "--isolated", "--no-cache", "--timeout", "3",
                               "--output-format", "json", "busy.py"], cwd=tmp_path, capture_output=True, text=True,
                              preexec_fn=lambda: _pinned_to(cpu), timeout=600)
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout) == []
