"""jaxlint: a linter that traces JAX code to jaxprs and reports what XLA will see."""

__version__ = "0.1.0"

# Where the rule docs are published (rules/JXnnn.md, README.md#rules): the output formats link
# to them. A placeholder until the repository is public.
DOCS_URL = "https://github.com/jaxlint/jaxlint/blob/main/"


def __getattr__(name: str) -> object:  # PEP 562: ``jaxlint.example`` loads its module on first use
    if name == "example":
        from jaxlint.examples_api import example

        return example
    if name in ("lint", "lint_with", "assert_clean"):  # jaxlint.api imports JAX: only on use
        from jaxlint import api

        return getattr(api, name)
    raise AttributeError(f"module 'jaxlint' has no attribute {name!r}")
