"""`jaxlint record -- pytest`: signatures recorded from a project's test suite, then used by check.

One small project (a package whose functions are only called by its tests) is recorded once per
module; each test reads the signatures file or checks the project (or a copy of it).
"""
from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

import pytest

from jaxlint.config import load_config
from jaxlint.engine.check import check
from jaxlint.rules import all_rules

MODEL = """\
from functools import partial

import jax
import jax.numpy as jnp


def blackbox(x, y):
    x = x + 1
    y = x * y
    return x, y


@partial(jax.jit, static_argnums=2)
def mapped(x, y, k):
    x, y = jax.vmap(blackbox, in_axes=(None, 0))(x, y)
    return x[0] * k, y


def keywords(x, *rest, scale, **options):
    return jax.vmap(lambda v: v * scale)(x) + sum(rest) + options["shift"]


class Model:
    scale = 2.0

    @classmethod
    def scaled(cls, x):
        return jax.vmap(lambda v: v * cls.scale)(x)


def with_object(params, x):
    return jax.vmap(lambda v: v * params.scale)(x)


def never_called(x):
    return jax.vmap(lambda v: v + 1)(x)


def rowwise(x):
    if x.ndim != 2:
        raise ValueError("x must be 2-d")
    return jax.vmap(jnp.linalg.norm)(x)


def safe_log(x):
    return jnp.where(x > 0, jnp.log(x), 0.0)
"""

TESTS = """\
import jax.numpy as jnp
import pytest

from pkg.model import Model, keywords, mapped, rowwise, safe_log, with_object


def test_two_batch_sizes():
    mapped(1.0, jnp.ones(4), 3)
    mapped(1.0, jnp.ones(8), 3)
    mapped(2.0, jnp.ones(4), 3)  # the same signature again: recorded once


def test_signature_kinds():
    keywords(jnp.ones((2, 3)), jnp.ones(3), scale=2.0, shift=jnp.ones(3))
    Model.scaled(jnp.ones(3))
    safe_log(jnp.ones(5))


def test_object_argument():
    with_object(Model(), jnp.ones(3))


def test_expected_error():
    with pytest.raises(ValueError):
        rowwise(jnp.ones(3))  # raises: not a signature to trace
    rowwise(jnp.ones((4, 3)))
"""

# Present before recording: kept (never_called is not called by the tests) or dropped (its file
# is gone).
SEED = {"version": 1, "functions": {
    "pkg/model.py::never_called": {"params": ["x"], "signatures": [{"x": "f32[2]"}]},
    "pkg/gone.py::f": {"params": ["x"], "signatures": [{"x": "f32[2]"}]},
}}

EXPECTED = {"version": 1, "functions": {
    "pkg/model.py::Model.scaled": {"params": ["cls", "x"], "signatures": [{"x": "f32[3]"}]},
    "pkg/model.py::keywords": {"params": ["x", "rest", "scale", "options"], "signatures": [
        {"x": "f32[2,3]", "rest": "(f32[3],)", "scale": "2.0", "options": "{'shift': f32[3]}"}]},
    "pkg/model.py::mapped": {"params": ["x", "y", "k"], "signatures": [
        {"x": "f32[]", "y": "f32[4]", "k": "3"}, {"x": "f32[]", "y": "f32[8]", "k": "3"}]},
    "pkg/model.py::never_called": {"params": ["x"], "signatures": [{"x": "f32[2]"}]},
    "pkg/model.py::rowwise": {"params": ["x"], "signatures": [{"x": "f32[4,3]"}]},
    "pkg/model.py::safe_log": {"params": ["x"], "signatures": [{"x": "f32[5]"}]},
    "pkg/model.py::with_object": {"params": ["params", "x"], "signatures": [],
                                  "unrecordable": "argument params: <Model object>"},
}}


def environment() -> dict[str, str]:
    """This process's environment without recording settings (the suite may itself be recorded)."""
    env = {k: v for k, v in os.environ.items() if k not in ("JAXLINT_RECORD", "PYTEST_ADDOPTS")}
    env["JAX_PLATFORMS"] = "cpu"
    return env


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=cwd, env=environment(), capture_output=True,
                          text=True, timeout=600)


def record(project: Path) -> subprocess.CompletedProcess:
    return run("-m", "jaxlint", "record", "--", sys.executable, "-m", "pytest", "-q",
               "-p", "no:cacheprovider", "tests/", cwd=project)


