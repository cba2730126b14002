"""The explain report for a terminal: five sections and a summary, aligned, wrapped to its width."""
from __future__ import annotations

import shutil
import textwrap
from pathlib import Path
from typing import Any

from jaxlint.explain.build import finding_place, memory_place
from jaxlint.explain.target import code
from jaxlint.text import read_lines

_HIDDEN = frozenset({"parameter", "constant", "tuple", "get-tuple-element", "bitcast"})
_KINDS = {"cheap-fusion-duplication": "cheap fusion duplication",
          "recomputed-expensive": "recomputed expensive op", "recomputed-cheap": "recomputed cheap op",
          "duplicated-in-source": "duplicated in the source"}


def render(report: dict[str, Any], width: int | None = None) -> str:
    width = max(60, min(width or shutil.get_terminal_size((100, 24)).columns, 120))
    out: list[str] = []
    target = report["target"]
    out.append(f"{target['display_path']}::{target['qualname']}  ({target['kind']}, line {target['line']})")
    signature = ", ".join(f"{a['name']}: {a['abstract']}" for a in report["arguments"]["signature"])
    out += _wrap(f"arguments ({report['arguments']['source']}): {signature}", width, "", "    ")
    lines = _file_lines(report)
    out += ["", "1. Source -> jaxpr", *_jaxpr(report, lines, width)]
    out += ["", *_hlo(report, lines, width)]
    out += ["", "3. Cost per call", *_cost(report, width)]
    out += ["", "4. Memory", *_memory(report, width)]
    out += ["", "5. Findings and their price", *_findings(report, width)]
    out += _communication(report, lines, width)
    if report["summary"]:
        out += ["", "Summary"]
        for sentence in report["summary"]:
            out += _wrap(sentence, width, "  - ", "    ")
    return "\n".join(out) + "\n"


def _wrap(text: str, width: int, first: str, rest: str) -> list[str]:
    return textwrap.wrap(text, width, initial_indent=first, subsequent_indent=rest,
                         break_long_words=False, break_on_hyphens=False) or [first.rstrip()]


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[:max(width - 3, 1)] + "..."


def _file_lines(report: dict[str, Any]) -> dict[int, str]:
    """Source lines of the target's file the report refers to (the function's own and others)."""
    try:
        return {n: code(text) for n, text in enumerate(read_lines(report["target"]["path"]), 1)}
    except OSError:
        first = report["source"]["first_line"]
        return {first + i: code(text) for i, text in enumerate(report["source"]["lines"])}


def _jaxpr(report: dict[str, Any], lines: dict[int, str], width: int) -> list[str]:
    out, previous = [], object()
    entries = report["jaxpr"]["lines"]
    if not entries:
        return ["  (no equations)"]
    gutter = max(len(str(e["line"])) for e in entries if e.get("line") is not None) if any(
        e.get("line") is not None for e in entries) else 1
    for entry in entries:
        line = entry.get("line")
        if line != previous and not entry.get("label"):
            source = lines.get(line, "") if line is not None else "(no user line)"
            out.append(_clip(f"  {str(line or ''):>{gutter}} | {source}", width))
            previous = line
        indent = "  " * (entry["depth"] + 1)
        out.append(_clip(f"  {'':>{gutter}} | {indent}{entry['text']}", width))
    return out


