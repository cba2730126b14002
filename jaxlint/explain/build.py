"""The explain report (schema_version 1), built in the jaxlint process from the worker's data.
(ir/build.py builds the IR the rules read; this builds explain's report.)"""
from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from jaxlint.explain import chip, classify, communication, hlomap
from jaxlint.explain.target import display
from jaxlint.ir import hlo
from jaxlint.model import Finding, Result, Target

SCHEMA_VERSION = 1
_MEMORY_KEYS = ("argument_bytes", "output_bytes", "temp_bytes", "alias_bytes")


def report(path: str, text: str, target: Target, data: dict[str, Any], args_flag: bool) -> dict[str, Any]:
    file_lines = text.splitlines()
    first, last = target.first_line, max(target.span.end_line, target.first_line)
    arguments = dict(data["arguments"])
    if args_flag:
        arguments["source"] = "args-flag"
    jaxpr = data.get("jaxpr") or {"lines": []}
    result: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "target": {"path": path, "display_path": display(path), "qualname": target.qualname,
                   "line": target.name_span.start_line, "kind": target.kind},
        "arguments": arguments,
        "source": {"path": path, "first_line": first, "lines": file_lines[first - 1:last]},
        "jaxpr": {"lines": jaxpr["lines"], "source_duplicates": jaxpr.get("source_duplicates", []),
                  "remat": jaxpr.get("remat", [])},
        "findings": [], "summary": [],
    }
    notes: list[str] = []
    if data.get("hlo_text"):
        module = hlo.parse(data["hlo_text"])
        placed = hlomap.place(module)
        section = hlomap.hlo_section(module, placed, path)
        context = classify.Context(module, placed, path, file_lines, jaxpr)
        section["duplicates"] = classify.classify_all(context)
        section["compiled_on"] = (data.get("chip") or {}).get("name", "cpu")
        section["compiled_on_label"] = (data.get("chip") or {}).get("label", "CPU")
        result["hlo"] = section
        notes += classify.remat_merged(context, section["duplicates"])
        result["cost"] = cost(data, module, placed, notes)
        # The estimate's FLOPs count the whole program, its bytes (XLA's) one device's share.
        # Where the jaxpr's FLOPs are unknown (a convolution), XLA's: per device already.
        estimate, compiled = result["cost"]["estimate"], result["cost"]["compiled"]
        flops = _sum(estimate["flops"], estimate["transcendentals"])
        flops = flops / module.partitions if flops is not None else _sum(compiled["flops"], compiled["transcendentals"])
        result["cost"]["time"] = chip.time_estimate(data.get("chip"), flops, estimate["bytes"])
        result["communication"] = communication.section(module, placed, data["hlo_text"], path, data)
    else:
        reason = data.get("compile_error") or "not compiled"
        result["hlo"] = {"module_name": "", "instructions": [], "fusions": [], "duplicates": [],
                         "error": reason}
        result["cost"] = cost(data, None, [], notes + [f"not compiled: {reason}"])
        result["communication"] = None
    result["chip"] = data.get("chip")
    result["memory"] = memory_section(data, result["cost"]["memory"])
    result["memory"]["hbm"] = (chip.hbm_use(data.get("chip"), result["cost"]["memory"],
                                            module.partitions if data.get("hlo_text") else 1)
                               or chip.refused(data.get("chip"), data.get("compile_error")))
    result["eager"] = data.get("eager")
    return result


def memory_section(data: dict[str, Any], analysis: dict[str, Any]) -> dict[str, Any]:
    """The memory section: XLA's memory_analysis() figures (the same object as ``cost.memory``,
    kept there for schema_version 1), the stacked residuals of each reverse-differentiated loop, and
    the copies of loop-carried buffers inside compiled while bodies (None: not compiled)."""
    facts = data.get("memory") or {}
    return {"analysis": analysis, "differentiated_loops": facts.get("differentiated_loops", []),
            "loop_copies": facts.get("loop_copies") if data.get("hlo_text") else None}


def compiled_figures(data: dict[str, Any]) -> dict[str, Any] | None:
    """XLA's cost and memory figures as the report names them (None when not compiled)."""
    compiled = data.get("compiled")
    if not compiled:
        return None
    transcendentals = compiled.get("transcendentals")
    if transcendentals is None and compiled.get("flops") is not None:
        transcendentals = 0.0  # XLA leaves the key out when there are none
    figures = {"flops": compiled.get("flops"), "bytes_accessed": compiled.get("bytes"),
               "transcendentals": transcendentals}
    figures.update({key: compiled.get(key) for key in _MEMORY_KEYS})
    return figures