def make_project(root: Path) -> Path:
    (root / "pyproject.toml").write_text("[tool.jaxlint]\n")
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "model.py").write_text(MODEL)
    (root / "tests").mkdir()
    (root / "tests" / "test_x.py").write_text(TESTS)
    return root


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """The project after two recordings: (root, first run, file after it, file after the second)."""
    root = make_project(tmp_path_factory.mktemp("recorded"))
    (root / ".jaxlint").mkdir()
    (root / ".jaxlint" / "signatures.json").write_text(json.dumps(SEED))
    first = record(root)
    after_first = (root / ".jaxlint" / "signatures.json").read_bytes()
    second = record(root)
    assert second.returncode == 0, second.stdout + second.stderr
    return root, first, after_first, (root / ".jaxlint" / "signatures.json").read_bytes()


@pytest.fixture(scope="module")
def checked(recorded):
    root, *_ = recorded
    result = check([str(root)], all_rules())
    traced = {t["target"]: t for fa in result.files if fa.result for t in map(asdict, fa.result.traced)}
    skipped = {s.target: s.reason for _, s in result.skipped}
    return result, traced, skipped


def copy_of(recorded, tmp_path: Path) -> Path:
    return Path(shutil.copytree(recorded[0], tmp_path / "copy"))


def test_record_exits_as_the_command_and_says_what_it_recorded(recorded):
    _, first, _, _ = recorded
    assert first.returncode == 0, first.stdout + first.stderr
    assert "4 passed" in first.stdout
    assert ("jaxlint: recorded 5 functions into .jaxlint/signatures.json; "
            "1 called with arguments it cannot record") in first.stderr
    assert "  not recorded: pkg/model.py::with_object: argument params: <Model object>" in first.stderr


def test_signatures_file_content(recorded):
    _, _, text, _ = recorded
    assert json.loads(text) == EXPECTED


def test_signatures_file_is_stable_and_diff_friendly(recorded):
    _, _, first, second = recorded
    assert first == second
    text = first.decode()
    assert text.endswith("}\n")
    assert '        {"x": "f32[]", "y": "f32[8]", "k": "3"}\n' in text  # one signature per line
    keys = [line.strip() for line in text.splitlines() if line.startswith('    "')]
    assert keys == sorted(keys)


def test_check_traces_every_recorded_signature(checked):
    _, traced, _ = checked
    assert traced["mapped"]["source"] == "recorded"
    assert traced["mapped"]["signatures"] == ["f32[], f32[4], 3", "f32[], f32[8], 3"]
    # *args, keyword-only and **kwargs parameters are passed the way the test passed them.
    assert traced["keywords"]["signatures"] == ["f32[2,3], f32[3], scale=2.0, shift=f32[3]"]
    assert traced["Model.scaled"]["signatures"] == ["f32[3]"]  # cls is bound, not recorded
    assert traced["never_called"]["signatures"] == ["f32[2]"]  # kept from before the recording


def test_a_plain_jax_function_is_recorded_and_traced(checked):
    # safe_log is no target (no jit, no transform, no hint): its recorded signature makes it one.
    result, traced, _ = checked
    assert traced["safe_log"]["source"] == "recorded" and traced["safe_log"]["signatures"] == ["f32[5]"]
    line = MODEL.splitlines().index("def safe_log(x):") + 2
    assert [f.target for f in result.findings if f.code == "JX501" and f.span.start_line == line] == ["safe_log"]


def test_check_finds_the_founding_pattern_through_the_recording(checked):
    result, _, _ = checked
    assert {(f.code, f.target, f.span.start_line) for f in result.findings} == {
        ("JX101", "mapped", 15), ("JX501", "safe_log", MODEL.splitlines().index("def safe_log(x):") + 2)}


def test_a_finding_seen_with_two_signatures_is_reported_once(checked):
    result, _, _ = checked
    assert len([f for f in result.findings if f.code == "JX101"]) == 1


def test_unrecordable_arguments_are_noted(checked):
    _, traced, skipped = checked
    assert "with_object" not in skipped
    # Inference (on by default) makes up an object of what the body reads; the record's note stays.
    with_object = traced["with_object"]
    assert (with_object["source"], with_object["signature"]) == ("inferred", "params=<made up: scale=f32[]>, x=f32[n]")
    assert with_object["notes"] == ["the tests call with_object but its arguments could not be recorded "
                                    "(argument params: <Model object>)"]


