"""jaxlint in a pytest run.

- ``hooks.py`` (registered through the ``pytest11`` entry point, so installing jaxlint is enough):
  ``pytest --jaxlint`` lints the project's functions the tests call (``session.py``: the run,
  ``calls.py``: which calls are kept, ``lint.py``: tracing them and running the rules).
- ``record.py``: the plugin ``jaxlint record`` loads with ``-p`` to save signatures.

Importing this package loads nothing: pytest imports ``hooks`` in every run of every project.
"""
