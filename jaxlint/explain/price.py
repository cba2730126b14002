"""What a finding's fix saves: the fixed source compiled in the worker (in memory, as an override
of the module's source: nothing is written), compared with the original, compiled and eager."""
from __future__ import annotations

from collections import Counter
from typing import Any

from jaxlint.explain import build, hlomap
from jaxlint.explain.classify import times
from jaxlint.explain.target import ExplainError, display, find_target
from jaxlint.ir import hlo
from jaxlint.model import Finding, Settings, Target
from jaxlint.text import SourceFile, apply_edits

_JITTED = ("jit-decorated", "jit-bound")


def price(pool: Any, source: SourceFile, target: Target, finding: Finding, data: dict[str, Any],
          config: Settings, args: str | None, report: dict[str, Any]) -> dict[str, Any]:
    from jaxlint.explain.job import run

    fix = finding.fix
    entry: dict[str, Any] = {
        "code": finding.code, "name": finding.name, "message": finding.message,
        # A finding in a helper's file (the function called it) is located there, not in the explained file.
        "path": finding.path, "display_path": display(finding.path), "line": finding.span.start_line, "column": finding.span.start_col,
        "fix": fix.message if fix is not None else None,
        "applicability": fix.applicability if fix is not None else None,
        "cost_before": build.compiled_figures(data), "cost_after": None, "eager": None, "verdict": ""}
    if fix is None or not fix.edits or fix.applicability == "display-only":
        entry["verdict"] = "no automatic fix to price; " + _shapes_cost(finding)
        return entry
    try:
        fixed_text = apply_edits(source.text, list(fix.edits))
        fixed_target = find_target(source.path, fixed_text, target.qualname, args)
        after = run(pool, source, fixed_target, [], config, "price", override=fixed_text).kind_data
    except (ExplainError, ValueError) as error:
        entry["verdict"] = f"the fixed source could not be compiled to price the fix ({error})"
        return entry
    entry["cost_after"] = build.compiled_figures(after)
    entry["eager"] = {"before": data.get("eager"), "after": after.get("eager")}
    same_hlo = _same_hlo(data.get("hlo_text"), after.get("hlo_text"))
    entry["same_hlo"] = same_hlo
    entry["verdict"] = _verdict(entry, target, same_hlo)
    if finding.code == "JX101":
        _unrelated_to_vmap(report, after.get("hlo_text"), source.path, entry)
    return entry


def _shapes_cost(finding: Finding) -> str:
    cost = finding.cost
    if cost is not None and cost.note:
        return f"check's estimate: {cost.note}"
    return "see the message"


def _signature(text: str | None) -> Counter | None:
    """The instructions of an HLO module, names and metadata aside."""
    if not text:
        return None
    module = hlo.parse(text)
    return Counter((p.instruction.opcode, hlo.plain_shape(p.instruction.shape)) for p in hlomap.place(module))


def _same_hlo(before: str | None, after: str | None) -> bool | None:
    old, new = _signature(before), _signature(after)
    return None if old is None or new is None else old == new


def _delta_words(before: dict[str, Any], after: dict[str, Any]) -> tuple[bool, str]:
    """(nothing changed, what changed) between two compiled figure dicts."""
    keys = [("flops", "FLOPs"), ("bytes_accessed", "bytes accessed"), ("transcendentals", "transcendentals"),
            ("temp_bytes", "bytes of temporaries"), ("output_bytes", "output bytes")]
    changes = []
    for key, noun in keys:
        old, new = before.get(key), after.get(key)
        if old is None or new is None or old == new:
            continue
        verb = "saves" if new < old else "adds"
        changes.append(f"{verb} {abs(old - new):,.0f} {noun} ({old:,.0f} -> {new:,.0f})")
    return not changes, "; ".join(changes)


def _verdict(entry: dict[str, Any], target: Target, same_hlo: bool | None) -> str:
    before, after = entry["cost_before"], entry["cost_after"]
    parts = []
    if before and after:
        unchanged, changes = _delta_words(before, after)
        if unchanged:
            hlo_words = ", same optimized HLO" if same_hlo else ""
            parts.append(f"Under jax.jit the fix changes nothing in compiled cost (same FLOPs, bytes and "
                         f"memory{hlo_words}): it is a clarity fix there.")
        else:
            parts.append(f"Compiled (XLA's figures per call, loop bodies counted once), the fix {changes}.")
    eager = entry["eager"] or {}
    old, new = eager.get("before") or {}, eager.get("after") or {}
    if old.get("ops") is not None and new.get("ops") is not None:
        ops, written = old["ops"] - new["ops"], None
        if old.get("materialized_bytes") is not None and new.get("materialized_bytes") is not None:
            written = old["materialized_bytes"] - new["materialized_bytes"]
        when = ("Called without jax.jit (op by op)" if target.kind in _JITTED
                else "Run op by op (as this function runs unless a caller jits it)")
        if ops == 0 and not written:
            parts.append(f"{when}, it saves nothing either.")
        else:
            saved = [f"{ops} dispatched op{'s' if ops != 1 else ''}" if ops else "",
                     f"{written:,} bytes written to memory" if written else ""]
            gone = list((Counter(old.get("op_list", [])) - Counter(new.get("op_list", []))).elements())
            which = f": no more {', '.join(gone[:4])}{', ...' if len(gone) > 4 else ''}" if gone else ""
            parts.append(f"{when}, it saves {' and '.join(p for p in saved if p)} per call "
                         f"({old['ops']} -> {new['ops']} ops, {old.get('materialized_bytes')} -> "
                         f"{new.get('materialized_bytes')} bytes materialized{which}).")
    return " ".join(parts) or "the fix could not be priced"


def _unrelated_to_vmap(report: dict[str, Any], fixed_hlo: str | None, path: str, priced: dict[str, Any]) -> None:
    """The founding question: a duplicate the JX101 fix keeps is not vmap's doing (compiled here)."""
    if not fixed_hlo:
        return
    module = hlo.parse(fixed_hlo)
    placed = hlomap.place(module)
    kept = Counter((p.instruction.opcode, module.line_in(p.instruction, path)) for p in placed)
    for duplicate in report.get("hlo", {}).get("duplicates", []):
        if duplicate["classification"] != "cheap-fusion-duplication":
            continue
        if kept[(duplicate["opcode"], duplicate["line"])] < duplicate["count"]:
            continue
        same = "to the same optimized HLO" if priced.get("same_hlo") else "to an HLO"
        sentence = (f"It is unrelated to vmap: with the JX101 fix (line {priced['line']}) the function "
                    f"compiles {same}, this {duplicate['opcode']} still {times(duplicate['count'])} "
                    "(compiled in this run).")
        duplicate["explanation"] += " " + sentence
        duplicate["summary"] += " " + sentence
        duplicate["unrelated_to_vmap"] = True
