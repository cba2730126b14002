"""jaxlint: a linter that traces JAX code to jaxprs and reports what XLA will see."""

__version__ = "0.1.0"
