"""The signatures file, ``<root>/.jaxlint/signatures.json``: written by ``jaxlint record``, read
by the "recorded" argument source.

It is meant to be committed, so the text is stable and diff-friendly: functions sorted by key, one
signature per line, parameters in their declared order, a trailing newline::

    {
      "version": 1,
      "functions": {
        "pkg/mod.py::Model.apply": {
          "params": ["self", "x"],
          "signatures": [],
          "unrecordable": "argument self: <Model object>"
        },
        "pkg/mod.py::step": {
          "params": ["x", "k"],
          "signatures": [
            {"x": "f32[4,3]", "k": "3"},
            {"x": "f32[8,3]", "k": "3"}
          ]
        }
      }
    }

Keys are ``<path relative to the config root, POSIX separators>::<qualname>``; values are hint
text (``hints.parse_hint`` reads them back). Pure Python: never imports jax.
"""
from __future__ import annotations

import json
import os
from typing import Any

from jaxlint.text import write_text_atomic

VERSION = 1


class SignaturesError(ValueError):
    """The file exists but is not a signatures file jaxlint can read."""


def function_key(path: str, root: str, qualname: str) -> str:
    """``pkg/mod.py::Cls.meth`` for a file under ``root``."""
    rel = os.path.relpath(os.path.abspath(path), os.path.abspath(root))
    if rel.startswith(os.pardir):  # e.g. root reached through a symlink
        rel = os.path.relpath(os.path.realpath(path), os.path.realpath(root))
    return rel.replace(os.sep, "/") + "::" + qualname


def load(path: str) -> dict[str, dict[str, Any]]:
    """Function key -> entry; {} when the file does not exist. Raises SignaturesError."""
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as error:
        raise SignaturesError(f"cannot read {path}: {error}") from None
    if not isinstance(data, dict) or data.get("version") != VERSION:
        raise SignaturesError(f"{path} is not a version {VERSION} signatures file")
    functions = data.get("functions")
    if not isinstance(functions, dict) or not all(_valid(e) for e in functions.values()):
        raise SignaturesError(f"{path} has a malformed \"functions\" table")
    return functions


def _valid(entry: Any) -> bool:
    return (isinstance(entry, dict) and isinstance(entry.get("params"), list)
            and isinstance(entry.get("signatures"), list)
            and all(isinstance(s, dict) and all(isinstance(v, str) for v in s.values())
                    for s in entry["signatures"]))


def dumps(functions: dict[str, dict[str, Any]]) -> str:
    """The file's text: sorted functions, one signature per line, keys in parameter order."""
    def text(value: Any) -> str:
        return json.dumps(value, separators=(", ", ": "))

    lines = ["{", f'  "version": {VERSION},', '  "functions": {']
    for n, key in enumerate(sorted(functions)):
        entry = functions[key]
        fields = [f'      "params": {text(entry["params"])}']
        signatures = [f"        {text(s)}" for s in entry["signatures"]]
        fields.append('      "signatures": ' + ("[\n" + ",\n".join(signatures) + "\n      ]"
                                                if signatures else "[]"))
        if entry.get("unrecordable"):
            fields.append(f'      "unrecordable": {text(entry["unrecordable"])}')
        comma = "," if n < len(functions) - 1 else ""
        lines += [f"    {text(key)}: {{", ",\n".join(fields), f"    }}{comma}"]
    lines += ["  }", "}"]
    return "\n".join(lines) + "\n"


def combine(parts: list[dict[str, dict[str, Any]]], limit: int) -> dict[str, dict[str, Any]]:
    """The entries several test processes recorded (pytest-xdist workers), as one process would
    have: each function's distinct signatures in part order, at most ``limit``; the first reason
    a call was not recorded."""
    combined: dict[str, dict[str, Any]] = {}
    for part in parts:
        for key, entry in part.items():
            into = combined.setdefault(key, {"params": list(entry["params"]), "signatures": []})
            for signature in entry["signatures"]:
                if signature not in into["signatures"] and len(into["signatures"]) < limit:
                    into["signatures"].append(signature)
            if entry.get("unrecordable") and not into.get("unrecordable"):
                into["unrecordable"] = entry["unrecordable"]
    return combined


def merge(old: dict[str, dict[str, Any]], new: dict[str, dict[str, Any]],
          root: str) -> dict[str, dict[str, Any]]:
    """An entry of ``new`` with signatures replaces the old one; one without (its calls raised,
    or took arguments a hint cannot write) keeps the old signatures, so a run never loses a
    signature it did not replace. Old entries of files that no longer exist are dropped."""
    kept = {key: entry for key, entry in old.items()
            if os.path.isfile(os.path.join(root, key.partition("::")[0]))}
    merged = dict(kept)
    for key, entry in new.items():
        if entry["signatures"] or not kept.get(key, {}).get("signatures"):
            merged[key] = entry
    return merged


def write(path: str, functions: dict[str, dict[str, Any]]) -> None:
    """Write atomically (temporary file + rename): a reader never sees half a file."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    write_text_atomic(path, dumps(functions), prefix=".signatures-")