def _hlo(report: dict[str, Any], lines: dict[int, str], width: int) -> list[str]:
    section = report["hlo"]
    if section.get("error"):
        on = (report.get("chip") or {}).get("label", "CPU")
        return [f"2. Optimized HLO ({on})", *_wrap(f"not compiled: {section['error']}", width, "  ", "  ")]
    instructions = section["instructions"]
    fusions = section["fusions"]
    out = _wrap(f"2. Optimized HLO ({section.get('compiled_on_label', 'CPU')}): {section['module_name']}, {len(instructions)} instructions, "
                f"{len(fusions)} fusion{'s' if len(fusions) != 1 else ''}", width, "", "   ")
    by_id = {i["id"]: i for i in instructions}
    if fusions:
        out.append("  fusions")
        name_width = min(max(len(f["name"]) for f in fusions), 40)
        for fusion in fusions:
            ops = " ".join(by_id[i]["opcode"] for i in fusion["instruction_ids"]
                           if by_id[i]["opcode"] not in _HIDDEN)
            where = f"line {fusion['line']}" if fusion.get("line") else ""
            out.append(_clip(f"    {fusion['name']:<{name_width}}  {fusion['kind']:<7} {where:<9} {ops}", width))
    out.append("  instructions by source line")
    shown = [i for i in instructions if i["opcode"] not in _HIDDEN]
    order: dict[Any, list[dict[str, Any]]] = {}
    for instruction in shown:
        order.setdefault(instruction["line"], []).append(instruction)
    name_width = min(max((len(i["name"]) for i in shown), default=4), 32)
    op_width = min(max((len(i["opcode"]) for i in shown), default=4), 20)
    shape_width = min(max((len(i["shape"]) for i in shown), default=4), 24)
    for line in sorted(order, key=lambda n: (n is None, n or 0)):
        title = f"{line}: {lines.get(line, '')}" if line is not None else "(no line of this file)"
        out.append(_clip(f"    {title}", width))
        for instruction in order[line]:
            where = f"in {instruction['fusion']}" if instruction["fusion"] else ""
            if instruction.get("trips") and instruction["trips"] > 1:
                where += f"{', ' if where else ''}x{instruction['trips']}"
            row = f"      {instruction['name']:<{name_width}} {instruction['opcode']:<{op_width}} " \
                  f"{instruction['shape']:<{shape_width}}"
            if len(f"{row} {where}".rstrip()) <= width:
                out.append(f"{row} {where}".rstrip())
            else:  # a narrow terminal: the fusion on a line of its own
                out += [_clip(row.rstrip(), width), _clip(f"        {where}", width)]
    duplicates = section["duplicates"]
    out.append("  computed more than once" + ("" if duplicates else ": nothing"))
    groups: dict[tuple, list[dict[str, Any]]] = {}
    for duplicate in duplicates:  # one cheap duplication per value: alike ones shown once
        alike = duplicate["classification"] == "cheap-fusion-duplication"
        key = (duplicate["opcode"], duplicate["line"]) if alike else (id(duplicate),)
        groups.setdefault(key, []).append(duplicate)
    for group in groups.values():
        duplicate = group[0]
        if duplicate["classification"] == "duplicated-in-source":
            where = ("lines " if len(duplicate["lines"]) > 1 else "line ") + ", ".join(
                str(n) for n in duplicate["lines"])
            count = f"{duplicate['count']} in the optimized HLO"
        else:
            where = f"line {duplicate['line']}" if duplicate["line"] else "no user line"
            count = f"x{duplicate['count']}"
        out += _wrap(f"[{_KINDS.get(duplicate['classification'], duplicate['classification'])}] "
                     f"{duplicate['opcode']}, {where}, {count}", width, "    ", "      ")
        out += _wrap(duplicate["explanation"], width, "      ", "      ")
        if len(group) > 1:
            names = [by_id[i]["name"] for d in group[1:] for i in d["instruction_ids"] if i in by_id]
            total = sum(d["extra_flops"] or 0 for d in group)
            out += _wrap(f"... and {len(group) - 1} more values of this line duplicated the same way "
                         f"({', '.join(names[:6])}{', ...' if len(names) > 6 else ''}); all together "
                         f"{_number(total)} extra FLOPs per call.", width, "      ", "      ")
    return out


def _number(value: Any) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"


