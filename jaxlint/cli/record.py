"""`jaxlint record [--output PATH] [--config FILE] [--isolated] [PATHS...] -- COMMAND...`: run
COMMAND (normally pytest) with the recording plugin (pytest_plugin/recording.py, over
drivers/recorder.py) active, then merge what each test process recorded (one part file per
pytest-xdist worker) into the signatures file; exit with COMMAND's exit code, or 2 when the
signatures file cannot be read or written (it is then left as it was). The configuration is found
as ``jaxlint check`` finds it; its folder holds the signatures file and its exclude/extend-exclude
settings choose the files whose functions are recorded. (pytest_plugin/recording.py is the plugin
this command loads; this module is the command.)"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from typing import Any, Callable

from jaxlint.config import Config, ConfigError, load_config
from jaxlint.drivers.recorder import ENV, MAX_SIGNATURES
from jaxlint.processes import set_parent_death_signal

MAX_REASONS = 10  # unrecorded functions listed in the summary, each with why
USAGE = "jaxlint record [--output PATH] [--config FILE] [--isolated] [PATHS...] -- COMMAND..."


def record(paths: list[str], output: str | None, command: list[str],
           config_options: list[str] | None = None, isolated: bool = False) -> int:
    """Run ``command`` with ``JAXLINT_RECORD`` and ``-p jaxlint.pytest_plugin.recording`` in its environment.
    ``config_options``: the ``--config`` values (a file, or ``KEY = VALUE`` lines), as for check.
    Raises ConfigError."""
    if not command:
        print(f"jaxlint: record needs a command after '--', e.g. {USAGE.split(' -- ')[0]} -- pytest tests/",
              file=sys.stderr)
        return 2
    missing = [p for p in paths if not os.path.exists(p)]
    for path in missing:  # the others are still recorded, as check goes on past a missing path
        print(f"jaxlint: warning: no such file or folder: {path}", file=sys.stderr)
    if paths and len(missing) == len(paths):
        print("jaxlint: none of the paths given exists, so nothing would be recorded", file=sys.stderr)
        return 2
    paths = [p for p in paths if p not in missing]
    config = load_options(paths, config_options or [], isolated)
    output = os.path.abspath(output) if output else config.signatures
    from jaxlint.config import signatures
    from jaxlint.scan.discover import discover

    try:  # checked before the tests run: a file jaxlint cannot read is never replaced
        signatures.load(output)
    except signatures.SignaturesError as error:
        print(f"jaxlint: {error}; fix or remove it, or record into another file with --output",
              file=sys.stderr)
        return 2
    # Discovered here, with the configuration (exclude, extend-exclude, force-exclude, gitignore),
    # so the plugin scans exactly what `jaxlint check` would; a file, as a long list would not fit
    # in an environment variable.
    scanned = discover(paths or [_default_path(config)], config)
    handle, files = tempfile.mkstemp(prefix="jaxlint-record-files-", suffix=".json")
    with os.fdopen(handle, "w", encoding="utf-8") as listing:
        json.dump(scanned, listing)
    parts = tempfile.mkdtemp(prefix="jaxlint-record-parts-")
    env = dict(os.environ)
    env[ENV] = json.dumps({"root": config.root, "files": files, "parts": parts, "parent": os.getpid()})
    env["PYTEST_ADDOPTS"] = " ".join(filter(None, [env.get("PYTEST_ADDOPTS"), "-p jaxlint.pytest_plugin.recording"]))
    try:
        status = run_command(command, env)
        saved = _save(parts, output, config.root)
    finally:
        os.unlink(files)
        shutil.rmtree(parts, ignore_errors=True)
    return status if saved else 2


def load_options(paths: list[str], config_options: list[str], isolated: bool) -> Config:
    """``--config`` and ``--isolated`` as ``jaxlint check`` reads them (config_cli.resolve), for
    record and run. Raises ConfigError."""
    from jaxlint.config.keys import parse_snippet

    files = config_files(config_options)
    if len(files) > 1:
        raise ConfigError(f"--config: one configuration file at most, got {', '.join(files)}")
    if files and isolated:
        raise ConfigError("--config FILE and --isolated are exclusive (--isolated ignores all files)")
    snippets = [parse_snippet(value, os.getcwd()) for value in config_options if value not in files]
    return load_config(paths, files[0] if files else None, isolated, snippets)


def config_files(config_options: list[str]) -> list[str]:
    """The ``--config`` values that name a file (the others are ``KEY = VALUE`` lines)."""
    return [value for value in config_options if os.path.isfile(value) or "=" not in value]


def _default_path(config: Config) -> str:
    """No paths: the project root, unless the current directory lies outside it (a configuration
    given with --config that lives elsewhere): then the current directory, as check would read."""
    cwd = os.getcwd()
    inside = os.path.commonpath([os.path.realpath(cwd), os.path.realpath(config.root)])
    return config.root if inside == os.path.realpath(config.root) else cwd


def run_command(command: list[str], env: dict[str, str]) -> int:
    """Run ``command`` to its end, tied to this process (record's test run, run's program); its exit
    status, 127 when it cannot be started, 128 + N when signal N ended it."""
    try:
        # In this process's group, so a terminal's Ctrl-C reaches it as before; it ends with this
        # process (the parent-death signal here, the plugin's watch of ``parent`` everywhere).
        process = subprocess.Popen(command, env=env, preexec_fn=_end_with(os.getpid()))
    except OSError as error:
        print(f"jaxlint: cannot run {command[0]}: {error.strerror or error}", file=sys.stderr)
        return 127  # as a shell reports a command it cannot run
    try:
        status = process.wait()
    except KeyboardInterrupt:  # the command got the Ctrl-C too: let it save and finish
        status = process.wait()
    return 128 - status if status < 0 else status  # as a shell reports a command a signal ended


def _end_with(parent: int) -> Callable[[], None]:
    """For the command's process, before it runs: SIGTERM when ``parent`` (jaxlint) ends (Linux)."""

    def before_exec() -> None:
        if set_parent_death_signal(signal.SIGTERM) and os.getppid() != parent:  # gone already
            os.kill(os.getpid(), signal.SIGTERM)

    return before_exec


