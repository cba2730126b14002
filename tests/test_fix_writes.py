"""--fix never loses a user's edit and never takes a file's identity: a file saved while jaxlint
ran is left as the user saved it, a read-only file is left alone, hard links, owner and mode stay,
and a file that cannot be written is a message while the others are still fixed. Through the real
command line (the founding example's JX101 fix is safe), except where the operating system's
refusal has to be arranged (the tests run as root, which any folder lets write)."""
from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from helpers import check_in_process

from jaxlint.rules import all_rules
from jaxlint.text import NotWritten, read_source, write_atomic

REPO = Path(__file__).resolve().parent.parent
FOUNDING = (REPO / "examples" / "founding.py").read_text()
FIXED_LINE = "x, y = jax.vmap(blackbox_function, in_axes=(None, 0), out_axes=(None, 0))(x, y)"


def jaxlint(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "jaxlint", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=600)


def test_a_file_saved_while_jaxlint_runs_keeps_the_users_version(tmp_path: Path) -> None:
    # The module appends to itself when imported, as an editor saving it during the run would:
    # jaxlint imports it after reading it, so the bytes it would replace are no longer those it read.
    saving = FOUNDING + "\nwith open(__file__, 'a') as _f:\n    _f.write('# saved by the user\\n')\n"
    (tmp_path / "saved.py").write_text(saving)
    (tmp_path / "other.py").write_text(FOUNDING)
    run = jaxlint("check", "--fix", ".", cwd=tmp_path)
    text = (tmp_path / "saved.py").read_text()
    assert text.startswith(saving) and "# saved by the user" in text and FIXED_LINE not in text
    assert "saved.py: not fixed: it changed since jaxlint read it; your version is kept" in run.stderr
    assert FIXED_LINE in (tmp_path / "other.py").read_text()  # the other file is fixed
    assert "1 fixed, 1 file left unfixed (said above)" in run.stderr
    assert run.returncode == 1  # saved.py's finding remains
    assert "saved.py:13:12: JX101" in run.stdout


def test_a_read_only_file_is_left_alone_and_its_neighbour_fixed(tmp_path: Path) -> None:
    (tmp_path / "locked.py").write_text(FOUNDING)
    (tmp_path / "open.py").write_text(FOUNDING)
    os.chmod(tmp_path / "locked.py", 0o444)
    run = jaxlint("check", "--fix", ".", cwd=tmp_path)
    assert (tmp_path / "locked.py").read_text() == FOUNDING
    assert stat.S_IMODE(os.stat(tmp_path / "locked.py").st_mode) == 0o444
    assert "locked.py: not fixed: the file is read-only" in run.stderr
    assert FIXED_LINE in (tmp_path / "open.py").read_text()
    assert "Traceback" not in run.stderr and run.returncode == 1


def test_hard_links_mode_and_inode_are_kept(tmp_path: Path) -> None:
    (tmp_path / "model.py").write_text(FOUNDING)
    os.chmod(tmp_path / "model.py", 0o640)
    os.link(tmp_path / "model.py", tmp_path / "linked.txt")  # not .py: only model.py is checked
    inode = os.stat(tmp_path / "model.py").st_ino
    run = jaxlint("check", "--fix", "model.py", cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert FIXED_LINE in (tmp_path / "linked.txt").read_text()  # the other name sees the fix
    assert os.stat(tmp_path / "model.py").st_ino == inode
    assert stat.S_IMODE(os.stat(tmp_path / "model.py").st_mode) == 0o640


def test_a_folder_that_takes_no_new_file_gets_its_file_rewritten_in_place(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "model.py").write_text(FOUNDING)
    refusing = str(tmp_path)
    mkstemp = tempfile.mkstemp

    def no_new_file_in_the_folder(*args, **kwargs):  # type: ignore[no-untyped-def]
        if kwargs.get("dir") == refusing:
            raise PermissionError(13, "Permission denied", refusing)
        return mkstemp(*args, **kwargs)

    monkeypatch.setattr(tempfile, "mkstemp", no_new_file_in_the_folder)
    inode = os.stat(tmp_path / "model.py").st_ino
    result = check_in_process([str(tmp_path)], all_rules(), fix=True)
    assert [f.code for f in result.fixed] == ["JX101"] and result.not_written == []
    assert FIXED_LINE in (tmp_path / "model.py").read_text()
    assert os.stat(tmp_path / "model.py").st_ino == inode
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".jaxlint-")]


