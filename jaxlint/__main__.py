import sys

from jaxlint.cli.main import entry

sys.exit(entry())
