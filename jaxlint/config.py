"""Configuration: ``[tool.jaxlint]`` in the nearest pyproject.toml (as ruff finds its own)."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]


class ConfigError(Exception):
    """An unreadable or invalid configuration: exit code 2."""


@dataclass
class Config:
    root: str  # the folder of the pyproject.toml, else the current directory
    path: str | None = None  # the pyproject.toml read, if any
    examples: list[str] = field(default_factory=list)  # absolute paths of examples files
    signatures: str = ""  # where recorded signatures live: <root>/.jaxlint/signatures.json

    def for_job(self) -> dict[str, Any]:
        """What a worker needs of the configuration (plain JSON)."""
        return {"root": self.root, "examples": self.examples, "signatures": self.signatures}


def find_pyproject(start: str) -> str | None:
    """The nearest pyproject.toml with a [tool.jaxlint] table, from ``start`` upwards."""
    folder = os.path.abspath(start if os.path.isdir(start) else os.path.dirname(start) or ".")
    while True:
        candidate = os.path.join(folder, "pyproject.toml")
        if os.path.isfile(candidate) and _has_table(candidate):
            return candidate
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def _has_table(path: str) -> bool:
    try:
        with open(path, "rb") as handle:
            return "jaxlint" in tomllib.load(handle).get("tool", {})
    except (OSError, tomllib.TOMLDecodeError):
        return False  # not ours to judge: a broken pyproject without our table is skipped


def load_config(paths: list[str]) -> Config:
    """Configuration for a run over ``paths``, looked up from the first path (else the cwd)."""
    pyproject = find_pyproject(paths[0] if paths else ".")
    if pyproject is None:
        root = os.getcwd()
        return Config(root=root, signatures=os.path.join(root, ".jaxlint", "signatures.json"))
    with open(pyproject, "rb") as handle:
        table = tomllib.load(handle)["tool"]["jaxlint"]
    root = os.path.dirname(pyproject)
    examples = table.get("examples", [])
    if not isinstance(examples, list) or not all(isinstance(e, str) for e in examples):
        raise ConfigError(f"{pyproject}: [tool.jaxlint] examples must be a list of paths")
    resolved = [os.path.normpath(os.path.join(root, e)) for e in examples]
    missing = [e for e in resolved if not os.path.isfile(e)]
    if missing:
        raise ConfigError(f"{pyproject}: examples file not found: {', '.join(missing)}")
    return Config(root=root, path=pyproject, examples=resolved,
                  signatures=os.path.join(root, ".jaxlint", "signatures.json"))
