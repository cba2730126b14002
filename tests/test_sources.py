"""User files keep their bytes: encoding, BOM and line endings survive a read and a --fix write."""
import os
from pathlib import Path

import pytest

from jaxlint.engine.check import check
from jaxlint.model import Edit, Span
from jaxlint.rules import all_rules
from jaxlint.text import (
    SourceError,
    apply_edits,
    char_span,
    line_code_span,
    line_starts,
    newline_of,
    offset_of,
    physical_lines,
    read_lines,
    read_source,
    shift_position,
    split_lines,
    write_atomic,
)

REPO = Path(__file__).resolve().parents[1]
FOUNDING = (REPO / "examples" / "founding.py").read_text()

CRLF = b"import jax\r\n\r\ndef f(x):\r\n    return x\r\n"
LATIN1 = "# -*- coding: latin-1 -*-\n# café, naïve\nname = 'résumé'\n".encode("latin-1")
BOM = b"\xef\xbb\xbf" + "# café\nx = 1\n".encode()
MIXED = b"a = 1\r\nb = 2\nc = 3\rd = 4\r\n"


@pytest.mark.parametrize("data, encoding, bom", [
    (CRLF, "utf-8", False),
    (LATIN1, "iso-8859-1", False),
    (BOM, "utf-8", True),
    (MIXED, "utf-8", False),
])
def test_read_then_write_keeps_every_byte(tmp_path, data, encoding, bom):
    path = tmp_path / "mod.py"
    path.write_bytes(data)
    source = read_source(str(path))
    assert (source.encoding, source.bom) == (encoding, bom)
    assert "\ufeff" not in source.text
    write_atomic(source, source.text)
    assert path.read_bytes() == data


def test_text_is_decoded_with_newlines_untranslated(tmp_path):
    (tmp_path / "crlf.py").write_bytes(CRLF)
    (tmp_path / "latin.py").write_bytes(LATIN1)
    assert read_source(str(tmp_path / "crlf.py")).text == CRLF.decode()
    assert "'résumé'" in read_source(str(tmp_path / "latin.py")).text


def test_edit_is_encoded_like_the_file(tmp_path):
    path = tmp_path / "latin.py"
    path.write_bytes(LATIN1)
    source = read_source(str(path))
    write_atomic(source, source.text.replace("résumé", "déjà vu"))
    assert path.read_bytes() == LATIN1.replace("résumé".encode("latin-1"), "déjà vu".encode("latin-1"))


def test_unencodable_edit_leaves_the_file_untouched(tmp_path):
    path = tmp_path / "latin.py"
    path.write_bytes(LATIN1)
    source = read_source(str(path))
    with pytest.raises(UnicodeEncodeError):
        write_atomic(source, source.text + "arrow = '→'\n")
    assert path.read_bytes() == LATIN1
    assert os.listdir(tmp_path) == ["latin.py"]


def test_write_replaces_by_rename_and_keeps_mode(tmp_path):
    path = tmp_path / "mod.py"
    path.write_bytes(CRLF)
    path.chmod(0o750)
    before = path.stat()
    source = read_source(str(path))
    write_atomic(source, source.text.replace("x", "y"))
    after = path.stat()
    assert after.st_ino != before.st_ino  # a new file renamed over the old: never half-written
    assert after.st_mode & 0o7777 == 0o750
    assert os.listdir(tmp_path) == ["mod.py"]  # no temporary file left behind
    assert path.read_bytes() == CRLF.replace(b"x", b"y")


def test_write_through_a_symlink_keeps_the_link(tmp_path):
    real = tmp_path / "real.py"
    real.write_bytes(CRLF)
    link = tmp_path / "link.py"
    link.symlink_to(real)
    source = read_source(str(link))
    write_atomic(source, source.text.replace("x", "y"))
    assert link.is_symlink()
    assert real.read_bytes() == CRLF.replace(b"x", b"y")


@pytest.mark.parametrize("data, message", [
    (b"x = '\xff'\n", "invalid or missing encoding declaration"),  # within the cookie's 2 lines
    (b"x = 1\ny = 2\nz = '\xff'\n", "cannot decode line 3 as utf-8"),
    (b"# -*- coding: no-such-codec -*-\nx = 1\n", "no-such-codec"),
])
def test_undecodable_file_raises_source_error(tmp_path, data, message):
    path = tmp_path / "bad.py"
    path.write_bytes(data)
    with pytest.raises(SourceError, match=message) as info:
        read_source(str(path))
    assert info.value.data == data


@pytest.mark.slow
def test_fix_keeps_line_endings_encoding_and_bom(tmp_path):
    (tmp_path / "crlf.py").write_bytes(FOUNDING.replace("\n", "\r\n").encode())
    latin1_header = "# -*- coding: latin-1 -*-\n# café\n"
    (tmp_path / "latin.py").write_bytes((latin1_header + FOUNDING).encode("latin-1"))
    (tmp_path / "bom.py").write_bytes(b"\xef\xbb\xbf" + ("# café\n" + FOUNDING).encode())
    result = check([str(tmp_path)], all_rules(), fix=True)
    assert len(result.fixed) == 3 and result.fix_rejected == []
    assert result.findings == []

    crlf = (tmp_path / "crlf.py").read_bytes()
    assert b"out_axes=(None, 0)" in crlf
    assert crlf.count(b"\n") == crlf.count(b"\r\n") == FOUNDING.count("\n")  # CRLF everywhere
    latin = (tmp_path / "latin.py").read_bytes()
    assert b"out_axes=(None, 0)" in latin and latin.startswith(latin1_header.encode("latin-1"))
    bom = (tmp_path / "bom.py").read_bytes()
    assert b"out_axes=(None, 0)" in bom and bom.startswith(b"\xef\xbb\xbf# caf\xc3\xa9\n")
    assert bom.count(b"\xef\xbb\xbf") == 1
    assert sorted(os.listdir(tmp_path)) == ["bom.py", "crlf.py", "latin.py"]


