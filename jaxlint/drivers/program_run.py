"""The process ``jaxlint run`` starts: the user's Python program, run as ``python SCRIPT`` or
``python -m MODULE`` would run it (``__main__``, ``sys.argv``, ``sys.path[0]``), with the calls of
the project's functions watched as ``pytest --jaxlint`` watches them; once the program is done
(returned, raised, or called ``sys.exit``), the kept calls are linted here, where their objects
live, and the raw findings, linted functions and the files each module's traces ran handed to
jaxlint (a JSON file), which settles and reports them and writes the result store. The process
then exits with the program's own status.

Started as ``python [OPTIONS] -c BOOTSTRAP path SCRIPT ARGS...`` or ``... module NAME ARGS...``
with ``JAXLINT_RUN`` in its environment: ``{"results": path, "parent": pid, "config": file or
null, "isolated": bool, "overrides": ["KEY = VALUE", ...]}``. Nothing is linted after a Ctrl-C:
the user asked to stop.
"""
from __future__ import annotations

import builtins
import contextlib
import importlib.util
import json
import os
import signal
import sys
import time
import traceback
import types
from typing import Any, NoReturn

ENV = "JAXLINT_RUN"
BOOTSTRAP = "from jaxlint.drivers.program_run import main; main()"


def main() -> NoReturn:
    settings = json.loads(os.environ.pop(ENV))  # not inherited by what the program starts
    _end_with(settings["parent"])
    started_as = os.getpid()
    mode, target, *args = sys.argv[1:]
    watching = _Watching(settings, target if mode == "path" else None)
    status, interrupted = 0, False
    try:
        if mode == "path":
            _run_path(target, args, watching)
        else:
            _run_module(target, args)
    except SystemExit as exit_:
        status = _exit_status(exit_.code)
    except KeyboardInterrupt:
        _print_traceback()
        status, interrupted = 130, True
    except BaseException:  # as Python reports an uncaught exception: the traceback, status 1
        _print_traceback()
        status = 1
    finally:
        watching.stop()
    if os.getpid() == started_as:  # not a fork of the program that returned
        for stream in (sys.stdout, sys.stderr):  # the program's output comes before jaxlint's report
            try:
                stream.flush()
            except Exception:
                pass
        if interrupted:
            _write(settings["results"], {"interrupted": True, "status": status})
        else:
            try:
                watching.hand_over(settings["results"], status)
            except Exception as error:  # jaxlint's own bug: said, and the program's status kept
                traceback.print_exc()
                _write(settings["results"], {"error": f"{type(error).__name__}: {error}", "status": status})
    sys.exit(status)


def _write(path: str, data: dict[str, Any]) -> None:
    """``data`` as JSON at ``path``, whole or not at all."""
    with open(path + ".part", "w", encoding="utf-8") as handle:
        json.dump(data, handle)
    os.replace(path + ".part", path)


class _Watching:
    """The watcher of ``pytest --jaxlint`` (watched_calls.py, watched_imports.py) on the project's files,
    from before the program imports anything until it is done."""

    def __init__(self, settings: dict[str, Any], script: str | None) -> None:
        import jaxlint
        from jaxlint.config import load_config
        from jaxlint.config.keys import parse_snippet
        from jaxlint.drivers.runtime import RunWatcher, run_sources
        from jaxlint.drivers.watched_calls import CallWatcher, ProjectFiles
        from jaxlint.drivers.watched_imports import WatchedImports, imported_already
        from jaxlint.rules import rule_classes

        self.started = time.time()  # before the program's imports: what the store's digests vouch for
        cwd = os.getcwd()
        self.config = load_config([cwd], settings.get("config"), bool(settings.get("isolated")),
                                  [parse_snippet(text, cwd) for text in settings.get("overrides", [])])
        own = os.path.dirname(os.path.realpath(jaxlint.__file__))
        self.files = ProjectFiles(self.config.root, lambda path: path == own or self.config.excluded(path), [])
        self.notes: list[str] = []
        if script is not None and os.path.isfile(script) and script not in self.files:
            self.notes.append(f"{script} is outside the project ({self.config.root}), excluded or a test file: "
                              "its own functions are not linted")
        self.rules = rule_classes(r.code for r in self.config.rules())
        run_events = run_sources(self.rules)  # before the program's imports: its loops may be counted
        self.imported_before = imported_already(self.files.__contains__)  # a sitecustomize, say
        self.imports = None if self.imported_before else WatchedImports(self.files.__contains__)
        self.watcher = CallWatcher(self.files, profile=self.imports is None)
        if self.imports is not None:
            self.imports.install(self.watcher.notify)
        self.watcher.start()
        # JAX's run-time events (compiles, host syncs) of the whole run, for the run-time rules.
        self.runtime = RunWatcher(self.files.__contains__, run_events) if run_events else None
        if self.runtime is not None:
            self.runtime.start()
            self.runtime.scope = "program"

    def stop(self) -> None:
        self.watcher.stop()
        if self.runtime is not None:
            self.runtime.stop()
        if self.imports is not None:
            self.imports.uninstall()

    def hand_over(self, path: str, status: int) -> None:
        """Lint the kept calls and write what jaxlint reports from to ``path`` (whole or not at all)."""
        from jaxlint.drivers.lint import lint_calls

        started = time.perf_counter()
        rules = self.rules
        run_findings = self.runtime.findings(rules, self.config.settings()) if self.runtime is not None else []
        # The call the watched modules make tells which project files each trace runs: what the
        # store's entries depend on.
        with self.imports.calling(self.watcher.notify) if self.imports is not None else contextlib.nullcontext():
            outcome = lint_calls(list(self.watcher.functions.values()), rules, self.config.settings(),
                                 self.files.__contains__, self.watcher.executed_files)
        data = {"findings": [f.to_json() for f in run_findings + outcome.findings],
                "functions": [f.to_json() for f in outcome.functions],
                "ran": [r.to_json() for r in outcome.ran], "seconds": time.perf_counter() - started,
                "depends": {path: sorted(files) for path, files in outcome.depends.items()},
                "imported_before": self.imported_before,
                "other_loaders": self.imports.other_loaders if self.imports is not None else [],
                "notes": self.notes, "not_compiled": outcome.not_compiled, "status": status,
                "read": self.imports.read if self.imports is not None else {}, "started": self.started}
        self.watcher.functions.clear()  # they hold the calls' objects
        _write(path, data)


