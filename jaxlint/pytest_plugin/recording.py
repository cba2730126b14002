"""The pytest plugin ``jaxlint record`` loads with ``-p jaxlint.pytest_plugin.recording``: it starts
the recorder (``drivers/recorder.py``) at session start and saves what it saw at the end. Inert
unless ``JAXLINT_RECORD`` is set. cli/record.py is the command that loads it."""
from __future__ import annotations

import json
import os
import sys
from typing import Any

from jaxlint.drivers.recorder import ENV, Recorder
from jaxlint.processes import watch_parent

_recorder: Recorder | None = None


def pytest_sessionstart(session: Any) -> None:
    global _recorder
    settings = os.environ.get(ENV)
    if not settings or _recorder is not None:
        return
    try:
        parsed = json.loads(settings)
        if isinstance(parsed, dict) and isinstance(parsed.get("parent"), int):
            watch_parent(parsed["parent"])  # the xdist controller too: it holds the workers
        if session.config.pluginmanager.hasplugin("dsession"):
            return  # the pytest-xdist controller: its workers run the tests
        _recorder = Recorder.from_settings(parsed, list(session.config.getini("python_files")))
    except (ValueError, KeyError, TypeError, OSError) as error:  # set by hand, or a path gone
        print(f"jaxlint: not recording, {ENV} is unusable: {error!r}", file=sys.stderr)
        return
    _recorder.start()


def pytest_sessionfinish(session: Any, exitstatus: int) -> None:
    global _recorder
    if _recorder is None:
        return
    recorder, _recorder = _recorder, None
    recorder.stop()
    recorder.save()

