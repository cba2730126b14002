"""Suppression comments and JX800 through the real command line, on traced programs.

Every function below is the founding example's pattern (a vmap output broadcast, then one row
used: JX101 on the vmap line) with a suppression comment somewhere; the checks compare the exact
(code, line) pairs reported. One check per project keeps the worker processes (each pays the JAX
import) few.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from jaxlint.rules import codes_by_name
from jaxlint.scan import noqa

HEADER = '''import jax
import jax.numpy as jnp


def blackbox_function(x, y):
    x = x + 1
    return x, x * y
'''
VMAP = "jax.vmap(blackbox_function, in_axes=(None, 0))(x, y)"


def mapped(name: str, comment: str = "") -> str:
    """A jitted function with one JX101 finding, on the line ending with ``comment``."""
    return f'''

@jax.jit
def {name}(x, y):
    x, y = {VMAP}{comment}
    return x[0], y
'''


def calls(*names: str) -> str:
    """Import-time calls: they give the functions their abstract arguments."""
    return "\n\n" + "".join(f"{name}.lower(1, jnp.arange(10))\n" for name in names)


def jaxlint(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "jaxlint", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=600)


def check_json(*args: str, cwd: Path) -> tuple[set[tuple[str, str, int]], subprocess.CompletedProcess]:
    """(file name, code, row) of every finding of ``jaxlint check --output-format json``."""
    run = jaxlint("check", "--output-format", "json", *args, cwd=cwd)
    assert run.returncode in (0, 1), run.stderr
    return {(Path(f["filename"]).name, f["code"], f["location"]["row"])
            for f in json.loads(run.stdout)}, run


def line_of(text: str, fragment: str, occurrence: int = 1) -> int:
    """The 1-based line of the ``occurrence``-th line containing ``fragment``."""
    found = [n for n, line in enumerate(text.splitlines(), 1) if fragment in line]
    return found[occurrence - 1]


# name -> (comment on the vmap line, whether it suppresses JX101)
SPELLINGS = {
    "code": ("  # noqa: JX101", True),
    "codes_comma": ("  # noqa: JX101,JX201", True),
    "codes_comma_space": ("  # noqa: JX201, JX101", True),
    "codes_space": ("  # noqa: JX201 JX101", True),
    "name": ("  # noqa: vmap-unbatched-output", True),
    "bare": ("  # noqa", True),
    "upper_no_space": ("  # NOQA:JX101", True),
    "after_other_comment": ("  # type: ignore  # noqa: JX101", True),
    "ignore_one": ("  # jaxlint: ignore[JX101]", True),
    "ignore_two": ("  # jaxlint: ignore[JX201, JX101]", True),
    "ignore_name": ("  # jaxlint: ignore[vmap-unbatched-output]", True),
    "other_tool": ("  # noqa: E501", False),
    "other_rule": ("  # noqa: JX201", False),
    "ignore_other_rule": ("  # jaxlint: ignore[JX201]", False),
    "malformed_no_codes": ("  # noqa:", False),
    "in_a_string": ('; marker = "# noqa: JX101"', False),
    "after_a_word": ("  # noqa: E501 explained JX101", False),  # codes end at the first word
}

MULTI_LINE = '''

@jax.jit
def first_line(x, y):
    x, y = (  # noqa: JX101
        jax.vmap(blackbox_function, in_axes=(None, 0))(x, y)
    )
    return x[0], y


@jax.jit
def last_line(x, y):
    x, y = (
        jax.vmap(blackbox_function, in_axes=(None, 0))(x, y)
    )  # noqa: JX101
    return x[0], y


@jax.jit
def middle_line(x, y):
    x, y = (
        jax.vmap(blackbox_function, in_axes=(None, 0))(
            x, y)  # noqa: JX101
    )
    return x[0], y


@jax.jit
def next_statement(x, y):
    x, y = jax.vmap(blackbox_function, in_axes=(None, 0))(x, y)
    z = 1  # noqa: JX101
    return x[0], y
'''


def test_every_spelling_on_the_reported_line(tmp_path: Path) -> None:
    source = HEADER + "".join(mapped(name, comment) for name, (comment, _) in SPELLINGS.items()) \
        + MULTI_LINE + calls(*SPELLINGS, "first_line", "last_line", "middle_line", "next_statement")
    (tmp_path / "mod.py").write_text(source, encoding="utf-8")
    expected = {("mod.py", "JX101", source.splitlines().index(f"    x, y = {VMAP}{comment}") + 1)
                for comment, suppressed in SPELLINGS.values() if not suppressed}
    # The finding is on the vmap line of a multi-line statement: the first or last line of the
    # statement may carry the comment, another line may not; nor may the next statement.
    expected |= {("mod.py", "JX101", line_of(source, "def middle_line") + 2),
                 ("mod.py", "JX101", line_of(source, "def next_statement") + 1)}

    found, run = check_json("--ignore", "JX800", "mod.py", cwd=tmp_path)
    assert found == expected, run.stderr
    assert "(21 targets traced)" in run.stderr

    # --ignore-noqa: every finding, suppressed or not.
    everything, run = check_json("--ignore-noqa", "mod.py", cwd=tmp_path)
    assert {code for _, code, _ in everything} == {"JX101"}
    assert len(everything) == len(SPELLINGS) + 4, run.stdout


FILE_LEVEL = {
    "all.py": "# jaxlint: noqa\n" + HEADER + mapped("f") + calls("f"),
    "codes.py": "# jaxlint: noqa: JX201, JX101\n" + HEADER + mapped("f") + calls("f"),
    "other_code.py": "# jaxlint: noqa: JX201\n" + HEADER + mapped("f") + calls("f"),
    # Not on a line of its own: a line-level directive for line 1 only.
    "inline.py": "import os  # jaxlint: noqa\n" + HEADER + mapped("f") + calls("f"),
    "later_in_file.py": HEADER + mapped("f") + calls("f") + "# jaxlint: noqa: vmap-unbatched-output\n",
    # Findings jaxlint makes itself: a syntax error (the tokenizer reads the comment) and an
    # import error, each suppressed on its line; a file the tokenizer stops in, by the file form.
    "syntax.py": "import jax\nx = = 1  # noqa: JX900\n",
    "unterminated.py": "# jaxlint: noqa: JX900\nimport jax\ns = 'unterminated\n",
    "unterminated_inline.py": "import jax\ns = 'unterminated  # noqa: JX900\n",
    "import_error.py": HEADER + mapped("f") + "\n\nraise RuntimeError('boom')  # noqa: JX901\n",
}


def test_file_level_and_parent_findings(tmp_path: Path) -> None:
    for name, text in FILE_LEVEL.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    found, run = check_json(".", cwd=tmp_path)
    assert found == {
        ("other_code.py", "JX101", line_of(FILE_LEVEL["other_code.py"], VMAP)),
        ("inline.py", "JX101", line_of(FILE_LEVEL["inline.py"], VMAP)),
        # A comment inside what the tokenizer could not read is not a comment.
        ("unterminated_inline.py", "JX900", 2),
    }, run.stderr


BODY_COMMENT = '''

@jax.jit
def {name}(x, y):
    x, y = jax.vmap(blackbox_function, in_axes=(None, 0), out_axes=(None, 0))(x, y){comment}
    return x, y
'''


def fixed_function(name: str, comment: str) -> str:
    """A clean jitted function (the founding example fixed) with ``comment`` on its vmap line."""
    return BODY_COMMENT.format(name=name, comment=comment)


def test_unused_suppressions_reported_and_fixed(tmp_path: Path) -> None:
    source = (HEADER + mapped("used", "  # noqa: JX101")
              + fixed_function("unused", "  # noqa: JX101")
              + fixed_function("mixed", "  # noqa: E501, JX101")
              + fixed_function("partly_used", "  # noqa: JX201")
              + fixed_function("named", "  # noqa: vmap-unbatched-output  # why: it was needed")
              + fixed_function("ignore_form", "  # jaxlint: ignore[JX201, E501]")
              + mapped("duplicate", "  # noqa: JX101, JX101")
              + mapped("used_and_unused", "  # noqa: JX201, JX101")
              + fixed_function("bare", "  # noqa")
              + fixed_function("other_tools", "  # noqa: E501, F401")
              + fixed_function("silenced", "  # noqa: JX201, JX800")
              + calls("used", "unused", "mixed", "partly_used", "named", "ignore_form", "duplicate",
                      "used_and_unused", "bare", "other_tools", "silenced"))
    path = tmp_path / "mod.py"
    path.write_text(source, encoding="utf-8")

    def row(function: str) -> int:
        return line_of(source, f"def {function}(") + 1

    found, run = check_json("mod.py", cwd=tmp_path)
    assert found == {("mod.py", "JX800", row(name)) for name in (
        "unused", "mixed", "partly_used", "named", "ignore_form", "duplicate", "used_and_unused")}, run.stderr

    fixed = jaxlint("check", "--fix", "mod.py", cwd=tmp_path)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "7 fixed" in fixed.stderr
    after = path.read_text(encoding="utf-8")
    vmap_fixed = "jax.vmap(blackbox_function, in_axes=(None, 0), out_axes=(None, 0))(x, y)"
    assert f"    x, y = {VMAP}  # noqa: JX101\n" in after  # used: kept
    assert after.count(f"    x, y = {vmap_fixed}\n") == 2  # unused, partly_used
    assert f"    x, y = {vmap_fixed}  # noqa: E501\n" in after  # mixed: E501 stays
    assert f"    x, y = {vmap_fixed}  # why: it was needed\n" in after  # the explanation stays
    assert f"    x, y = {vmap_fixed}  # jaxlint: ignore[E501]\n" in after
    assert f"    x, y = {VMAP}  # noqa: JX101\n" in after.split("def duplicate")[1].split("def ")[0]
    assert f"    x, y = {VMAP}  # noqa: JX101\n" in after.split("def used_and_unused")[1]
    assert f"    x, y = {vmap_fixed}  # noqa\n" in after
    assert f"    x, y = {vmap_fixed}  # noqa: E501, F401\n" in after
    assert f"    x, y = {vmap_fixed}  # noqa: JX201, JX800\n" in after
    # Only comments changed, so every line is where it was.
    assert len(after.splitlines()) == len(source.splitlines())

    again, run = check_json("mod.py", cwd=tmp_path)
    assert again == set() and run.returncode == 0, run.stdout


def test_unused_suppressions_reported_only_where_rules_ran(tmp_path: Path) -> None:
    """No JX800 where the named rule did not run over the line: not selected, turned off by
    per-file-ignores, a file whose import failed, a function not traced (or traced for only some
    of its signatures), a branch the trace did not take, a helper that an untraced function may
    call; never for a bare noqa."""
    (tmp_path / "pyproject.toml").write_text(
        '[tool.jaxlint]\nexamples = ["examples_file.py"]\n\n'
        '[tool.jaxlint.per-file-ignores]\n"per_file.py" = ["JX201"]\n', encoding="utf-8")
    files = {
        # The control: JX800 is reported in this run, so the silence elsewhere means something.
        "control.py": HEADER + fixed_function("f", "  # noqa: JX203") + calls("f"),
        "not_selected.py": HEADER + fixed_function("f", "  # noqa: JX202, JX101") + mapped("g")
        + calls("f", "g"),
        "per_file.py": HEADER + fixed_function("f", "  # noqa: JX201") + calls("f"),
        "import_failed.py": HEADER + fixed_function("f", "  # noqa: JX201")
        + "\n\nraise RuntimeError('boom')  # noqa: JX901\n",
        "not_traced.py": HEADER + fixed_function("f", "  # noqa: JX201"),
        # The helper ran in the trace of the file's only function: reported.
        "helper.py": HEADER.replace("x = x + 1", "x = x + 1  # noqa: JX201")
        + fixed_function("f", "") + calls("f"),
        # ... but not when another function, left untraced, may call it with other arguments.
        "helper_untraced_caller.py": HEADER.replace("x = x + 1", "x = x + 1  # noqa: JX201")
        + fixed_function("f", "") + fixed_function("untraced", "") + calls("f"),
        "branch.py": HEADER + '''

from functools import partial


@partial(jax.jit, static_argnums=2)
def f(x, y, scale):
    if scale:
        y = y * 2  # noqa: JX201
    y = y + 1  # noqa: JX201
    return x, y


f.lower(1, jnp.arange(10), False)
''',
        "bare.py": HEADER + fixed_function("f", "  # noqa") + calls("f"),
        # Traced with two signatures; the second fails (reshape of 7 rows to 5x2), so a
        # suppression there may be needed for it.
        "sigs.py": HEADER + '''

def partly(x, y):
    x, y = jax.vmap(blackbox_function, in_axes=(None, 0))(x, y)  # noqa: JX201
    return x.reshape(5, 2), y


def fully(x, y):
    x, y = jax.vmap(blackbox_function, in_axes=(None, 0))(x, y)  # noqa: JX201
    return x.reshape(5, 2), y
''',
        "examples_file.py": '''import jax.numpy as jnp
import jaxlint
from sigs import fully, partly

jaxlint.example(partly, 1.0, jnp.ones(10))
jaxlint.example(partly, 1.0, jnp.ones(7))
jaxlint.example(fully, 1.0, jnp.ones(10))
''',
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    found, run = check_json("--ignore", "JX202,JX601", *[n for n in files if n != "examples_file.py"],
                            cwd=tmp_path)
    assert found == {
        ("control.py", "JX800", line_of(files["control.py"], "# noqa: JX203")),
        # JX202 is not selected; JX101 is, and suppressed nothing on that line.
        ("not_selected.py", "JX800", line_of(files["not_selected.py"], "# noqa: JX202, JX101")),
        ("not_selected.py", "JX101", line_of(files["not_selected.py"], VMAP)),
        ("sigs.py", "JX800", line_of(files["sigs.py"], "# noqa: JX201", 2)),
        ("helper.py", "JX800", line_of(files["helper.py"], "# noqa: JX201")),
        ("branch.py", "JX800", line_of(files["branch.py"], "y = y + 1  # noqa: JX201")),
    }, run.stderr
    # --fix removes JX101 (and fixes g's finding), keeps the code of the rule that did not run.
    fixed = jaxlint("check", "--ignore", "JX202,JX601", "--fix", "not_selected.py", cwd=tmp_path)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "(x, y)  # noqa: JX202\n" in (tmp_path / "not_selected.py").read_text(encoding="utf-8")


def test_add_noqa_then_check_is_clean(tmp_path: Path) -> None:
    source = HEADER + '''

@jax.jit
def two_findings(x, y):
    a, b = jax.vmap(blackbox_function, in_axes=(None, 0))(x, y); print(a)
    return a[0], b


@jax.jit
def existing(x, y):
    x, y = jax.vmap(blackbox_function, in_axes=(None, 0))(x, y)  # noqa: E501
    return x[0], y


@jax.jit
def continued(x, y):
    x, y = jax.vmap(blackbox_function, in_axes=(None, 0))(x, y) \\
        if True else (x, y)
    return x[0], y


@jax.jit
def string_continues(x, y):
    x, y = jax.vmap(blackbox_function, in_axes=(None, 0))(x, y) if len("""
