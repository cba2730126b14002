"""The explain report for a terminal: five sections and a summary, aligned, wrapped to its width."""
from __future__ import annotations

import shutil
import textwrap
from pathlib import Path
from typing import Any

from jaxlint.explain.build import finding_place, memory_place
from jaxlint.explain.condense import condensed_equations, counted_opcodes, instruction_groups
from jaxlint.explain.target import code
from jaxlint.ir.primitives import LOOPS
from jaxlint.text import read_lines

_HIDDEN = frozenset({"parameter", "constant", "tuple", "get-tuple-element", "bitcast"})
# The summary page's limits: rows of the jaxpr listing, source lines of the HLO listing and kinds
# of instruction per line, fusions, duplicates, findings, stacked residuals per loop, collectives.
_JAXPR_ROWS, _HLO_LINES, _HLO_KINDS, _FUSIONS, _DUPLICATES = 60, 20, 6, 10, 5
_FINDINGS, _RESIDUALS, _COLLECTIVES = 10, 6, 10
_CUT = " (--full lists them)"
_KINDS = {"cheap-fusion-duplication": "cheap fusion duplication",
          "recomputed-expensive": "recomputed expensive op", "recomputed-cheap": "recomputed cheap op",
          "duplicated-in-source": "duplicated in the source"}


def render(report: dict[str, Any], width: int | None = None, full: bool = False) -> str:
    """The report as text: a summary page (repeated equations once with their count, each list
    cut to its first entries, each cut saying so), or with ``full`` every equation and instruction."""
    width = max(60, min(width or shutil.get_terminal_size((100, 24)).columns, 120))
    out: list[str] = []
    target = report["target"]
    out.append(f"{target['display_path']}::{target['qualname']}  ({target['kind']}, line {target['line']})")
    signature = ", ".join(f"{a['name']}: {a['abstract']}" for a in report["arguments"]["signature"])
    out += _wrap(f"arguments ({report['arguments']['source']}): {signature}", width, "", "    ")
    lines = _file_lines(report)
    out += ["", "1. Source -> jaxpr", *_jaxpr(report, lines, width, full)]
    out += ["", *_hlo(report, lines, width, full)]
    out += ["", "3. Cost per call", *_cost(report, width)]
    out += ["", "4. Memory", *_memory(report, width, full)]
    out += ["", "5. Findings and their price", *_findings(report, width, full)]
    out += _communication(report, lines, width, full)
    if report["summary"]:
        out += ["", "Summary"]
        for sentence in report["summary"]:
            out += _wrap(sentence, width, "  - ", "    ")
    if _CUT.strip() in " ".join(line.strip() for line in out):
        out += ["", *_wrap(f"This page is a summary: `jaxlint explain {target['display_path']}::{target['qualname']} "
                           "--full` prints every equation, instruction, duplicate and finding.", width, "", "")]
    return "\n".join(out) + "\n"


def _more(count: int, what: str, width: int, indent: str) -> list[str]:
    """The line that says what the summary page left out (it ends with _CUT)."""
    return _wrap(f"... {count:,} more {what}{_CUT}", width, indent, indent + "  ")


def _shown(items: list[Any], full: bool, limit: int) -> list[Any]:
    return items if full else items[:limit]


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


def _jaxpr(report: dict[str, Any], lines: dict[int, str], width: int, full: bool) -> list[str]:
    out, previous = [], object()
    entries = report["jaxpr"]["lines"]
    if not entries:
        return ["  (no equations)"]
    gutter = max(len(str(e["line"])) for e in entries if e.get("line") is not None) if any(
        e.get("line") is not None for e in entries) else 1
    for entry in entries if full else condensed_equations(entries):
        if isinstance(entry, tuple):  # (period, count): a block traced again and again
            period, count = entry
            out += _wrap(f"... the {period} equation{'s' if period != 1 else ''} above, traced {count:,} times in a "
                         f"row from the same source lines (as a Python loop unrolls when traced): shown once{_CUT}",
                         width, f"  {'':>{gutter}} |   ", f"  {'':>{gutter}} |     ")
            previous = object()
            continue
        line = entry.get("line")
        if line != previous and not entry.get("label"):
            source = lines.get(line, "") if line is not None else "(no user line)"
            out.append(_clip(f"  {str(line or ''):>{gutter}} | {source}", width))
            previous = line
        indent = "  " * (entry["depth"] + 1)
        out.append(_clip(f"  {'':>{gutter}} | {indent}{entry['text']}", width))
        if not full and entry["primitive"] in LOOPS:
            runs = f"runs {entry['trips']:,} times" if entry.get("trips") else \
                "runs as many times as its condition says"
            out.append(_clip(f"  {'':>{gutter}} | {indent}  (a loop: its body below {runs})", width))
    if full or len(out) <= _JAXPR_ROWS:
        return out
    return out[:_JAXPR_ROWS] + _more(len(out) - _JAXPR_ROWS, "lines of the listing", width, "  ")


