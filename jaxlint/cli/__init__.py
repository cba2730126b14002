"""The command line (parent process): argument parsing and the commands check, rule(s), record,
run, explain, clean, mcp and server. `jaxlint` runs ``jaxlint.cli.main:entry``."""