def cost(data: dict[str, Any], module: hlo.Module | None, placed: list, notes: list[str]) -> dict[str, Any]:
    figures = compiled_figures(data) or {}
    compiled = {key: _float(figures.get(key)) for key in ("flops", "bytes_accessed", "transcendentals")}
    memory = {key: figures.get(key) for key in _MEMORY_KEYS}
    estimate_flops = _float((data.get("estimate") or {}).get("flops"))
    estimate_transcendentals = _float((data.get("estimate") or {}).get("transcendentals"))
    estimate_bytes = compiled["bytes_accessed"]
    unknown_trips = False
    if module is not None and estimate_bytes is not None:
        missing, unknown_trips = hlomap.uncounted_bytes(module, placed)
        estimate_bytes += missing
    loops = [loop for loop in (data.get("estimate") or {}).get("loops", [])]
    partitions = module.partitions if module is not None else 1
    if partitions > 1:  # a sharded program: XLA compiled one device's share of it
        notes.append(f"The compiled program is partitioned over {partitions} devices: XLA's figures (cost and "
                     "memory) are per device, one device's share; the estimate counts the whole program, "
                     "all devices together.")
    counted = [loop for loop in loops if loop.get("trips") and loop["trips"] > 1]
    # Loops from one line (a scan and its transpose under grad) share one note.
    same_place = Counter((loop["primitive"], loop["line"], loop["trips"]) for loop in counted)
    for (primitive, line, trips), count in same_place.items():
        what = f"the {primitive} at line {line} runs" if count == 1 else \
            f"the {count} {primitive}s at line {line} each run"
        notes.append(f"XLA's cost_analysis counts a loop body once, whatever its trip count: "
                     f"{what} {trips:,} times per call.")
    if counted and compiled["flops"] and estimate_flops is not None and estimate_flops != compiled["flops"]:
        ratio = estimate_flops / compiled["flops"]
        notes.append(f"The trip-count-aware estimate is {_number(estimate_flops)} FLOPs per call, "
                     f"{ratio:.1f}x XLA's {_number(compiled['flops'])}: XLA's figure undercounts the loops.")
    elif not counted and partitions == 1 and compiled["flops"] is not None and estimate_flops is not None \
            and estimate_flops != compiled["flops"]:
        notes.append(f"Without loops, the estimate ({_number(estimate_flops)}) and XLA's figure "
                     f"({_number(compiled['flops'])}) differ only by XLA's rewrites: fusion copies, "
                     "simplifications, and what each counts as a FLOP.")
    if any(loop["primitive"] == "while" for loop in loops) or unknown_trips:
        notes.append("A while loop's trip count is not known before it runs: both figures count its body once.")
    label = ("trip-count-aware: FLOPs from the jaxpr, each loop body times its trip count; "
             "bytes = XLA's bytes accessed plus the loop iterations it leaves out (from the optimized HLO)")
    return {"compiled": compiled, "memory": memory,
            "estimate": {"flops": estimate_flops, "bytes": estimate_bytes,
                         "transcendentals": estimate_transcendentals, "label": label},
            "compiled_label": f"Compiled.cost_analysis() on {(data.get('chip') or {}).get('label', 'CPU')}, "
                              "after optimization; a loop body counts once",
            "notes": notes}


def own_findings(result: Result, target: Target) -> list[Finding]:
    """check's findings for this function (analysis failures are errors, reported otherwise)."""
    findings = list(result.findings)
    return [f for f in findings if not f.code.startswith("JX9") and (
        f.target == target.qualname or (f.target is None and f.path == result.path
                                        and target.span.start_line <= f.span.start_line <= target.span.end_line))]


def in_explained_file(finding: dict[str, Any], report: dict[str, Any]) -> bool:
    """The finding is located in the explained function's file (not in a helper's file)."""
    return finding.get("path") in (None, report["target"]["path"])


def finding_place(finding: dict[str, Any], report: dict[str, Any]) -> str:
    """"line 13" in the explained file, "helpers.py:19" in another one."""
    if in_explained_file(finding, report):
        return f"line {finding['line']}"
    return f"{finding.get('display_path') or finding['path']}:{finding['line']}"


def memory_place(entry: dict[str, Any], report: dict[str, Any]) -> str:
    """Where a loop of the memory section is: "line 15" in the explained file, "helpers.py:19" in
    another one, "no source line" without one."""
    if entry.get("line") is None:
        return "no source line"
    if entry.get("path") in (None, report["target"]["path"]):
        return f"line {entry['line']}"
    return f"{Path(entry['path']).name}:{entry['line']}"


def conclude(report: dict[str, Any]) -> None:
    """The summary: plain-words conclusions, most important first."""
    summary: list[str] = []
    duplicates = report["hlo"].get("duplicates", [])
    important = [d for d in duplicates if d["classification"] != "cheap-fusion-duplication"]
    cheap = [d for d in duplicates if d["classification"] == "cheap-fusion-duplication"]
    summary += [d["summary"] for d in important]
    alike: dict[tuple, list[dict[str, Any]]] = {}
    for duplicate in cheap:
        alike.setdefault((duplicate["opcode"], duplicate["line"]), []).append(duplicate)
    groups = list(alike.values())
    for group in groups[:3]:
        if len(group) == 1:
            summary.append(group[0]["summary"])
            continue
        total = sum(d["extra_flops"] or 0 for d in group)
        where = f" of line {group[0]['line']}" if group[0]["line"] else ""
        summary.append(f"{len(group)} {group[0]['opcode']} results{where} are computed more than once in the "
                       f"optimized HLO because XLA's fusion duplicated these cheap ops into the fusions "
                       f"that consume them; together {_number(total)} extra FLOPs per call, by design.")
    if len(groups) > 3:
        rest = sum(len(group) for group in groups[3:])
        summary.append(f"{rest} more cheap op{'s are' if rest != 1 else ' is'} duplicated by fusion "
                       "(listed above); by design.")
    if not duplicates and report["hlo"].get("instructions"):
        summary.append("Nothing is computed more than once in the optimized HLO.")
    summary += communication.summary(report.get("communication"), report["target"]["path"])
    summary += [note for note in report["cost"]["notes"] if "merged the recomputation" in note
                or "undercounts" in note]
    summary += [f"{f['code']} ({finding_place(f, report)}): {f['verdict']}" for f in report["findings"]]
    report["summary"] = summary


def _float(value: Any) -> float | None:
    return None if value is None else float(value)


def _number(value: float) -> str:
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"


def _sum(*values: float | None) -> float | None:
    return None if any(v is None for v in values) else sum(values)  # type: ignore[arg-type]
