"""What jaxlint is: its version and where its documentation lives."""

__version__ = "0.1.0"

# Where the rule docs are published (rules/JXnnn.md, README.md#rules): the output formats link
# to them. A placeholder until the repository is public.
DOCS_URL = "https://github.com/jaxlint/jaxlint/blob/main/"
