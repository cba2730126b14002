"""`jaxlint record [--output PATH] [--config FILE] [--isolated] [PATHS...] -- COMMAND...`: run
COMMAND (normally pytest) with the recording plugin (pytest_plugin/record.py) active; exit with COMMAND's
exit code. The configuration is found as ``jaxlint check`` finds it; its folder holds the signatures
file and its exclude/extend-exclude settings choose the files whose functions are recorded."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from typing import Callable

from jaxlint.config import Config, ConfigError, load_config
from jaxlint.processes import set_parent_death_signal
from jaxlint.pytest_plugin.record import ENV

MAX_REASONS = 10  # unrecorded functions listed in the summary, each with why
USAGE = "jaxlint record [--output PATH] [--config FILE] [--isolated] [PATHS...] -- COMMAND..."


def record(paths: list[str], output: str | None, command: list[str],
           config_options: list[str] | None = None, isolated: bool = False) -> int:
    """Run ``command`` with ``JAXLINT_RECORD`` and ``-p jaxlint.pytest_plugin.record`` in its environment.
    ``config_options``: the ``--config`` values (a file, or ``KEY = VALUE`` lines), as for check.
    Raises ConfigError."""
    if not command:
        print(f"jaxlint: record needs a command after '--', e.g. {USAGE.split(' -- ')[0]} -- pytest tests/",
              file=sys.stderr)
        return 2
    missing = [p for p in paths if not os.path.exists(p)]
    if missing:
        print(f"jaxlint: no such file or folder: {missing[0]}", file=sys.stderr)
        return 2
    config = _load(paths, config_options or [], isolated)
    output = os.path.abspath(output) if output else config.signatures
    from jaxlint.scan.discover import discover

    # Discovered here, with the configuration (exclude, extend-exclude, force-exclude, gitignore),
    # so the plugin scans exactly what `jaxlint check` would; a file, as a long list would not fit
    # in an environment variable.
    scanned = discover(paths or [_default_path(config)], config)
    handle, files = tempfile.mkstemp(prefix="jaxlint-record-files-", suffix=".json")
    with os.fdopen(handle, "w", encoding="utf-8") as listing:
        json.dump(scanned, listing)
    handle, report = tempfile.mkstemp(prefix="jaxlint-record-", suffix=".json")
    os.close(handle)
    os.unlink(report)  # the plugin creates it: its absence means the plugin never ran
    env = dict(os.environ)
    env[ENV] = json.dumps({"output": output, "root": config.root, "report": report, "files": files,
                           "parent": os.getpid()})
    env["PYTEST_ADDOPTS"] = " ".join(filter(None, [env.get("PYTEST_ADDOPTS"), "-p jaxlint.pytest_plugin.record"]))
    try:
        status = _run(command, env)
        _summary(report, output)
    finally:
        for path in (report, files):
            if os.path.exists(path):
                os.unlink(path)
    return status


def _load(paths: list[str], config_options: list[str], isolated: bool) -> Config:
    """``--config`` and ``--isolated`` as ``jaxlint check`` reads them (config_cli.resolve)."""
    from jaxlint.config.keys import parse_snippet

    files = [value for value in config_options if os.path.isfile(value) or "=" not in value]
    if len(files) > 1:
        raise ConfigError(f"--config: one configuration file at most, got {', '.join(files)}")
    if files and isolated:
        raise ConfigError("--config FILE and --isolated are exclusive (--isolated ignores all files)")
    snippets = [parse_snippet(value, os.getcwd()) for value in config_options if value not in files]
    return load_config(paths, files[0] if files else None, isolated, snippets)


def _default_path(config: Config) -> str:
    """No paths: the project root, unless the current directory lies outside it (a configuration
    given with --config that lives elsewhere): then the current directory, as check would read."""
    cwd = os.getcwd()
    inside = os.path.commonpath([os.path.realpath(cwd), os.path.realpath(config.root)])
    return config.root if inside == os.path.realpath(config.root) else cwd


def _run(command: list[str], env: dict[str, str]) -> int:
    try:
        # In this process's group, so a terminal's Ctrl-C reaches it as before; it ends with this
        # process (the parent-death signal here, the plugin's watch of ``parent`` everywhere).
        process = subprocess.Popen(command, env=env, preexec_fn=_end_with(os.getpid()))
    except OSError as error:
        print(f"jaxlint: cannot run {command[0]}: {error.strerror or error}", file=sys.stderr)
        return 127  # as a shell reports a command it cannot run
    try:
        return process.wait()
    except KeyboardInterrupt:  # the command got the Ctrl-C too: let pytest save and finish
        return process.wait()


def _end_with(parent: int) -> Callable[[], None]:
    """For the command's process, before it runs: SIGTERM when ``parent`` (jaxlint) ends (Linux)."""

    def before_exec() -> None:
        if set_parent_death_signal(signal.SIGTERM) and os.getppid() != parent:  # gone already
            os.kill(os.getpid(), signal.SIGTERM)

    return before_exec


def _summary(report: str, output: str) -> None:
    try:
        with open(report, encoding="utf-8") as handle:
            counts = json.load(handle)
    except (OSError, ValueError):
        print("jaxlint: nothing recorded: the command did not run pytest with the recording plugin "
              "(is it a pytest run in an environment where jaxlint is installed?)", file=sys.stderr)
        return
    shown = os.path.relpath(output) if not os.path.relpath(output).startswith("..") else output
    functions = "function" if counts["recorded"] == 1 else "functions"
    extra = f"; {counts['unrecordable']} called with arguments it cannot record" if counts["unrecordable"] else ""
    print(f"jaxlint: recorded {counts['recorded']} {functions} into {shown}{extra}", file=sys.stderr)
    reasons = sorted(counts.get("reasons", {}).items())
    for key, reason in reasons[:MAX_REASONS]:
        print(f"  not recorded: {key}: {reason}", file=sys.stderr)
    if len(reasons) > MAX_REASONS:
        print(f"  ... and {len(reasons) - MAX_REASONS} more (the signatures file lists each, as \"unrecordable\")",
              file=sys.stderr)
    if reasons:
        print("  (`pytest --jaxlint` lints calls whatever their arguments: methods, objects, functions)",
              file=sys.stderr)