def _save(parts: str, output: str, root: str) -> bool:
    """Merge the test processes' part files (one per pytest-xdist worker, or the one pytest
    process) into the signatures file and print the summary; False when the file could not be
    written (it is then left as it was)."""
    from jaxlint.config import signatures

    found = sorted(name for name in os.listdir(parts) if name.endswith(".json"))
    if not found:
        print("jaxlint: nothing recorded: the command did not run pytest with the recording plugin "
              "(is it a pytest run in an environment where jaxlint is installed?)", file=sys.stderr)
        return True
    recorded = []
    for name in found:
        try:
            with open(os.path.join(parts, name), encoding="utf-8") as handle:
                recorded.append(json.load(handle)["functions"])
        except (OSError, ValueError, KeyError, TypeError) as error:
            print(f"jaxlint: a test process's record is unreadable ({error}); its calls are not saved",
                  file=sys.stderr)
    called = signatures.combine(recorded, MAX_SIGNATURES)
    try:
        signatures.write(output, signatures.merge(signatures.load(output), called, root))
    except signatures.SignaturesError as error:
        print(f"jaxlint: {error}; nothing written", file=sys.stderr)
        return False
    except OSError as error:
        print(f"jaxlint: cannot write {output}: {error}", file=sys.stderr)
        return False
    _summary(called, output)
    return True


def _summary(called: dict[str, dict[str, Any]], output: str) -> None:
    recorded = sum(1 for entry in called.values() if entry["signatures"])
    reasons = sorted((key, entry.get("unrecordable", "no call returned a value"))
                     for key, entry in called.items() if not entry["signatures"])
    shown = os.path.relpath(output) if not os.path.relpath(output).startswith("..") else output
    functions = "function" if recorded == 1 else "functions"
    extra = f"; {len(reasons)} called with arguments it cannot record" if reasons else ""
    print(f"jaxlint: recorded {recorded} {functions} into {shown}{extra}", file=sys.stderr)
    for key, reason in reasons[:MAX_REASONS]:
        print(f"  not recorded: {key}: {reason}", file=sys.stderr)
    if len(reasons) > MAX_REASONS:
        print(f"  ... and {len(reasons) - MAX_REASONS} more (the signatures file lists each, as \"unrecordable\")",
              file=sys.stderr)
    if reasons:
        print("  (`pytest --jaxlint` lints calls whatever their arguments: methods, objects, functions)",
              file=sys.stderr)