""") else (x, y)
    return x[0], y
''' + calls("two_findings", "existing", "continued", "string_continues")
    path = tmp_path / "mod.py"
    path.write_text(source, encoding="utf-8")
    before, run = check_json("mod.py", cwd=tmp_path)
    assert {(code, row) for _, code, row in before} == {
        ("JX101", line_of(source, "def two_findings") + 1), ("JX602", line_of(source, "def two_findings") + 1),
        ("JX101", line_of(source, "def existing") + 1), ("JX101", line_of(source, "def continued") + 1),
        ("JX101", line_of(source, "def string_continues") + 1)}, run.stderr

    added = jaxlint("check", "--add-noqa", "mod.py", cwd=tmp_path)
    assert added.returncode == 0, added.stderr
    assert "Added 4 noqa directives." in added.stderr
    after = path.read_text(encoding="utf-8")
    assert "(x, y); print(a)  # noqa: JX101, JX602\n" in after  # one comment for the line
    assert "(x, y)  # noqa: E501, JX101\n" in after  # added to the existing directive
    # The reported line cannot take a comment (backslash; a string goes on): the last line does.
    assert "(x, y) \\\n        if True else (x, y)  # noqa: JX101\n" in after
    assert '""") else (x, y)  # noqa: JX101\n' in after

    clean = jaxlint("check", "mod.py", cwd=tmp_path)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    again = jaxlint("check", "--add-noqa", "mod.py", cwd=tmp_path)
    assert "Added 0 noqa directives." in again.stderr
    assert path.read_text(encoding="utf-8") == after


