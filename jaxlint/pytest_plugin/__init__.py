"""jaxlint's pytest plugins: the hooks, over the in-process drivers of ``jaxlint/drivers/``.

- ``hooks.py`` (registered through the ``pytest11`` entry point, so installing jaxlint is enough):
  the ``--jaxlint`` options; with ``--jaxlint`` it registers ``session.py``, the run's hooks
  (watch the calls while the tests run, lint them when they are done, report).
- ``recording.py``: the plugin ``jaxlint record`` loads with ``-p`` to save signatures.

Importing this package loads nothing: pytest imports ``hooks`` in every run of every project.
"""
