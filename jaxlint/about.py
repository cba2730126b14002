"""What jaxlint is: its version and where its documentation lives."""

__version__ = "0.1.0"

# Where the rule docs are published (rules/JXnnn.md): the output formats and the editor server
# link to them. A placeholder until the repository is public.
DOCS_URL = "https://github.com/jaxlint/jaxlint/blob/main/"


# The codes jaxlint reports under ruff's name, with ruff's page: E902 (io-error), a missing path.
RUFF_PAGES = {"E902": "https://docs.astral.sh/ruff/rules/io-error/"}


def rule_url(code: str) -> str:
    """The rule's page in the repository; every rule has one (tests/test_rule_cases.py)."""
    return RUFF_PAGES.get(code) or f"{DOCS_URL}rules/{code}.md"