def _end_with(parent: int) -> None:
    """End the program, and every process it started (even those that left its session), when
    jaxlint ends: on the parent-death signal (Linux; SIGHUP, whose default ends the program too),
    and on every platform when a thread sees the parent gone."""
    from jaxlint.processes import descendants, kill_all, set_parent_death_signal, watch_parent

    def on_parent_death(signum: int, frame: Any) -> None:
        kill_all(descendants(os.getpid()))
        os.kill(os.getpid(), signal.SIGKILL)

    signal.signal(signal.SIGHUP, on_parent_death)
    set_parent_death_signal(signal.SIGHUP)
    watch_parent(parent)


def _run_path(script: str, args: list[str], watching: _Watching) -> None:
    """As ``python SCRIPT``: the script's folder first on ``sys.path``, its code run as ``__main__``
    (compiled with the watcher's call when it is a project file: no import hook sees a script)."""
    from jaxlint import read_digests
    from jaxlint.drivers.watched_imports import compile_with_call

    path = os.path.abspath(script)
    sys.argv = [script, *args]
    sys.path[0] = os.path.dirname(path)
    with open(path, "rb") as handle:
        source = handle.read()
    if watching.imports is not None and path in watching.files:
        read_digests.note(watching.imports.read, path, source)
        code = compile_with_call(source, path)
    else:
        code = compile(source, path, "exec", dont_inherit=True)
    module = _main_module(path, None)
    exec(code, module.__dict__)


def _run_module(name: str, args: list[str]) -> None:
    """As ``python -m NAME``: the current folder first on ``sys.path``, the module (a package's
    ``__main__``) found through the import system, so the watcher's finder compiles it."""
    sys.argv = ["-m", *args]
    sys.path[0] = os.getcwd()
    spec = importlib.util.find_spec(name)
    if spec is not None and spec.submodule_search_locations is not None:
        spec = importlib.util.find_spec(f"{name}.__main__")
    if spec is None or spec.loader is None or not hasattr(spec.loader, "get_code"):
        raise SystemExit(f"{sys.executable}: No module named {name}")
    code = spec.loader.get_code(spec.name)
    if code is None:
        raise SystemExit(f"{sys.executable}: No code object available for {name}")
    sys.argv[0] = spec.origin or name
    exec(code, _main_module(spec.origin, spec).__dict__)


def _main_module(path: str | None, spec: Any) -> types.ModuleType:
    """A fresh ``__main__`` in ``sys.modules`` (``if __name__ == "__main__":`` runs; pickle finds
    its classes)."""
    module = types.ModuleType("__main__")
    module.__dict__.update(__file__=path, __builtins__=builtins, __spec__=spec,
                           __loader__=getattr(spec, "loader", None), __package__=getattr(spec, "parent", None))
    sys.modules["__main__"] = module
    return module


def _exit_status(code: Any) -> int:
    """``sys.exit(code)`` as Python exits: None is 0, an int itself, anything else printed, 1."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def _print_traceback() -> None:
    """The traceback as Python prints it, without jaxlint's frames above the program's."""
    kind, error, tb = sys.exc_info()
    own = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
    while tb is not None and tb.tb_frame.f_code.co_filename.startswith(own):
        tb = tb.tb_next
    if error is not None:
        error.__traceback__ = tb  # what the default hook prints
    try:
        sys.excepthook(kind, error, tb)
    except Exception:
        traceback.print_exception(kind, error, tb)