# Line breaks as Python counts them: \r\n, a lone \r and \n; not \f, \v, \x1c-\x1e, \x85, \u2028.
PYTHON_LINES = "a = 1\r\nb = 2\rc = 3\nd = '\x0c\x0b\x1c\x85\u2028'"


def test_split_lines_breaks_where_python_does():
    assert split_lines(PYTHON_LINES) == ["a = 1", "b = 2", "c = 3", "d = '\x0c\x0b\x1c\x85\u2028'"]
    assert len(split_lines(PYTHON_LINES)) < len(PYTHON_LINES.splitlines())
    assert split_lines("x\r\n") == ["x", ""]  # a final break starts an (empty) line
    assert split_lines("x\r\r\n") == ["x", "", ""]  # a lone CR, then a CRLF
    assert split_lines("") == [""]


def test_physical_lines_without_a_trailing_newline():
    assert physical_lines("a\r\nb") == physical_lines("a\r\nb\r\n") == ["a", "b"]
    assert physical_lines("a\rb\r") == ["a", "b"]
    assert physical_lines("a\n\n") == ["a", ""]
    assert physical_lines("") == []
    for text in ("a\r\nb", "a\r\nb\r\n", "a\rb\r", "a\n\n", "", "\r\r\n"):
        assert "".join(physical_lines(text, keepends=True)) == text
        assert [line.rstrip("\r\n") for line in physical_lines(text, keepends=True)] == physical_lines(text)
    assert physical_lines("a\r\r\nb", keepends=True) == ["a\r", "\r\n", "b"]


def test_read_lines_reads_every_line_break(tmp_path):
    path = tmp_path / "mod.py"
    path.write_bytes(b"a = 1\r\nb = '\xff'\rc = 3")  # an undecodable byte is replaced
    assert read_lines(str(path)) == ["a = 1", "b = '\ufffd'", "c = 3"]


def test_line_starts_and_offsets_with_crlf_and_lone_cr():
    assert line_starts(PYTHON_LINES) == (0, 7, 13, 19)
    for line, start in enumerate(line_starts(PYTHON_LINES), 1):
        assert offset_of(PYTHON_LINES, line, 2) == start + 2
    assert line_starts("no break") == (0,)
    assert line_starts("ends\n") == (0, 5)
    assert offset_of("ab\ncd", 9, 0) == len("ab\ncd")  # past the last line: the end of the text


def test_newline_of_is_the_first_line_break():
    assert newline_of("a\r\nb\n") == "\r\n"
    assert newline_of("a\rb\r\n") == "\r"
    assert newline_of("a\nb\r\n") == "\n"
    assert newline_of("one line") == "\n"


def test_char_span_turns_utf8_byte_columns_into_characters():
    source = "x = 1\r\ns = 'é€'; y = f(s)\rz = '😀' + g(y)\n"
    line2 = "s = 'é€'; y = f(s)"
    byte = lambda text, part: len(text[:text.index(part)].encode())  # noqa: E731
    span = Span(2, byte(line2, "f(s)"), 2, byte(line2, "f(s)") + 4)
    assert char_span(source, span) == Span(2, line2.index("f(s)"), 2, line2.index("f(s)") + 4)
    line3 = "z = '😀' + g(y)"
    assert char_span(source, Span(2, byte(line2, "y ="), 3, byte(line3, "g(y)"))) == Span(
        2, line2.index("y ="), 3, line3.index("g(y)"))
    assert char_span(source, Span(1, 0, 1, 5)) == Span(1, 0, 1, 5)  # an ASCII line keeps its columns
    assert char_span(source, Span(7, 3, 7, 4)) == Span(7, 3, 7, 4)  # no such line: unchanged
    ascii_source = "a = 1\n"
    assert char_span(ascii_source, Span(1, 4, 1, 5)) == Span(1, 4, 1, 5)


def test_line_code_span_leaves_out_indentation_and_trailing_blanks():
    assert line_code_span(3, "    x = 1  # note \t") == Span(3, 4, 3, len("    x = 1  # note"))
    assert line_code_span(2, "   ") == Span(2, 0, 2, 0)
    assert line_code_span(1, "") == Span(1, 0, 1, 0)


def test_edits_and_positions_with_lone_cr():
    source = "a = 1\rb = 2\rc = 3\r"
    edits = [Edit(Span(1, 0, 1, 0), "import x\r"), Edit(Span(2, 4, 2, 5), "20")]
    assert apply_edits(source, edits) == "import x\ra = 1\rb = 20\rc = 3\r"
    assert shift_position(source, edits, 3, 4) == (4, 4)  # a lone CR counts as a line break
    crlf = source.replace("\r", "\r\n")
    crlf_edits = [Edit(e.span, e.content.replace("\r", "\r\n")) for e in edits]
    assert shift_position(crlf, crlf_edits, 3, 4) == (4, 4)
