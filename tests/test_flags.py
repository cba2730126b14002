"""ruff's check flags through the real command line: --unsafe-fixes, --show-fixes, --fix-only,
--exit-zero, --exit-non-zero-on-fix, --quiet, --verbose, and `jaxlint --version`.

The founding example has a safe fix (JX101); the Example of rules/JX501.md an unsafe one.
"""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FOUNDING = REPO / "examples" / "founding.py"


def jaxlint(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "jaxlint", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=600)


def doc_block(code: str, section: str) -> str:
    """The first ```python block of a section of rules/<code>.md."""
    text = (REPO / "rules" / f"{code}.md").read_text(encoding="utf-8")
    body = text.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    return re.search(r"```python\n(.*?)```", body, flags=re.DOTALL).group(1)


@pytest.fixture
def founding(tmp_path: Path) -> Path:
    shutil.copy(FOUNDING, tmp_path / "founding.py")
    return tmp_path


@pytest.fixture
def where_nan(tmp_path: Path) -> Path:
    (tmp_path / "safe_log.py").write_text(doc_block("JX501", "Example"), encoding="utf-8")
    return tmp_path


def test_unsafe_fix_is_hidden_then_applied_with_unsafe_fixes(where_nan: Path) -> None:
    example = (where_nan / "safe_log.py").read_text(encoding="utf-8")
    run = jaxlint("check", "--fix", ".", cwd=where_nan)
    assert run.returncode == 1, run.stderr
    assert (where_nan / "safe_log.py").read_text(encoding="utf-8") == example
    assert "1 hidden fix can be enabled with --unsafe-fixes" in run.stderr

    run = jaxlint("check", "--fix", "--unsafe-fixes", ".", cwd=where_nan)
    assert run.returncode == 0, run.stdout + run.stderr
    assert (where_nan / "safe_log.py").read_text(encoding="utf-8") == doc_block("JX501", "Use instead")
    assert "1 fixed" in run.stderr and "hidden" not in run.stderr
    assert jaxlint("check", ".", cwd=where_nan).returncode == 0


def test_unsafe_fix_is_verified_like_a_safe_one(tmp_path: Path) -> None:
    # The module relies on the NaN gradient the fix removes: the fixed module fails to import,
    # so verification rejects the fix and the file stays as it was.
    module = doc_block("JX501", "Example") + (
        "assert jnp.isnan(jax.grad(lambda v: safe_log(v).sum())(jnp.zeros(3))).all()\n")
    (tmp_path / "nan_check.py").write_text(module, encoding="utf-8")
    run = jaxlint("check", "--fix", "--unsafe-fixes", ".", cwd=tmp_path)
    assert run.returncode == 1
    assert (tmp_path / "nan_check.py").read_text(encoding="utf-8") == module
    assert "fix not applied: the fixed source fails to analyze" in run.stdout
    assert "AssertionError" in run.stdout and "1 fix rejected by verification" in run.stderr


@pytest.mark.slow
def test_diff_shows_unsafe_fixes_only_with_the_flag(founding: Path) -> None:
    (founding / "safe_log.py").write_text(doc_block("JX501", "Example"), encoding="utf-8")
    before = {p.name: p.read_bytes() for p in founding.iterdir()}
    safe_only = jaxlint("check", "--diff", ".", cwd=founding)
    both = jaxlint("check", "--diff", "--unsafe-fixes", ".", cwd=founding)
    assert safe_only.returncode == both.returncode == 1
    assert "+++ b/founding.py" in safe_only.stdout and "safe_log.py" not in safe_only.stdout
    assert "+++ b/founding.py" in both.stdout
    assert "+    return jnp.where(x > 0, jnp.log(jnp.where(x > 0, x, 1.0)), 0.0)" in both.stdout
    assert "1 fix shown" in safe_only.stderr and "2 fixes shown" in both.stderr
    assert {p.name: p.read_bytes() for p in founding.iterdir()} == before


def test_show_fixes_lists_available_then_applied_fixes(founding: Path) -> None:
    (founding / "safe_log.py").write_text(doc_block("JX501", "Example"), encoding="utf-8")
    run = jaxlint("check", "--show-fixes", ".", cwd=founding)
    assert run.returncode == 1
    listing = run.stderr.split("2 fixes available:\n", 1)[1]
    assert "- founding.py:\n    13:12 JX101 (vmap-unbatched-output) [safe] Add out_axes=(None, 0)" in listing
    assert "- safe_log.py:\n    7:12 JX501 (where-nan-gradient) [unsafe: needs --unsafe-fixes]" in listing
    assert "Fixed" not in run.stdout + run.stderr  # nothing was written

    run = jaxlint("check", "--fix", "--show-fixes", ".", cwd=founding)
    assert run.returncode == 1  # the unsafe fix's finding remains
    fixed = run.stderr.split("Fixed 1 finding:\n", 1)[1].splitlines()
    assert fixed[:2] == ["- founding.py:",
                         "    13:12 JX101 (vmap-unbatched-output) Add out_axes=(None, 0) and use `x` directly"]
    assert fixed[2].startswith("2 files checked")  # the summary: the unsafe fix is not listed