def test_a_file_that_cannot_be_opened_for_writing_is_a_message(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a.py").write_text(FOUNDING)
    (tmp_path / "b.py").write_text(FOUNDING)
    import jaxlint.text

    replace = os.replace

    def refused_for_a(source: str, destination: str) -> None:
        if destination.endswith("a.py"):
            raise PermissionError(13, "Permission denied", destination)
        replace(source, destination)

    monkeypatch.setattr(jaxlint.text.os, "replace", refused_for_a)
    result = check_in_process([str(tmp_path)], all_rules(), fix=True)
    assert result.not_written == [(str(tmp_path / "a.py"), "Permission denied")]
    assert (tmp_path / "a.py").read_text() == FOUNDING
    assert FIXED_LINE in (tmp_path / "b.py").read_text()
    assert [f.path for f in result.findings] == [str(tmp_path / "a.py")]  # its finding is still reported
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".jaxlint-")]


def test_write_atomic_refuses_changed_bytes_before_writing_anything(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_bytes(b"x = 1\r\n")
    source = read_source(str(path))
    path.write_bytes(b"x = 2\r\n")
    with pytest.raises(NotWritten):
        write_atomic(source, "x = 3\r\n")
    assert path.read_bytes() == b"x = 2\r\n"
    source = read_source(str(path))
    write_atomic(source, "x = 3\r\n")
    write_atomic(source, "x = 4\r\n")  # its own write does not count as a change
    assert path.read_bytes() == b"x = 4\r\n"


@pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0 or not shutil.which("chown"),
                    reason="giving a file to another owner needs root")
def test_another_owners_file_keeps_its_owner(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text("x = 1\n")
    os.chown(path, 12345, 12345)
    write_atomic(read_source(str(path)), "x = 2\n")
    info = os.stat(path)
    assert (info.st_uid, info.st_gid) == (12345, 12345) and path.read_text() == "x = 2\n"


def test_a_symlinked_file_is_checked_and_fixed_once_and_the_link_kept(tmp_path: Path) -> None:
    # Issue 24 item 7: the link and its target were two files, reported twice, and fixing the
    # second name found the first fix and called it the user's edit.
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "good.py").write_text(FOUNDING)
    (tmp_path / "pkg" / "link.py").symlink_to("good.py")
    run = jaxlint("check", ".", cwd=tmp_path)
    assert run.stdout.count("JX101") == 1 and "pkg/good.py:13:12: JX101" in run.stdout, run.stdout
    run = jaxlint("check", "--fix", "--unsafe-fixes", ".", cwd=tmp_path)
    assert "not fixed" not in run.stderr and "changed since" not in run.stderr, run.stderr
    assert run.returncode == 0, run.stdout + run.stderr
    assert (tmp_path / "pkg" / "link.py").is_symlink()
    assert FIXED_LINE in (tmp_path / "pkg" / "good.py").read_text()


def test_a_broken_symlink_is_a_jx900_finding(tmp_path: Path) -> None:
    (tmp_path / "broken.py").symlink_to("missing.py")
    (tmp_path / "ok.py").write_text("x = 1\n")
    for paths in (["."], ["broken.py"]):
        run = jaxlint("check", *paths, cwd=tmp_path)
        assert "broken.py:1:1: JX900 cannot read the file: it is a broken symlink (to missing.py)" in run.stdout
        assert run.returncode == 1 and "Traceback" not in run.stderr, run.stdout + run.stderr


def test_a_write_through_another_name_is_not_called_a_concurrent_change(tmp_path: Path) -> None:
    (tmp_path / "good.py").write_text("x = 1\n")
    (tmp_path / "link.py").symlink_to("good.py")
    through_link, direct = read_source(str(tmp_path / "link.py")), read_source(str(tmp_path / "good.py"))
    write_atomic(through_link, "x = 2\n")
    with pytest.raises(NotWritten) as refused:
        write_atomic(direct, "x = 3\n")  # fixes computed on the old text are not written over the new
    assert "jaxlint fixed this file through" in str(refused.value) and "changed since" not in str(refused.value)
    assert (tmp_path / "good.py").read_text() == "x = 2\n" and (tmp_path / "link.py").is_symlink()
