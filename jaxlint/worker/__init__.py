"""The worker process: user code only ever runs here. It imports a module (process), finds
abstract arguments (argsources), traces the targets and runs the rules (analyze, trace). Also
tracing in the caller's process (inprocess, for jaxlint.lint and pytest --jaxlint) and reading
calls from frames (frames, for the recorders and the pytest plugins).

Importing this package must not import JAX: the parent process imports its plain modules."""
