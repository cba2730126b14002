"""A warm ``jaxlint check`` replayed: when nothing a check read has changed since a check with the
same command line ran, its output is printed again without importing the pipeline (a warm run
was five times ruff's time, most of it Python importing jaxlint and building its settings).

The entry (``<current folder>/.jaxlint_cache/replay/``) is recorded by a run of ``check`` that
started no process (no worker, no git, no pytest: the result cache answered it all). It lists
what that run depended on: every file it opened, every folder it listed and every path it
probed, each with its type, inode, size and modification and change times (None: absent). It
is keyed by the command line, the current folder, the environment variables, whether stdout and
stderr are terminals, and jaxlint, Python and the installed distributions
(``installed.environment()``). A replay checks each of them again; one difference, and the
check runs in full. Like ruff's cache it trusts file times; a file that changed less than
``RACY_SECONDS`` before the recording is not trusted (git's "racy" rule): no entry is written.

Only a plain report is replayed: a command line with a flag that writes files, fixes, reads
stdin or prints timings (anything outside ``REPLAYED_FLAGS``) always runs in full.
"""
from __future__ import annotations

import hashlib
import marshal
import os
import stat
import sys
import time
from typing import Any, Callable, TextIO

from jaxlint.engine import installed

FORMAT = 1
FOLDER = os.path.join(".jaxlint_cache", "replay")
RACY_SECONDS = 2.0
# Flags that change only what is reported, each with whether it takes a value.
REPLAYED_FLAGS = {
    "--output-format": True, "--select": True, "--ignore": True, "--extend-select": True,
    "--per-file-ignores": True, "--extend-per-file-ignores": True, "--exclude": True,
    "--extend-exclude": True, "--config": True, "--cache-dir": True, "-j": True, "--jobs": True,
    "--timeout": True, "--cost": True, "--isolated": False, "--exit-zero": False,
    "--exit-non-zero-on-fix": False, "-q": False, "--quiet": False, "--statistics": False,
    "--show-fixes": False, "--show-untraced": False, "--unsafe-fixes": False, "--ignore-noqa": False,
    "--force-exclude": False, "--no-force-exclude": False, "--respect-gitignore": False,
    "--no-respect-gitignore": False, "--infer-arguments": False, "--no-infer-arguments": False,
    "--rerun-tests": False, "--no-rerun-tests": False, "--rerun-timeout": True, "--show-settings": False, "--show-files": False,
}
# Environment variables that differ between two runs of one command from one shell.
_VOLATILE = ("_", "OLDPWD", "SHLVL")

def replayable(argv: list[str]) -> bool:
    """Whether ``argv`` (after ``jaxlint``) is a ``check`` whose output may be replayed."""
    if argv[:1] != ["check"]:
        return False
    expects_value = False
    for token in argv[1:]:
        if expects_value:
            expects_value = False
        elif token.startswith("-"):
            name, has_value = token.split("=", 1)[0], "=" in token
            if name not in REPLAYED_FLAGS or (has_value and not REPLAYED_FLAGS[name]):
                return False  # abbreviations and combined short flags included: they run in full
            expects_value = REPLAYED_FLAGS[name] and not has_value
    return not expects_value


def served(argv: list[str], stdout: TextIO, stderr: TextIO) -> int | None:
    """Print the recorded output of this check and return its exit status, when an entry for it
    exists and nothing it depended on changed; None otherwise (run the check)."""
    if not replayable(argv):
        return None
    try:
        entry = _read(os.path.join(FOLDER, _key(argv)))
    except OSError:  # no current folder (removed under the shell): the check says so
        return None
    if entry is None:
        return None
    try:
        if any(_fingerprint(path, follow, listed) != _tuple_or_none(recorded)
               for path, follow, listed, recorded in entry["deps"]):
            return None
        chunks, status = entry["chunks"], int(entry["status"])
        for stream, text in chunks:
            (stdout if stream == 1 else stderr).write(text)
    except (KeyError, TypeError, ValueError):
        return None  # a foreign entry: run in full, and the run replaces it
    return status


def _tuple_or_none(value: Any) -> Any:
    return tuple(value) if value is not None else None