def _cost(report: dict[str, Any], width: int) -> list[str]:
    cost = report["cost"]
    compiled, estimate = cost["compiled"], cost["estimate"]
    rows = [("", "FLOPs", "bytes accessed", "transcendentals"),
            ("XLA, compiled", _number(compiled["flops"]), _number(compiled["bytes_accessed"]),
             _number(compiled["transcendentals"])),
            ("estimate", _number(estimate["flops"]), _number(estimate["bytes"]),
             _number(estimate.get("transcendentals")))]
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    out = ["  " + "  ".join(cell.ljust(widths[i]) if i == 0 else cell.rjust(widths[i])
                            for i, cell in enumerate(row)).rstrip() for row in rows]
    out += _wrap(f"XLA: {cost.get('compiled_label', '')}", width, "  ", "    ")
    out += _wrap(f"estimate: {estimate['label']}", width, "  ", "    ")
    timed = cost.get("time")
    if timed:
        out += _wrap(f"time per call: {seconds_text(timed['seconds'])} ({timed['bound']}-bound: compute "
                     f"{seconds_text(timed['compute_seconds'])}, memory {seconds_text(timed['memory_seconds'])}) "
                     f"{timed['label']}", width, "  ", "    ")
    for note in cost["notes"]:
        out += _wrap(note, width, "  note: ", "    ")
    return out


def _memory(report: dict[str, Any], width: int) -> list[str]:
    section = report["memory"]
    analysis = section["analysis"]
    names = (("argument_bytes", "arguments"), ("output_bytes", "outputs"), ("temp_bytes", "temporaries"),
             ("alias_bytes", "aliased"))
    out = _wrap("XLA's memory_analysis(): " + ", ".join(f"{label} {_bytes(analysis.get(key))}" for key, label in names),
                width, "  ", "    ")
    hbm = section.get("hbm")
    if hbm:
        chip = (report.get("chip") or {}).get("chip_label", "")
        share = f" ({hbm['share']:.1%})" if hbm.get("share") is not None else ""
        per = " per device" if hbm.get("per_device") else ""
        out += _wrap(f"HBM of one {chip} chip: {_bytes(hbm['peak_bytes'])}{per} of {_bytes(hbm['hbm_bytes'])}{share}"
                     + (f": {hbm['note']}" if hbm.get("note") else ""), width, "  ", "    ")
    loops = section["differentiated_loops"]
    out.append("  residuals saved by differentiated loops" + ("" if loops else ": no differentiated loop"))
    for loop in loops:
        trips = f"{loop['trips']:,} iterations" if loop["trips"] else "trip count unknown"
        out += _wrap(f"{memory_place(loop, report)} ({trips}): {_bytes(loop['total_bytes'])} of residuals in "
                     f"{len(loop['residuals'])} stacked array{'s' if len(loop['residuals']) != 1 else ''}",
                     width, "    ", "      ")
        shape_width = max(len(r["shape"]) for r in loop["residuals"])
        for residual in loop["residuals"]:
            out.append(_clip(f"      {residual['shape']:<{shape_width}}  {_bytes(residual['bytes']):>10}  "
                             f"made at {residual['made_at']}", width))
    copies = section["loop_copies"]
    if copies is None:
        out.append("  copies of carried buffers inside loop bodies: not compiled")
        return out
    out.append("  copies of carried buffers inside loop bodies" + ("" if copies else ": no copy inside a loop body"))
    for loop in copies:
        shapes = ", ".join(c["shape"] for c in loop["copies"])
        total = (f" x {loop['trips']:,} iterations = {_bytes(loop['total_bytes'])} per call" if loop["trips"]
                 else " (trip count unknown)")
        out += _wrap(f"{memory_place(loop, report)}: {_bytes(loop['bytes_per_iteration'])} copied per iteration{total} "
                     f"({shapes})", width, "    ", "      ")
    return out