def _hlo(report: dict[str, Any], lines: dict[int, str], width: int, full: bool) -> list[str]:
    section = report["hlo"]
    if section.get("error"):
        on = (report.get("chip") or {}).get("label", "CPU")
        return [f"2. Optimized HLO ({on})", *_wrap(f"not compiled: {section['error']}", width, "  ", "  ")]
    instructions = section["instructions"]
    fusions = section["fusions"]
    out = _wrap(f"2. Optimized HLO ({section.get('compiled_on_label', 'CPU')}): {section['module_name']}, "
                f"{len(instructions)} instructions, {len(fusions)} fusion{'s' if len(fusions) != 1 else ''}",
                width, "", "   ")
    by_id = {i["id"]: i for i in instructions}
    if fusions:
        out.append("  fusions")
        name_width = min(max(len(f["name"]) for f in fusions), 40)
        for fusion in _shown(fusions, full, _FUSIONS):
            opcodes = [by_id[i]["opcode"] for i in fusion["instruction_ids"] if by_id[i]["opcode"] not in _HIDDEN]
            ops = " ".join(opcodes) if full else counted_opcodes(opcodes)
            where = f"line {fusion['line']}" if fusion.get("line") else ""
            out.append(_clip(f"    {fusion['name']:<{name_width}}  {fusion['kind']:<7} {where:<9} {ops}", width))
        if not full and len(fusions) > _FUSIONS:
            out += _more(len(fusions) - _FUSIONS, "fusions", width, "    ")
    out += _instructions([i for i in instructions if i["opcode"] not in _HIDDEN], lines, width, full)
    return out + _duplicates(section["duplicates"], by_id, width, full)


def _instructions(shown: list[dict[str, Any]], lines: dict[int, str], width: int, full: bool) -> list[str]:
    """The instructions under the source line each came from; on the summary page, a line with
    many is one row per kind of instruction (opcode, shape, fusion) with its count."""
    out = ["  instructions by source line"]
    order: dict[Any, list[dict[str, Any]]] = {}
    for instruction in shown:
        order.setdefault(instruction["line"], []).append(instruction)
    name_width = min(max((len(i["name"]) for i in shown), default=4), 32)
    op_width = min(max((len(i["opcode"]) for i in shown), default=4), 20)
    shape_width = min(max((len(i["shape"]) for i in shown), default=4), 24)
    ordered = sorted(order, key=lambda n: (n is None, n or 0))
    for line in _shown(ordered, full, _HLO_LINES):
        title = f"{line}: {lines.get(line, '')}" if line is not None else "(no line of this file)"
        out.append(_clip(f"    {title}", width))
        rows = [(1, i) for i in order[line]] if full or len(order[line]) <= _HLO_KINDS + 2 else \
            instruction_groups(order[line])
        limit = len(rows) if full or len(rows) <= _HLO_KINDS + 2 else _HLO_KINDS
        for count, instruction in rows[:limit]:
            where = f"in {instruction['fusion']}" if instruction["fusion"] else ""
            if instruction.get("trips") and instruction["trips"] > 1:
                where += f"{', ' if where else ''}x{instruction['trips']}"
            name = instruction["name"] if count == 1 else f"{count:,} like {instruction['name']}"
            row = (f"      {name:<{name_width}} {instruction['opcode']:<{op_width}} "
                   f"{instruction['shape']:<{shape_width}}")
            if len(f"{row} {where}".rstrip()) <= width:
                out.append(f"{row} {where}".rstrip())
            else:  # a narrow terminal: the fusion on a line of its own
                out += [_clip(row.rstrip(), width), _clip(f"        {where}", width)]
        if len(rows) > limit:
            rest = sum(count for count, _ in rows[limit:])
            out += _more(rest, f"instructions of line {line}" if line is not None else "instructions", width, "      ")
    if not full and len(ordered) > _HLO_LINES:
        rest = sum(len(order[line]) for line in ordered[_HLO_LINES:])
        out += _more(rest, f"instructions of {len(ordered) - _HLO_LINES} more source lines", width, "    ")
    return out


def _duplicates(duplicates: list[dict[str, Any]], by_id: dict[str, Any], width: int, full: bool) -> list[str]:
    out = ["  computed more than once" + ("" if duplicates else ": nothing")]
    groups: dict[tuple, list[dict[str, Any]]] = {}
    for duplicate in duplicates:  # one cheap duplication per value: alike ones shown once
        alike = duplicate["classification"] == "cheap-fusion-duplication"
        key = (duplicate["opcode"], duplicate["line"]) if alike else (id(duplicate),)
        groups.setdefault(key, []).append(duplicate)
    for group in _shown(list(groups.values()), full, _DUPLICATES):
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
    if not full and len(groups) > _DUPLICATES:
        out += _more(len(groups) - _DUPLICATES, "operations computed more than once", width, "    ")
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


def _memory(report: dict[str, Any], width: int, full: bool) -> list[str]:
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
        for residual in _shown(loop["residuals"], full, _RESIDUALS):
            out.append(_clip(f"      {residual['shape']:<{shape_width}}  {_bytes(residual['bytes']):>10}  "
                             f"made at {residual['made_at']}", width))
        if not full and len(loop["residuals"]) > _RESIDUALS:
            out += _more(len(loop["residuals"]) - _RESIDUALS, "stacked arrays", width, "      ")
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


def _communication(report: dict[str, Any], lines: dict[int, str], width: int, full: bool) -> list[str]:
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
    for c in _shown(collectives, full, _COLLECTIVES):
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
    if not full and len(collectives) > _COLLECTIVES:
        out += _more(len(collectives) - _COLLECTIVES, "collectives", width, "  ")
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


def _findings(report: dict[str, Any], width: int, full: bool) -> list[str]:
    if not report["findings"]:
        return ["  no findings"]
    out = []
    for finding in _shown(report["findings"], full, _FINDINGS):
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
    if not full and len(report["findings"]) > _FINDINGS:
        out += _more(len(report["findings"]) - _FINDINGS, "findings", width, "  ")
    return out


def seconds_text(value: float) -> str:
    """1.2 s, 3.4 ms, 5.6 us."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if value >= scale:
            return f"{value / scale:.3g} {unit}"
    return f"{value / 1e-9:.3g} ns" if value >= 1e-10 else "under 0.1 ns"
