"""The command line (parent process): argument parsing and the commands check, rule(s),
record and explain. `jaxlint` runs ``jaxlint.cli.main:entry``."""
