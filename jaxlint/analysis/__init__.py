"""The analysis core the drivers share: what the rules find on one traced program (program.py).
The worker calls it for the modules it imports, ``jaxlint.lint`` and ``pytest --jaxlint`` for the
functions they trace in their own process. It imports the IR, the rules and the source index,
never a driver (worker, engine, cli, pytest plugin, server)."""