def test_fix_only_applies_fixes_and_reports_nothing_else(founding: Path) -> None:
    (founding / "safe_log.py").write_text(doc_block("JX501", "Example"), encoding="utf-8")
    run = jaxlint("check", "--fix-only", ".", cwd=founding)
    assert run.returncode == 0, run.stderr  # the JX501 finding remains, unreported
    assert run.stdout == ""
    assert "out_axes=(None, 0)" in (founding / "founding.py").read_text(encoding="utf-8")
    summary = run.stderr.strip().splitlines()[-1]
    assert summary == "2 files checked, 1 fixed, 1 hidden fix can be enabled with --unsafe-fixes."
    # Same with a machine format: nothing of the remaining findings is written.
    assert jaxlint("check", "--fix-only", "--output-format", "json", ".", cwd=founding).stdout == ""


@pytest.mark.slow
def test_exit_non_zero_on_fix(founding: Path) -> None:
    run = jaxlint("check", "--fix", "--exit-non-zero-on-fix", ".", cwd=founding)
    assert run.returncode == 1 and "0 findings, 1 fixed" in run.stderr  # nothing remains, yet 1
    again = jaxlint("check", "--fix", "--exit-non-zero-on-fix", ".", cwd=founding)
    assert again.returncode == 0, again.stderr  # nothing left to fix
    shutil.copy(FOUNDING, founding / "founding.py")
    run = jaxlint("check", "--fix-only", "--exit-non-zero-on-fix", ".", cwd=founding)
    assert run.returncode == 1 and run.stdout == ""


def test_fix_without_the_flag_exits_zero_when_nothing_remains(founding: Path) -> None:
    run = jaxlint("check", "--fix", ".", cwd=founding)
    assert run.returncode == 0 and "0 findings, 1 fixed" in run.stderr


def test_exit_zero_still_reports_and_errors_stay_2(founding: Path) -> None:
    run = jaxlint("check", "--exit-zero", ".", cwd=founding)
    assert run.returncode == 0
    assert run.stdout.startswith("founding.py:13:12: JX101") and "1 finding" in run.stderr
    assert jaxlint("check", "--exit-zero", "--bogus-flag", cwd=founding).returncode == 2
    # A missing path is a finding (E902), as in ruff: --exit-zero covers it.
    missing = jaxlint("check", "--exit-zero", "no_such_folder", cwd=founding)
    assert missing.returncode == 0 and "no_such_folder:1:1: E902" in missing.stdout


def test_quiet_prints_findings_only(founding: Path) -> None:
    run = jaxlint("check", "-q", "--show-fixes", ".", cwd=founding)
    assert run.returncode == 1
    assert run.stdout.startswith("founding.py:13:12: JX101")
    assert run.stderr == ""
    assert jaxlint("check", "--quiet", "--verbose", ".", cwd=founding).returncode == 2


def test_verbose_shows_stages_and_time_per_file(founding: Path) -> None:
    (founding / "notes.py").write_text("print('no JAX here')\n", encoding="utf-8")
    run = jaxlint("check", "-v", ".", cwd=founding)
    assert run.returncode == 1
    assert run.stdout.startswith("founding.py:13:12: JX101") and "jaxlint [" not in run.stdout
    lines = run.stderr.splitlines()
    assert any(re.fullmatch(r"jaxlint \[ *\d+ ms\] discovered 2 Python files in \d+ ms", line) for line in lines)
    assert any(re.search(r"\] scanned in \d+ ms: 1 of 2 files to import and trace", line) for line in lines)
    assert any(re.search(r"\] founding\.py: \d+ ms \(import \d+ ms, trace \d+ ms, rules \d+ ms", line)
               for line in lines)
    assert any(line.startswith("timings: discover ") for line in lines)


def test_version_names_jax_and_jaxlib_without_importing_them(tmp_path: Path) -> None:
    from jaxlint import __version__

    expected = (f"jaxlint {__version__} (jax {metadata.version('jax')}, "
                f"jaxlib {metadata.version('jaxlib')})\n")
    run = jaxlint("--version", cwd=tmp_path)
    assert (run.returncode, run.stdout) == (0, expected)
    code = ("import sys; from jaxlint.cli.main import main; code = main(['--version']); "
            "assert code == 0; assert not {'jax', 'jaxlib'} & set(sys.modules), 'imported JAX'")
    run = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout == expected


def test_version_when_jax_is_not_installed(tmp_path: Path) -> None:
    # -S: no site-packages, so neither JAX's metadata nor JAX itself can be found.
    code = (f"import sys; sys.path.insert(0, {str(REPO)!r}); from jaxlint.cli.main import main; "
            "sys.exit(main(['--version']))")
    run = subprocess.run([sys.executable, "-I", "-S", "-c", code], cwd=tmp_path, capture_output=True,
                         text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.endswith("(jax not installed, jaxlib not installed)\n")
