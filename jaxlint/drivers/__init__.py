"""The in-process drivers: jaxlint's analysis run inside the process that runs the user's code.

- ``pytest --jaxlint``: watching the calls the tests make (``watched_calls.py``, ``watched_imports.py``,
  ``placement.py``), tracing them afterwards (``lint.py``), JAX's run-time events per test
  (``runtime.py``, ``syncs.py``, ``loops.py``); its pytest hooks are ``jaxlint/pytest_plugin/``.
- ``jaxlint run``'s program process (``program_run.py``), which watches as the plugin does.
- ``jaxlint record``'s recorder (``recorder.py``), started by ``pytest_plugin/recording.py``.
- ``results.py``: what the plugin and ``jaxlint run`` report from (merging, settling, the
  summary); neither pytest nor JAX, so the command line imports it too.

Importing this package loads nothing.
"""
