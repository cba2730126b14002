"""`jaxlint record [--output PATH] [PATHS...] -- COMMAND...`: run COMMAND (normally pytest) with
the recording plugin (pytest_plugin.py) active; exit with COMMAND's exit code."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

from jaxlint.config import load_config
from jaxlint.pytest_plugin import ENV

USAGE = "jaxlint record [--output PATH] [PATHS...] -- COMMAND..."


def record(paths: list[str], output: str | None, command: list[str]) -> int:
    """Run ``command`` with ``JAXLINT_RECORD`` and ``-p jaxlint.pytest_plugin`` in its environment."""
    if not command:
        print(f"jaxlint: record needs a command after '--', e.g. {USAGE.split(' -- ')[0]} -- pytest tests/",
              file=sys.stderr)
        return 2
    missing = [p for p in paths if not os.path.exists(p)]
    if missing:
        print(f"jaxlint: no such file or folder: {missing[0]}", file=sys.stderr)
        return 2
    config = load_config(paths)  # ConfigError is reported by the caller
    output = os.path.abspath(output) if output else config.signatures
    handle, report = tempfile.mkstemp(prefix="jaxlint-record-", suffix=".json")
    os.close(handle)
    os.unlink(report)  # the plugin creates it: its absence means the plugin never ran
    env = dict(os.environ)
    env[ENV] = json.dumps({"output": output, "root": config.root, "report": report,
                           "paths": [os.path.abspath(p) for p in paths or [config.root]]})
    env["PYTEST_ADDOPTS"] = " ".join(filter(None, [env.get("PYTEST_ADDOPTS"), "-p jaxlint.pytest_plugin"]))
    try:
        status = _run(command, env)
        _summary(report, output)
    finally:
        if os.path.exists(report):
            os.unlink(report)
    return status


def _run(command: list[str], env: dict[str, str]) -> int:
    try:
        process = subprocess.Popen(command, env=env)
    except OSError as error:
        print(f"jaxlint: cannot run {command[0]}: {error.strerror or error}", file=sys.stderr)
        return 127  # as a shell reports a command it cannot run
    try:
        return process.wait()
    except KeyboardInterrupt:  # the command got the Ctrl-C too: let pytest save and finish
        return process.wait()


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