class Recorder:
    """Watches one run of ``check`` (Python's audit events, and ``os.stat``/``os.lstat`` for
    existence checks, which raise none) and, if it started no process, writes its entry."""

    def __init__(self, argv: list[str]) -> None:
        self.argv, self.started = argv, time.time()
        # (path, follows links, listed) -> fingerprint at first use
        self.deps: dict[tuple[str, bool, bool], Any] = {}
        self.changed: set[str] = set()  # paths the run wrote, renamed, removed or touched
        self.chunks: list[tuple[int, str]] = []
        self.git_folders: list[str] = []  # where discovery asked git which files it ignores
        self.replayable = True
        self._saved: tuple[Any, ...] = ()

    def start(self) -> None:
        global _active
        _active = self
        _install_hook()
        self._saved = (sys.stdout, sys.stderr, os.stat, os.lstat)
        sys.stdout, sys.stderr = _Tee(sys.stdout, 1, self), _Tee(sys.stderr, 2, self)
        os.stat, os.lstat = _probing(os.stat, True, self), _probing(os.lstat, False, self)

    def stop(self, status: int | None) -> None:
        """Stop watching; write the entry when the run may be replayed (``status`` None: the run
        ended with an exception)."""
        global _active
        _active = None
        sys.stdout, sys.stderr, os.stat, os.lstat = self._saved
        if not self.replayable or status not in (0, 1) or not os.path.isdir(os.path.dirname(FOLDER)):
            return
        replay_folder, cache_folder = os.path.abspath(FOLDER), os.path.abspath(os.path.dirname(FOLDER))
        changed = self.changed | {os.path.dirname(path) for path in self.changed}
        for top in self.git_folders:
            self._saw_git_inputs(top)
        deps, racy = [], self.started - RACY_SECONDS
        for (path, follow, listed), first in self.deps.items():
            if path.startswith(replay_folder + os.sep) or path == replay_folder:
                continue  # the entries themselves
            # What the run changed is what the next run reads; anything else as the run first saw it.
            seen = _fingerprint(path, follow, listed) if path in changed else first
            # The cache's files are only ever replaced through a rename (a new inode), never
            # edited in place: their times need no margin.
            fresh = seen is not None and max(seen[3], seen[4]) / 1e9 > racy
            if fresh and path not in changed and not path.startswith(cache_folder + os.sep):
                return  # changed while (or just before) the run read it: the times cannot vouch for it
            deps.append((path, follow, listed, seen))
        entry = {"format": FORMAT, "deps": deps, "chunks": self.chunks, "status": status}
        try:
            _write(os.path.join(FOLDER, _key(self.argv)), entry)
        except OSError:
            pass

    def saw(self, path: Any, follow: bool = True, listed: bool = False) -> None:
        if isinstance(path, int) or path is None:
            return
        try:
            path = os.path.abspath(os.fsdecode(path))
        except (OSError, TypeError, ValueError):  # never fail the run's own call: just no entry
            self.replayable = False
            return
        if (path, follow, listed) not in self.deps:
            self.deps[path, follow, listed] = _fingerprint(path, follow, listed)

    def _saw_git_inputs(self, top: str) -> None:
        """What ``git ls-files --ignored`` read for discovery: the ``.gitignore`` of each folder
        the run listed under ``top`` and above it in the work tree, the repository's index,
        excludes and configuration, and the user's and system's git configuration and excludes
        (a ``core.excludesFile`` elsewhere is not seen)."""
        listed = [path for path, _, was_listed in list(self.deps) if was_listed]
        git, folder = None, os.path.abspath(top)
        while git is None:
            self.saw(os.path.join(folder, ".gitignore"))
            if os.path.lexists(os.path.join(folder, ".git")):
                git = os.path.join(folder, ".git")
            elif os.path.dirname(folder) == folder:
                break
            folder = os.path.dirname(folder)
        for path in listed:
            if path == top or path.startswith(top.rstrip(os.sep) + os.sep):
                self.saw(os.path.join(path, ".gitignore"))
        home = os.path.expanduser("~")
        config_home = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
        for path in [os.path.join(home, ".gitconfig"), os.path.join(config_home, "git", "config"),
                     os.path.join(config_home, "git", "ignore"), "/etc/gitconfig", *_git_files(git)]:
            self.saw(path)

    def wrote(self, path: Any) -> None:
        if isinstance(path, int) or path is None:  # a descriptor: its path was seen when it was opened
            return
        try:
            self.changed.add(os.path.abspath(os.fsdecode(path)))
        except (OSError, TypeError, ValueError):  # no current folder, or a name that will not decode
            self.replayable = False


_active: Recorder | None = None
_hooked = False
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


def _install_hook() -> None:
    """One audit hook per process (they cannot be removed): it reports to the active recorder."""
    global _hooked
    if not _hooked:
        sys.addaudithook(_audit)
        _hooked = True