def _communication(report: dict[str, Any], lines: dict[int, str], width: int) -> list[str]:
    """Section 6, for a program partitioned over several devices only (an unsharded one has none)."""
    section = report.get("communication")
    if not section or not section["sharded"]:
        return []
    mesh = section["mesh"]
    over = (", mesh " + " x ".join(f"{n}={s}" for n, s in zip(mesh["axis_names"], mesh["shape"]))) if mesh else ""
    out = ["", f"6. Communication ({section['devices']} devices{over})"]
    if section["arguments"] or section["outputs"]:
        arguments, outputs = (", ".join(spec or "chosen by XLA" for spec in section[key]) or "-"
                              for key in ("arguments", "outputs"))
        out += _wrap(f"shardings: arguments {arguments}; outputs {outputs}", width, "  ", "    ")
    collectives = section["collectives"]
    if not collectives:
        out.append("  no collective: each device computes its part without communicating")
    for c in collectives:
        axes = f"over {', '.join(c['axes'])}" if c["axes"] else "over devices not on one mesh axis" \
            if c["axes"] is not None else "over unknown axes"
        if c["line"] is None:
            where = f"by {c['cause']}" if c["cause"] else "no source line"
        elif c["path"] == report["target"]["path"]:
            where = f"line {c['line']} ({_clip(lines.get(c['line'], ''), 40)})"
        else:
            where = f"{Path(c['path']).name}:{c['line']}"
        runs = c["runs_per_call"]
        if not c["in_loop"]:
            per_call = ""
        elif runs is None:
            per_call = ", in a loop body (trip count unknown)"
        else:
            loop = f" at line {c['loop_line']}" if c["loop_line"] else ""
            per_call = f", in the loop body{loop}: {runs:,} runs = {_bytes(c['bytes_per_call'])} per call"
        out += _wrap(f"{where}: {c['kind']} {c['shape']} {axes}, {_bytes(c['bytes'])}{per_call}",
                     width, "  ", "      ")
    memory = section["memory"]
    per_device, unsharded = memory["per_device"], memory["unsharded"]
    out += _wrap(f"memory per device: arguments {_bytes(per_device['argument_bytes'])} "
                 f"(unsharded {_bytes(unsharded['argument_bytes'])}), outputs {_bytes(per_device['output_bytes'])} "
                 f"(unsharded {_bytes(unsharded['output_bytes'])}), temporaries {_bytes(per_device['temp_bytes'])}",
                 width, "  ", "    ")
    out += _wrap(section["bytes_label"], width, "  bytes: ", "    ")
    out += _wrap(memory["unsharded_label"], width, "  ", "    ")
    return out


def _bytes(value: Any) -> str:
    """``12.5 MiB (13,107,200 B)``; ``44 B``; ``-`` when unknown."""
    if value is None:
        return "-"
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if value >= scale:
            return f"{value / scale:.1f} {unit}"
    return f"{_number(value)} B"


def _findings(report: dict[str, Any], width: int) -> list[str]:
    if not report["findings"]:
        return ["  no findings"]
    out = []
    for finding in report["findings"]:
        out += _wrap(f"{finding['code']} {finding_place(finding, report)}: {finding['message']}", width, "  ",
                     "    ")
        if finding["fix"]:
            out += _wrap(f"fix ({finding['applicability']}): {finding['fix']}", width, "    ", "      ")
        before, after = finding.get("cost_before"), finding.get("cost_after")
        if before and after:
            pairs = [f"{label} {_number(before.get(key))} -> {_number(after.get(key))}" for key, label in
                     (("flops", "FLOPs"), ("bytes_accessed", "bytes"), ("temp_bytes", "temp bytes"))]
            out += _wrap("compiled: " + ", ".join(pairs), width, "    ", "      ")
        eager = finding.get("eager") or {}
        if eager.get("before") and eager.get("after"):
            old, new = eager["before"], eager["after"]
            out += _wrap(f"op by op: {old['ops']} -> {new['ops']} ops, {_number(old.get('materialized_bytes'))}"
                         f" -> {_number(new.get('materialized_bytes'))} bytes materialized", width, "    ", "      ")
        out += _wrap(f"verdict: {finding['verdict']}", width, "    ", "      ")
    return out


def seconds_text(value: float) -> str:
    """1.2 s, 3.4 ms, 5.6 us."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if value >= scale:
            return f"{value / scale:.3g} {unit}"
    return f"{value / 1e-9:.3g} ns" if value >= 1e-10 else "under 0.1 ns"
