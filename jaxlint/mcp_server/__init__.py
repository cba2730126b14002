"""``jaxlint mcp``: a Model Context Protocol server over stdio, on the official ``mcp`` SDK (the mcp
extra). Its tools run jaxlint's own command line (``python -m jaxlint check``, ``explain``) in the
project folder, so every decision (configuration, selection, the result cache, the test-run
store, verifying and writing fixes) has the one owner it has for ``jaxlint check``; the rule pages
are read in-process, through what ``jaxlint rule`` reads."""