def test_stale_record_is_ignored_with_a_note(recorded, tmp_path):
    root = copy_of(recorded, tmp_path)
    model = root / "pkg" / "model.py"
    model.write_text(MODEL.replace("def mapped(x, y, k):", "def mapped(x, y, k, scale=1.0):"))
    # Without inference, whose guesses for mapped trace on some JAX versions and not on others.
    config = dataclasses.replace(load_config([str(root)]), infer_arguments=False)
    result = check([str(root)], all_rules(), config=config)
    skipped = {s.target: asdict(s) for _, s in result.skipped}
    assert skipped["mapped"]["kind"] == "no-arguments"
    assert skipped["mapped"]["reason"] == ("recorded signature for mapped(x, y, k) no longer matches "
                                           "mapped(x, y, k, scale); re-run jaxlint record")
    assert not [f for f in result.findings if f.code == "JX101"]


def test_plugin_is_inert_without_jaxlint_record(recorded, tmp_path):
    root = copy_of(recorded, tmp_path)
    shutil.rmtree(root / ".jaxlint")
    plain = run("-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "jaxlint.pytest_plugin.recording", "tests/",
                cwd=root)
    assert plain.returncode == 0, plain.stdout + plain.stderr
    assert not (root / ".jaxlint").exists()


def test_exit_code_is_the_commands_when_nothing_is_recorded(tmp_path):
    make_project(tmp_path)
    done = run("-m", "jaxlint", "record", "--", sys.executable, "-c", "import sys; sys.exit(3)", cwd=tmp_path)
    assert done.returncode == 3
    assert "nothing recorded" in done.stderr
    assert not (tmp_path / ".jaxlint").exists()


def test_record_without_a_command_is_a_usage_error(tmp_path):
    done = run("-m", "jaxlint", "record", cwd=tmp_path)
    assert done.returncode == 2
    assert "needs a command after '--'" in done.stderr


# --config FILE, --isolated and the configuration's exclusions, as `jaxlint check` reads them.

def recorded_with(project: Path, *flags: str, tests: str = "tests/") -> subprocess.CompletedProcess:
    return run("-m", "jaxlint", "record", *flags, "--", sys.executable, "-m", "pytest", "-q",
               "-p", "no:cacheprovider", tests, cwd=project)


def traced_counts(summary: str) -> tuple[int, int]:
    """(targets traced, targets) from the summary line."""
    found = re.search(r"\((\d+) targets? traced(?:, (\d+) skipped)?", summary)
    assert found, summary
    return int(found[1]), int(found[1]) + int(found[2] or 0)


@pytest.mark.slow
def test_record_with_config_file_writes_beside_it_and_check_config_reads_it(tmp_path):
    root = make_project(tmp_path)
    (root / "pyproject.toml").unlink()  # the configuration lives elsewhere
    (root / "other").mkdir()
    (root / "other" / "jaxlint.toml").write_text("")

    done = recorded_with(root, "--config", "other/jaxlint.toml")

    assert done.returncode == 0, done.stdout + done.stderr
    assert ("jaxlint: recorded 5 functions into other/.jaxlint/signatures.json; "
            "1 called with arguments it cannot record") in done.stderr
    assert not (root / ".jaxlint").exists()
    # Keys are relative to the root, the configuration's folder.
    written = json.loads((root / "other" / ".jaxlint" / "signatures.json").read_text())
    assert written["functions"] == {"../" + key: entry for key, entry in EXPECTED["functions"].items()
                                    if key != "pkg/model.py::never_called"}
    recorded = sum(1 for entry in written["functions"].values() if entry["signatures"])

    # Without inference: the recorded signatures are the only arguments these functions get.
    with_config = run("-m", "jaxlint", "check", "--no-infer-arguments", "--config", "other/jaxlint.toml", cwd=root)
    without = run("-m", "jaxlint", "check", "--no-infer-arguments", cwd=root)
    assert with_config.returncode == 1, with_config.stdout + with_config.stderr
    assert "pkg/model.py:15:12: JX101" in with_config.stdout
    traced, targets = traced_counts(with_config.stderr)
    # safe_log, a plain JAX function, is a target only through its recorded signature.
    assert (traced, targets) == (recorded, traced_counts(without.stderr)[1] + 1)
    assert traced_counts(without.stderr)[0] == 0  # nothing else gives these functions arguments