def test_usage_errors(tmp_path: Path) -> None:
    (tmp_path / "mod.py").write_text(HEADER, encoding="utf-8")
    for flags in (["--add-noqa", "--fix"], ["--add-noqa", "--diff"], ["--add-noqa", "--ignore-noqa"]):
        run = jaxlint("check", *flags, "mod.py", cwd=tmp_path)
        assert run.returncode == 2 and "--add-noqa" in run.stderr
        assert "Traceback" not in run.stderr


def test_hint_comments_still_work_next_to_suppressions(tmp_path: Path) -> None:
    source = HEADER + '''

# jaxlint: args x=i32[], y=i32[10]
@jax.jit
def hinted(x, y):
    x, y = jax.vmap(blackbox_function, in_axes=(None, 0))(x, y)  # jaxlint: ignore[JX101]
    return x[0], y
'''
    (tmp_path / "mod.py").write_text(source, encoding="utf-8")
    found, run = check_json("mod.py", cwd=tmp_path)
    assert found == set() and "(1 target traced)" in run.stderr
    everything, _ = check_json("--ignore-noqa", "mod.py", cwd=tmp_path)
    assert everything == {("mod.py", "JX101", line_of(source, VMAP))}


def test_add_noqa_leaves_unreadable_files_alone(tmp_path: Path) -> None:
    """A JX900 for a file jaxlint could not decode: writing a comment would replace its bytes."""
    data = b'import jax\nx = "\xff\xfe"\n'
    (tmp_path / "bad.py").write_bytes(data)
    run = jaxlint("check", "--add-noqa", ".", cwd=tmp_path)
    assert run.returncode == 0 and "Added 0 noqa directives." in run.stderr, run.stderr
    assert (tmp_path / "bad.py").read_bytes() == data


