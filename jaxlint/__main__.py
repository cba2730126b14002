import sys

from jaxlint.cli import entry

sys.exit(entry())
