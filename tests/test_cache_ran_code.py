"""An edit of an imported file re-lints only the modules whose analysis ran the edited code
(engine/ran_code.py, Result.ran): a module that traced nothing keeps its cached result when the
edit is confined to bodies of functions its import never called, and no module is re-linted for
comments and moved lines. Real analyses in process."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
from helpers import check_in_process

from jaxlint.config import load_config
from jaxlint.config.selection import select_rules
from jaxlint.engine.cache import ResultCache
from jaxlint.engine.ran_code import names_file, ran_digest
from jaxlint.engine.results import CheckResult
from jaxlint.model import RAN_ALL, Finding, Result, Span

RULES = select_rules(None, None)
needs_qualname = pytest.mark.skipif(sys.version_info < (3, 11), reason="co_qualname is Python 3.11+")

# Named scaling.py, not helpers.py: the tests' own helpers module would shadow it.
SCALING = """\
SCALE = 2.0


def double(x):
    return x * SCALE


def never_called(x):
    return x - 1
"""

# Calls double at import and traces nothing: no arguments are known for step (nor can a
# parameter named `model` be inferred).
USERS = """\
import jax

from scaling import double, never_called

FACTOR = double(3.0)


@jax.jit
def step(model):
    return never_called(model) * FACTOR
"""

# Traces go, whose trace runs never_called: unrecorded code, so any edit of scaling.py counts.
TRACED = """\
import jax

from scaling import never_called


@jax.jit
def go(x):
    return never_called(x)


go(1.0)
"""


def project(tmp_path: Path) -> Path:
    (tmp_path / "jaxlint.toml").write_text("")
    (tmp_path / "scaling.py").write_text(SCALING)
    (tmp_path / "users.py").write_text(USERS)
    (tmp_path / "traced.py").write_text(TRACED)
    return tmp_path


def run(root: Path) -> CheckResult:
    config = load_config([str(root)])
    return check_in_process([str(root)], RULES, config=config, cache=ResultCache(config.cache_dir, config.root))


def analyzed(result: CheckResult) -> set[str]:
    return {Path(a.source.path).name for a in result.files if a.result is not None and a.result.timings}


def edit(root: Path, old: str, new: str) -> None:
    text = (root / "scaling.py").read_text()
    assert old in text
    (root / "scaling.py").write_text(text.replace(old, new))


@needs_qualname
def test_an_edit_of_a_function_the_import_never_ran_keeps_the_cached_result(tmp_path: Path) -> None:
    root = project(tmp_path)
    first = run(root)
    assert analyzed(first) == {"users.py", "traced.py"}
    results = {Path(a.source.path).name: a.result for a in first.files if a.result is not None}
    assert results["users.py"].ran == {str(root / "scaling.py"): ["double"]}
    assert results["traced.py"].ran == {str(root / "scaling.py"): [RAN_ALL]}
    edit(root, "    return x - 1\n", "    # clamp later\n    return x - 2\n")
    # traced.py's trace ran never_called, unrecorded: re-linted; users.py only imported it.
    second = run(root)
    assert analyzed(second) == {"traced.py"}
    assert [f.code for f in second.findings] == [f.code for f in first.findings]
    assert analyzed(run(root)) == set()


def test_comments_and_moved_lines_in_an_imported_file_re_lint_nothing(tmp_path: Path) -> None:
    """Whatever ran, even under a trace: the file's code is the same."""
    root = project(tmp_path)
    run(root)
    edit(root, "SCALE = 2.0\n", "# The scale of everything.\n\n\nSCALE = 2.0  # a float\n")
    assert analyzed(run(root)) == set()


@needs_qualname
@pytest.mark.parametrize("old, new", [
    ("    return x * SCALE\n", "    return x * SCALE * 1.0\n"),  # the body of a function that ran
    ("SCALE = 2.0\n", "SCALE = 3.0\n"),  # module level runs at import
    ("def never_called(x):", "def never_called(x, y=print('imported')):"),  # a default runs at import
    ("def never_called(x):", "@staticmethod\ndef never_called(x):"),  # so does a decorator
])
def test_an_edit_of_code_the_import_ran_invalidates(tmp_path: Path, old: str, new: str) -> None:
    root = project(tmp_path)
    run(root)
    edit(root, old, new)
    assert "users.py" in analyzed(run(root))


@needs_qualname
def test_a_result_that_names_the_file_is_judged_by_its_bytes(tmp_path: Path) -> None:
    """A finding in the imported file carries its lines, which an edit anywhere above moves."""
    cache = ResultCache(str(tmp_path / "cache"), str(tmp_path))
    scaling = tmp_path / "scaling.py"
    scaling.write_text(SCALING)
    quiet = Result("users.py", ran={str(scaling): ["double"]})
    assert list(cache._ran_entries(quiet, quiet.to_json())) == [str(scaling)]
    named = Result("users.py", ran={str(scaling): ["double"]},
                   findings=[Finding("JX508", "float64-truncated", "float64 requested", "warning", str(scaling),
                                     Span(5, 4, 5, 16))])
    assert cache._ran_entries(named, named.to_json()) == {}


def test_a_file_is_named_by_its_name_not_inside_a_longer_one() -> None:
    assert names_file("JX101 at /src/pkg/_ad.py:12", "/src/pkg/_ad.py")
    assert names_file("TRACING CACHE MISS at _ad.py:13:4", "/src/pkg/_ad.py")
    assert names_file('{"path": "_ad.py"}', "/src/pkg/_ad.py")
    assert not names_file("tests/test_ad.py::test_grad", "/src/pkg/_ad.py")
    assert not names_file("see my_ad.py or ad.py", "/src/pkg/_ad.py")


def test_the_digest_ignores_comments_moved_lines_and_bodies_that_did_not_run() -> None:
    source = b"class Model:\n    def apply(self, x):\n        '''Doc.'''\n        return x\n\n" \
             b"    def unused(self):\n        return 1\n\n\ndef outer():\n    def inner():\n        return 2\n    return inner\n"
    ran = ["Model.apply", "outer"]
    digest = ran_digest(source, ran)
    assert digest is not None
    assert ran_digest(b"# header\n\n" + source.replace(b"return 1", b"return 3  # new"), ran) == digest
    assert ran_digest(source.replace(b"return 2", b"return 4"), ran) == digest  # outer.<locals>.inner
    assert ran_digest(source.replace(b"return 2", b"return 4"), [*ran, "outer.<locals>.inner"]) != digest
    assert ran_digest(source.replace(b"return x\n", b"return -x\n"), ran) != digest  # a body that ran
    assert ran_digest(source.replace(b"'''Doc.'''", b"'''Other.'''"), ["outer"]) != digest  # docstrings stay
    assert ran_digest(source.replace(b"def unused(self)", b"def unused(self, y=0)"), ran) != digest
    assert ran_digest(b"def broken(:\n", ran) is None


def test_the_analysis_leaves_no_profile_or_trace_hook_behind(tmp_path: Path) -> None:
    root = project(tmp_path)
    before = sys.getprofile(), sys.gettrace()
    run(root)
    assert (sys.getprofile(), sys.gettrace()) == before