def _audit(event: str, args: tuple[Any, ...]) -> None:
    recorder = _active
    if recorder is None:
        return
    if event == "open":
        path, mode, flags = args[0], args[1], args[2]
        if (isinstance(mode, str) and any(c in mode for c in "wax+")) or (flags or 0) & _WRITE_FLAGS:
            recorder.wrote(path)  # and its folder (``stop``), which may have gained it
        else:
            recorder.saw(path)
    elif event in ("os.listdir", "os.scandir"):
        recorder.saw(args[0] if args[0] is not None else ".", listed=True)
    elif event in ("os.rename", "os.remove", "os.rmdir", "os.mkdir", "os.utime", "os.chmod", "os.link", "os.symlink"):
        for path in args[:2] if event in ("os.rename", "os.link", "os.symlink") else args[:1]:
            recorder.wrote(path)
    elif event == "subprocess.Popen" and _asks_git_what_it_ignores(args[1]):
        recorder.git_folders.append(os.path.abspath(os.fsdecode(args[1][2])))
    elif event in ("subprocess.Popen", "os.posix_spawn", "os.spawn", "os.system", "os.exec", "os.fork"):
        recorder.replayable = False  # a worker or pytest: what it read is not seen here


def _asks_git_what_it_ignores(argv: Any) -> bool:
    """``git -C TOP ls-files ... --ignored ...``, as scan/discover.py's ``git_ignored`` runs it."""
    return (isinstance(argv, (list, tuple)) and len(argv) > 3 and list(argv[:2]) == ["git", "-C"]
            and argv[3] == "ls-files" and "--ignored" in argv)


def _git_files(git: str | None) -> list[str]:
    """A repository's index, excludes and configuration; ``git`` is a work tree's ``.git``,
    a folder or (a linked work tree) a file naming its folder."""
    if git is None:
        return []
    folder = git
    if os.path.isfile(git):
        try:
            with open(git, encoding="utf-8") as handle:
                named = handle.read().strip().removeprefix("gitdir:").strip()
        except (OSError, UnicodeError):
            return [git]
        folder = os.path.join(os.path.dirname(git), named)
    files = [git, os.path.join(folder, "index"), os.path.join(folder, "info", "exclude"),
             os.path.join(folder, "config"), os.path.join(folder, "commondir")]
    try:
        with open(os.path.join(folder, "commondir"), encoding="utf-8") as handle:
            common = os.path.join(folder, handle.read().strip())
        files += [os.path.join(common, "info", "exclude"), os.path.join(common, "config")]
    except (OSError, UnicodeError):
        pass
    return files


def _probing(original: Callable[..., os.stat_result], follow: bool, recorder: Recorder) -> Callable[..., os.stat_result]:
    def probe(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        if not args and not kwargs:
            recorder.saw(path, follow)
        elif kwargs.get("dir_fd") is not None:
            recorder.replayable = False  # a path relative to a folder this cannot name
        return original(path, *args, **kwargs)
    return probe


class _Tee:
    """A text stream that writes through and keeps what was written, in order across streams."""

    def __init__(self, stream: TextIO, number: int, recorder: Recorder) -> None:
        self._stream, self._number, self._recorder = stream, number, recorder

    def write(self, text: str) -> int:
        self._recorder.chunks.append((self._number, text))
        return self._stream.write(text)

    @property
    def buffer(self) -> Any:  # bytes written past the text layer are not kept: no replay
        self._recorder.replayable = False
        return self._stream.buffer

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _fingerprint(path: str, follow: bool, listed: bool) -> Any:
    """What a run could have learnt from ``path``. A folder that was only probed (``os.path.isdir``,
    ``realpath``'s look for links) tells its type, not its times: ``/tmp``'s change all the time."""
    try:
        info = os.stat(path, follow_symlinks=follow)
    except (OSError, ValueError):
        return None
    if not listed and stat.S_ISDIR(info.st_mode):
        return (info.st_mode, info.st_ino, 0, 0, 0)
    return (info.st_mode, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def _key(argv: list[str]) -> str:
    environment = sorted((k, v) for k, v in os.environ.items() if k not in _VOLATILE)
    terminals = tuple(stream.isatty() if hasattr(stream, "isatty") else False for stream in (sys.stdout, sys.stderr))
    material = (FORMAT, argv, os.getcwd(), environment, terminals, installed.environment())
    return hashlib.sha256(marshal.dumps(material)).hexdigest()


def _read(path: str) -> dict[str, Any] | None:
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
        data = raw[32:]
        if len(raw) < 32 or hashlib.sha256(data).digest() != raw[:32]:
            return None
        entry = marshal.loads(data)
    except (OSError, EOFError, ValueError, TypeError):
        return None
    return entry if isinstance(entry, dict) and entry.get("format") == FORMAT else None


def _write(path: str, entry: dict[str, Any]) -> None:
    """Through a rename, so a concurrent replay never reads half an entry; a cache folder that
    cannot be written is no replay."""
    try:
        data = marshal.dumps(entry)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        partial = f"{path}.{os.getpid()}.partial"
        with open(partial, "wb") as handle:
            handle.write(hashlib.sha256(data).digest() + data)
        os.replace(partial, path)
    except (OSError, ValueError):
        pass
