"""Which targets a file has: the scanner's, the JAX functions the signatures file records and,
with ``infer-arguments``, the module-level JAX functions and methods nothing names and the closures
that module-level factories return (scan/factories.py), and the outer functions whose only JAX
code is in the functions nested in them. Check's scan step and the fixer's re-trace
both ask here, so a fix is verified on exactly the targets check traced, with arguments from the
same sources."""
from __future__ import annotations

import ast
import dataclasses
from typing import NamedTuple

from jaxlint import scan
from jaxlint.config import Config, signatures
from jaxlint.model import Target
from jaxlint.scan.factories import returned_closures
from jaxlint.scan.functions import JaxFunction, functions_named, jax_functions
from jaxlint.scan.index import SourceIndex

# Targets traced only with guessed arguments: module-level JAX functions and methods, a factory's closures.
GUESSED_KINDS = ("inferred", "closure")

class FileTargets(NamedTuple):
    targets: list[Target]
    functions: list[JaxFunction]  # the file's JAX functions (the coverage denominator)
    index: SourceIndex  # built with the scanner's targets, for the source rules


def recorded_keys(config: Config) -> frozenset[str]:
    """Keys of the functions the signatures file holds a signature for (none if it is unusable:
    the worker's recorded-argument source says why, for the targets it would have served)."""
    if not config.signatures:
        return frozenset()
    try:
        functions = signatures.load(config.signatures)
    except signatures.SignaturesError:
        return frozenset()
    return frozenset(key for key, entry in functions.items() if entry["signatures"])


def file_targets(path: str, text: str, config: Config, recorded: frozenset[str],
                 tree: ast.Module | None = None) -> FileTargets:
    """The targets of ``text`` (the text of ``path``), in source order for the scanner's, then the
    recorded and the inferred ones. ``recorded``: ``recorded_keys(config)``; ``tree``: the text
    already parsed. Raises scan.ScanSyntaxError."""
    targets = scan.scan_source(path, text, tree)
    index = SourceIndex(path, text, targets)
    functions = jax_functions(index)
    if recorded:  # a plain JAX function `jaxlint record` saw the tests call
        firsts = {target.first_line for target in targets}
        targets = targets + [dataclasses.replace(f.target(), kind="recorded") for f in functions
                             if f.first_line not in firsts
                             and signatures.function_key(path, config.root, f.qualname) in recorded]
    if config.infer_arguments:  # JAX functions and methods nothing names: traced with guessed arguments
        firsts = {target.first_line for target in targets}
        targets = targets + [f.target() for f in functions if f.inferable() and f.first_line not in firsts]
        targets = targets + _closure_targets(index, functions, firsts)
        targets = targets + _outer_targets(index, functions, {target.first_line for target in targets})
    return FileTargets(targets, functions, index)


def _closure_targets(index: SourceIndex, functions: list[JaxFunction], firsts: set[int]) -> list[Target]:
    """The JAX functions a module-level factory returns (``make.<locals>.update_fn``): traced as
    the factory makes them (worker/closures.py)."""
    returned = returned_closures(index)
    found = []
    for function in functions:
        factory, _, name = function.qualname.partition(".<locals>.")
        if name in returned.get(factory, ()) and function.first_line not in firsts:
            found.append(dataclasses.replace(function.target(), kind="closure"))
    return found


def _outer_targets(index: SourceIndex, functions: list[JaxFunction], firsts: set[int]) -> list[Target]:
    """The module-level functions and methods that are not JAX functions but define one (numpyro's
    ``cdf``, whose body only defines ``@jax.custom_jvp def f`` and calls it): tried as a JAX
    function would be, so that their nested functions run under the trace; a module-level factory
    through the closures it returns (any of them: those that are JAX functions already are
    targets). The outer function is no JAX function: it is never counted, only the nested ones
    whose own lines make operations (report/coverage.py says nothing of its skips)."""
    jax_names = {function.qualname for function in functions}
    holders = {f.qualname.partition(".<locals>.")[0] for f in functions if "<locals>" in f.qualname} - jax_names
    if not holders:
        return []
    returned = returned_closures(index)
    returns = {f"{holder}.<locals>.{name}" for holder in holders for name in returned.get(holder, ())} - jax_names
    records = {record.qualname: record for record in functions_named(index, holders | returns)}
    found = []
    for holder in sorted(holders, key=lambda name: records[name].first_line if name in records else 0):
        record = records.get(holder)
        if record is None or not record.inferable() or record.first_line in firsts:
            continue
        if holder not in returned:
            found.append(record.target())
            continue
        found += [dataclasses.replace(closure.target(), kind="closure") for name in sorted(returned[holder])
                  if (closure := records.get(f"{holder}.<locals>.{name}")) is not None
                  and closure.first_line not in firsts]
    return found
