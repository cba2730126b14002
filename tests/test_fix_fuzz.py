"""Differential testing of the fixer on generated programs (strategies in fix_programs.py).

Each example is a folder of one to three generated modules, checked with every fixable rule and
``--fix --unsafe-fixes``. For every module: the fixed file parses; its comments, line endings and
BOM are those of the original; a second ``--fix`` changes nothing; each entry function returns
the same values before and after on random inputs (three seeds, compared here, independently of
the fixer's own check); a fragment whose fix must be applied was fixed, and one whose fix would
change what it computes (a loop that changes what a hoisted lambda reads) is left as written.

Bounded for CI (derandomized, FUZZ_EXAMPLES folders). More, with a fresh seed each run:
``JAXLINT_FUZZ_EXAMPLES=200 pytest tests/test_fix_fuzz.py --hypothesis-show-statistics``; the
statistics count the programs by rule, variant and outcome.
"""
from __future__ import annotations

import ast
import importlib.util
import io
import itertools
import os
import sys
import tempfile
import tokenize
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from fix_programs import Program, programs
from helpers import check_in_process
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from jaxlint.config.selection import select_rules

FIXABLE = ["JX101", "JX203", "JX204", "JX303", "JX304", "JX501"]
EXAMPLES = int(os.environ.get("JAXLINT_FUZZ_EXAMPLES", "0"))
FUZZ_EXAMPLES = 12  # in CI: about a minute
_module_names = itertools.count()


def comments(text: str) -> list[str]:
    return [t.string for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.type == tokenize.COMMENT]


def line_endings(data: bytes) -> set[bytes]:
    return {b"\r\n" if line.endswith(b"\r\n") else b"\n" for line in data.splitlines(keepends=True)
            if line.endswith(b"\n")}


def load(path: Path) -> ModuleType:
    """Import ``path`` under a fresh name (the original and the fixed text side by side)."""
    name = f"jaxlint_fuzz_{next(_module_names)}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[name]
    return module


def outputs(module: ModuleType, name: str, shapes: tuple[tuple[int, ...], ...], seed: int) -> list[np.ndarray]:
    import jax

    rng = np.random.default_rng(seed)
    args = [rng.normal(size=s).astype(np.float32) for s in shapes]
    return [np.asarray(leaf) for leaf in jax.tree_util.tree_leaves(getattr(module, name)(*args))]


def assert_same_values(before: ModuleType, after: ModuleType, program: Program) -> None:
    for fragment in program.fragments:
        for entry in fragment.entries:
            for seed in range(3):
                try:
                    old = outputs(before, entry.name, entry.shapes, seed)
                except Exception:  # noqa: BLE001 (JX204's original raises: its fix makes it run)
                    event(f"{fragment.code} {fragment.variant}: the original raises")
                    break
                new = outputs(after, entry.name, entry.shapes, seed)
                assert [(o.shape, o.dtype) for o in old] == [(n.shape, n.dtype) for n in new], entry.name
                for o, n in zip(old, new):
                    np.testing.assert_allclose(n, o, rtol=1e-5, atol=1e-6, equal_nan=True,
                                               err_msg=f"{fragment.code} {fragment.variant}: {entry.name}")


def fragment_text_kept(fixed: str, fragment_text: str) -> bool:
    return fragment_text.rstrip("\n") in fixed.replace("\r\n", "\n")


def run_batch(batch: list[Program], folder: Path) -> None:
    rules = select_rules(FIXABLE, None)
    paths, originals = [], []
    for number, program in enumerate(batch):
        path = folder / f"generated_{number}.py"
        path.write_bytes(program.text.encode())
        paths.append(path)
        originals.append(folder / "originals" / path.name)
        originals[-1].parent.mkdir(exist_ok=True)
        originals[-1].write_bytes(program.text.encode())
    result = check_in_process([str(p) for p in paths], rules, fix=True, unsafe_fixes=True)
    fixed_codes = {}
    for finding in result.fixed:
        fixed_codes.setdefault(finding.path, []).append(finding.code)

    for path, original, program in zip(paths, originals, batch):
        data, before = path.read_bytes(), original.read_bytes()
        text = data.decode()
        ast.parse(text.lstrip("\ufeff"))  # the fixed file parses
        assert data.startswith(b"\xef\xbb\xbf") == before.startswith(b"\xef\xbb\xbf"), "BOM"
        assert line_endings(data) <= line_endings(before), "line endings"
        assert comments(text.lstrip("\ufeff")) == comments(program.text.lstrip("\ufeff")), "comments"
        codes = fixed_codes.get(str(path), [])
        for fragment in program.fragments:
            kept = fragment_text_kept(text, fragment.text)
            outcome = "kept" if kept else "fixed"
            event(f"{fragment.code} {fragment.variant}: {outcome}")
            if fragment.expect == "kept":
                assert kept, f"{fragment.code} {fragment.variant} was changed:\n{text}"
            elif fragment.expect == "fixed":
                assert fragment.code in codes and not kept, f"{fragment.code} {fragment.variant} not fixed:\n{text}"
        if text != before.decode():
            assert_same_values(load(original), load(path), program)

    # A second run finds nothing more to fix.
    texts = [p.read_bytes() for p in paths]
    again = check_in_process([str(p) for p in paths], rules, fix=True, unsafe_fixes=True)
    assert [p.read_bytes() for p in paths] == texts
    assert not again.fixed, [(f.code, f.span) for f in again.fixed]
    event(f"programs per example: {len(batch)}")


@pytest.mark.slow
@settings(max_examples=EXAMPLES or FUZZ_EXAMPLES, derandomize=not EXAMPLES, deadline=None,
          suppress_health_check=list(HealthCheck), print_blob=True)
@pytest.mark.slow
@given(batch=st.lists(programs(), min_size=1, max_size=3))
def test_fixes_of_generated_programs_keep_values_text_and_are_idempotent(batch: list[Program]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        run_batch(batch, Path(folder))