@pytest.mark.slow
def test_record_honours_exclusions_and_isolated_ignores_the_configuration(tmp_path):
    (tmp_path / "jaxlint.toml").write_text('extend-exclude = ["pkg"]\n')
    (tmp_path / "project").mkdir()
    project = make_project(tmp_path / "project")
    (project / "pyproject.toml").unlink()  # tmp_path/jaxlint.toml is the project's configuration

    excluded = recorded_with(project)
    assert excluded.returncode == 0, excluded.stdout + excluded.stderr
    assert f"jaxlint: recorded 0 functions into {tmp_path / '.jaxlint' / 'signatures.json'}" in excluded.stderr
    assert json.loads((tmp_path / ".jaxlint" / "signatures.json").read_text())["functions"] == {}

    isolated = recorded_with(project, "--isolated")
    assert isolated.returncode == 0, isolated.stdout + isolated.stderr
    assert "jaxlint: recorded 5 functions into .jaxlint/signatures.json" in isolated.stderr
    functions = json.loads((project / ".jaxlint" / "signatures.json").read_text())["functions"]
    assert functions["pkg/model.py::mapped"] == EXPECTED["functions"]["pkg/model.py::mapped"]


def test_output_overrides_the_configured_location(tmp_path):
    root = make_project(tmp_path)
    (root / "other").mkdir()
    (root / "other" / "jaxlint.toml").write_text("")
    (root / "tests" / "test_nothing.py").write_text("def test_nothing():\n    pass\n")

    done = recorded_with(root, "--config", "other/jaxlint.toml", "--output", "out/signatures.json",
                         tests="tests/test_nothing.py")

    assert done.returncode == 0, done.stdout + done.stderr
    assert "jaxlint: recorded 0 functions into out/signatures.json" in done.stderr
    assert json.loads((root / "out" / "signatures.json").read_text())["functions"] == {}
    assert not (root / "other" / ".jaxlint").exists() and not (root / ".jaxlint").exists()


@pytest.mark.parametrize("flags, message", [
    (["--config", "missing.toml"], "missing.toml: no such configuration file"),
    (["--config", "bad.toml"], "bad.toml: `extend-exclude`: expected an array of glob patterns, got 3"),
    (["--config", "pyproject.toml", "--isolated"], "--config FILE and --isolated are exclusive"),
    (["--config", "extend-exclude = ["], "neither a file nor a valid `KEY = VALUE` TOML snippet"),
    ([], "pyproject.toml: unknown key `tool.jaxlint.extend-exclud`"),  # the configuration found
])
def test_configuration_errors_exit_2_before_running_the_command(tmp_path, flags, message):
    root = make_project(tmp_path)
    (root / "bad.toml").write_text("extend-exclude = 3\n")
    if not flags:
        (root / "pyproject.toml").write_text('[tool.jaxlint]\nextend-exclud = ["x"]\n')

    done = run("-m", "jaxlint", "record", *flags, "--", sys.executable, "-c", "open('ran', 'w')", cwd=root)
    checked = run("-m", "jaxlint", "check", *flags, cwd=root)

    assert done.returncode == 2
    assert "jaxlint: configuration error: " in done.stderr and message in done.stderr
    assert done.stderr == checked.stderr and checked.returncode == 2  # the same words as check
    assert "Traceback" not in done.stderr
    assert not (root / "ran").exists() and not (root / ".jaxlint").exists()


KEYED = """\
import jax
import jax.numpy as jnp


def draw(key, x):
    noise = jax.random.normal(key, x.shape)
    again = jax.random.normal(key, x.shape)
    return jax.vmap(lambda v: v * 2)(x + noise + again)
"""


def test_typed_keys_are_recorded_and_traced(tmp_path):
    root = make_project(tmp_path)
    (root / "pkg" / "model.py").write_text(KEYED)
    (root / "tests" / "test_x.py").write_text(
        "import jax\nimport jax.numpy as jnp\nfrom pkg.model import draw\n\n\n"
        "def test_draw():\n    assert draw(jax.random.key(0), jnp.ones(3)).shape == (3,)\n")
    done = record(root)
    assert done.returncode == 0, done.stdout + done.stderr
    entry = json.loads((root / ".jaxlint" / "signatures.json").read_text())["functions"]["pkg/model.py::draw"]
    assert entry["signatures"] == [{"key": "key<fry>[]", "x": "f32[3]"}]
    result = check([str(root)], all_rules())
    assert result.traced == 1 and "JX401" in {f.code for f in result.findings}


