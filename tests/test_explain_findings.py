"""`jaxlint explain`'s findings carry their file: a helper the explained function calls, in another
file, is reported there. Command-line runs, the worker's jobs in the test process (the helper's module
is numerics.py: the test process has a module named helpers, tests/helpers.py)."""
from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from helpers import write

from jaxlint.cli.main import main
from jaxlint.explain.html import render_html

# The report is what these tests read: explain's jobs run in the test process (conftest.py).
pytestmark = pytest.mark.usefixtures("explain_jobs_in_process")


SCHEMA = json.loads((Path(__file__).parent / "data" / "explain-schema.json").read_text())

HELPERS = """\
import jax.numpy as jnp


def log_partition(x):
    return jnp.log(jnp.sum(jnp.exp(x), axis=-1))
"""

MAIN = """\
import jax
import jax.numpy as jnp

from numerics import log_partition


# jaxlint: args x=f32[2,3]
@jax.jit
def energy(x):
    own = jnp.log(jnp.sum(jnp.exp(x), axis=-1))
    return log_partition(x) + own
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("explain_findings")
    (root / "pyproject.toml").write_text("[tool.jaxlint]\n", encoding="utf-8")
    write(root, "numerics", HELPERS)
    write(root, "main", MAIN)
    return root


def _explain(capsys: pytest.CaptureFixture, spec: str, *flags: str) -> str:
    code = main(["explain", spec, *flags])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def test_json_findings_name_their_file(project: Path, capsys: pytest.CaptureFixture) -> None:
    report = json.loads(_explain(capsys, f"{project / 'main.py'}::energy", "--format", "json"))
    jsonschema.validate(report, SCHEMA)
    places = sorted((Path(f["path"]).name, f["line"], f["code"]) for f in report["findings"])
    assert places == [("main.py", 10, "JX701"), ("numerics.py", 5, "JX701")]
    for finding in report["findings"]:
        assert Path(finding["path"]).is_absolute()
        assert finding["display_path"].endswith(Path(finding["path"]).name)
    # The HTML page cross-references only the explained file's lines.
    cards = render_html(report).split("<h2>Findings</h2>", 1)[1]
    assert cards.count('class="finding xref" data-line="10"') == 1
    assert cards.count('<div class="finding">') == 1 and 'data-line="5"' not in cards
    [helper] = [f for f in report["findings"] if f["path"].endswith("numerics.py")]
    assert f"· {helper['display_path']}:5</p>" in cards and "· line 10</p>" in cards


def test_text_names_the_file_when_it_is_not_the_explained_one(project: Path,
                                                              capsys: pytest.CaptureFixture) -> None:
    out = _explain(capsys, f"{project / 'main.py'}::energy")
    report = json.loads(_explain(capsys, f"{project / 'main.py'}::energy", "--format", "json"))
    [helper] = [f for f in report["findings"] if f["path"].endswith("numerics.py")]
    # The text is wrapped to a width: a long temporary path can end a line right after the colon.
    flat = " ".join(out.split())
    assert f"JX701 {helper['display_path']}:5: " in flat
    assert "JX701 line 10: " in flat  # the explained file's own finding keeps the short form
    assert f"JX701 ({helper['display_path']}:5): " in flat  # the summary too
    assert "JX701 line 5" not in flat and "(line 5)" not in flat


def test_findings_are_settled_as_check_settles_them(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """A suppression comment in the explained file and a per-file-ignores entry for the helper's
    file silence explain's findings as they silence check's."""
    (tmp_path / "pyproject.toml").write_text('[tool.jaxlint]\nper-file-ignores = {"numerics.py" = ["JX701"]}\n',
                                             encoding="utf-8")
    write(tmp_path, "numerics", HELPERS)
    main_file = write(tmp_path, "main", MAIN.replace("axis=-1))\n    return", "axis=-1))  # noqa: JX701\n    return"))
    assert main(["check", str(tmp_path), "--output-format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == []
    report = json.loads(_explain(capsys, f"{main_file}::energy", "--format", "json"))
    assert report["findings"] == []
    assert not any("JX701" in line for line in report["summary"])


FOUNDING = """\
import jax


def pair(x, y):
    return x + 1, x * y


@jax.jit
def first(x, y):
    a, b = jax.vmap(pair, in_axes=(None, 0))(x, y)
    return a[0], b
"""


def test_a_fix_check_cannot_verify_is_unsafe_in_explain_too(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """With guessed arguments check shows JX101's fix unsafe, saying why; explain, settling the
    same way, says the same. Given arguments, both call it safe."""
    (tmp_path / "pyproject.toml").write_text("[tool.jaxlint]\n", encoding="utf-8")
    path = write(tmp_path, "founding", FOUNDING)
    main(["check", str(path), "--output-format", "json", "--no-cache"])
    [checked] = json.loads(capsys.readouterr().out)
    report = json.loads(_explain(capsys, f"{path}::first", "--format", "json"))
    [explained] = report["findings"]
    assert checked["fix"]["applicability"] == explained["applicability"] == "unsafe"
    assert checked["fix"]["message"] == explained["fix"]
    assert "ran only with guessed arguments" in explained["fix"]
    given = json.loads(_explain(capsys, f"{path}::first", "--args", "x=f32[3], y=f32[4,3]", "--format", "json"))
    assert [f["applicability"] for f in given["findings"]] == ["safe"]
