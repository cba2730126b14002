"""The worker process: user code only ever runs here. It imports a module (process), finds
abstract arguments (argsources), traces the targets and runs the rules (analyze, trace). Also
the in-test instrumentation: the pytest plugin behind `jaxlint record`.

Importing this package must not import JAX: the parent process imports its plain modules."""