# pytest-xdist: each worker writes a part, `jaxlint record` merges them; a run never loses a
# signature it did not replace, and never rewrites a signatures file it cannot read.

SPLIT_TESTS = """\
import jax.numpy as jnp

from pkg.model import mapped, safe_log


def test_four():
    mapped(1.0, jnp.ones(4), 3)


def test_eight():
    mapped(1.0, jnp.ones(8), 3)


def test_log():
    safe_log(jnp.ones(5))
"""


def test_record_with_xdist_merges_every_workers_signatures(tmp_path):
    root = make_project(tmp_path)
    (root / "tests" / "test_x.py").write_text(SPLIT_TESTS)
    (root / ".jaxlint").mkdir()
    (root / ".jaxlint" / "signatures.json").write_text(json.dumps(SEED))

    done = run("-m", "jaxlint", "record", "--", sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
               "-n", "2", "--dist", "load", "tests/", cwd=root)

    assert done.returncode == 0, done.stdout + done.stderr
    assert "jaxlint: recorded 2 functions into .jaxlint/signatures.json" in done.stderr
    written = json.loads((root / ".jaxlint" / "signatures.json").read_text())["functions"]
    assert sorted(written) == ["pkg/model.py::mapped", "pkg/model.py::never_called", "pkg/model.py::safe_log"]
    # The two batch sizes ran in different tests, on either worker: both are kept.
    assert sorted(s["y"] for s in written["pkg/model.py::mapped"]["signatures"]) == ["f32[4]", "f32[8]"]
    assert written["pkg/model.py::never_called"] == SEED["functions"]["pkg/model.py::never_called"]


def test_a_call_that_records_nothing_keeps_the_signature_recorded_before(tmp_path):
    root = make_project(tmp_path)
    (root / "tests" / "test_x.py").write_text(
        "import jax.numpy as jnp\nimport pytest\nfrom pkg.model import rowwise\n\n\n"
        "def test_error():\n    with pytest.raises(ValueError):\n        rowwise(jnp.ones(3))\n")
    seeded = {"version": 1, "functions": {
        "pkg/model.py::rowwise": {"params": ["x"], "signatures": [{"x": "f32[4,3]"}]}}}
    (root / ".jaxlint").mkdir()
    (root / ".jaxlint" / "signatures.json").write_text(json.dumps(seeded))

    done = record(root)

    assert done.returncode == 0, done.stdout + done.stderr
    assert "not recorded: pkg/model.py::rowwise: no call returned a value" in done.stderr
    written = json.loads((root / ".jaxlint" / "signatures.json").read_text())["functions"]
    assert written == seeded["functions"]


@pytest.mark.parametrize("text", ["{not json", '{"version": 7, "functions": {}}'])
def test_an_unreadable_signatures_file_is_left_untouched_and_exits_2(tmp_path, text):
    root = make_project(tmp_path)
    (root / ".jaxlint").mkdir()
    (root / ".jaxlint" / "signatures.json").write_text(text)

    done = run("-m", "jaxlint", "record", "--", sys.executable, "-c", "open('ran', 'w')", cwd=root)

    assert done.returncode == 2
    assert ".jaxlint/signatures.json" in done.stderr and "--output" in done.stderr
    assert "Traceback" not in done.stderr
    assert (root / ".jaxlint" / "signatures.json").read_text() == text
    assert not (root / "ran").exists()  # refused before running the tests


def test_a_missing_path_is_a_warning_and_the_others_are_recorded(tmp_path):
    """As check goes on past a missing path (E902), record warns and records the rest; only when
    no path given exists does it stop before running the command."""
    root = make_project(tmp_path)
    (root / "tests" / "test_nothing.py").write_text("def test_nothing():\n    pass\n")

    done = run("-m", "jaxlint", "record", "pkg", "missing", "--", sys.executable, "-m", "pytest", "-q",
               "-p", "no:cacheprovider", "tests/test_nothing.py", cwd=root)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "jaxlint: warning: no such file or folder: missing" in done.stderr.splitlines()
    assert "jaxlint: recorded 0 functions into .jaxlint/signatures.json" in done.stderr

    none = run("-m", "jaxlint", "record", "missing", "--", sys.executable, "-c", "open('ran', 'w')", cwd=root)
    assert none.returncode == 2 and "nothing would be recorded" in none.stderr
    assert not (root / "ran").exists()
