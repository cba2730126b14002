"""User files keep their bytes: encoding, BOM and line endings survive a read and a --fix write."""
import os
from pathlib import Path

import pytest

from jaxlint.engine.check import check
from jaxlint.rules import all_rules
from jaxlint.text import SourceError, read_source, write_atomic

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