@pytest.mark.parametrize("text", [
    "x = f(  # noqa: JX101\n    1,\n    2)  # jaxlint: ignore[JX202]\ns = '''\n# noqa: JX303\n'''\n",
    "# jaxlint: noqa: JX101\n# a note, no directive\ny = 1 + \\\n    2  # type: ignore  # noqa\n",
    "z = 1  # noqa: JX101\nbroken = 'unterminated\nw = 2  # noqa: JX202\n",
    "def f(:\n    pass  # noqa: JX101\n",
])
def test_the_scan_caches_tokens_read_as_the_tokenizer_does(text: str) -> None:
    """What the scan cache keeps of a file's comments (JSON) gives the directives, statements and
    lines the tokenizer gives, so a warm run reads suppressions without tokenizing."""
    tokens = noqa.tokenized(text)
    stored = noqa.tokens_from_json(json.loads(json.dumps(noqa.tokens_to_json(tokens))))
    assert (stored.statements, stored.commentable, stored.complete, stored.comment_lines) == \
        (tokens.statements, tokens.commentable, tokens.complete, tokens.comment_lines)
    fresh, cached = noqa.read_comments(text, codes_by_name()), noqa.read_comments(text, codes_by_name(), stored)
    assert [(d.line, d.start, d.codes, d.file_level) for d in cached.directives] == \
        [(d.line, d.start, d.codes, d.file_level) for d in fresh.directives]
    assert (cached.statements, cached.commentable, cached.complete) == \
        (fresh.statements, fresh.commentable, fresh.complete)
