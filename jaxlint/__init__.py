"""jaxlint: a linter that traces JAX code to jaxprs and reports what XLA will see."""

from jaxlint.about import DOCS_URL, __version__

__all__ = ["DOCS_URL", "__version__", "assert_clean", "example", "lint", "lint_with"]


def __getattr__(name: str) -> object:  # PEP 562: ``jaxlint.example`` loads its module on first use
    if name == "example":
        from jaxlint.worker.examples_api import example

        return example
    if name in ("lint", "lint_with", "assert_clean"):  # jaxlint.api imports JAX: only on use
        from jaxlint import api

        return getattr(api, name)
    raise AttributeError(f"module 'jaxlint' has no attribute {name!r}")
