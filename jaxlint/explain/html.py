"""`jaxlint explain --html FILE`: the explain report as one self-contained page.

No network: inline CSS and a small inline script, system fonts only. Source, jaxpr and optimized
HLO sit side by side; every row carries ``data-line`` (the user source line), and hovering or
focusing a row highlights (class ``hl``) every row of the same line and scrolls it into view.
"""
from __future__ import annotations

import os
import re
from html import escape
from typing import Any, Iterable

from jaxlint.explain.build import finding_place, in_explained_file, memory_place
from jaxlint.explain.html_assets import CSS, JS
from jaxlint.explain.terminal import seconds_text
from jaxlint.text import read_lines, write_text_atomic

_KINDS = {"cheap-fusion-duplication": "cheap fusion duplication",
          "recomputed-expensive": "recomputed expensive op",
          "duplicated-in-source": "duplicated in source"}
# HLO metadata (op_name, stack frames) is long and already summarized by data-line: shown on hover.
_METADATA = re.compile(r',\s*metadata=\{(?:[^{}"]|"(?:[^"\\]|\\.)*")*\}')


def render_html(report: dict[str, Any]) -> str:
    """The whole page for an explain report (schema in jaxlint/explain); optional parts may be absent."""
    target = report.get("target") or {}
    title = f"{target.get('qualname', '?')} — {target.get('display_path') or target.get('path', '')}"
    parts = ['<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">',
             '<meta name="viewport" content="width=device-width,initial-scale=1">',
             f"<title>jaxlint explain: {_e(title)}</title><style>{CSS}</style></head><body>",
             _header(report), _summary(report.get("summary") or []),
             '<div class="panes">', _source_pane(report), _jaxpr_pane(report), _hlo_pane(report),
             '</div><p class="hint">Hover or focus a line (Tab, then ↑/↓) to light up the lines made '
             "from the same source line; Esc clears.</p>",
             _cost(report.get("cost") or {}, report.get("eager")), _memory(report), _communication(report), _duplicates(report),
             _findings(report), f"<script>{JS}</script></body></html>\n"]
    return "\n".join(parts)


def write_html(report: dict[str, Any], path: str) -> None:
    """Write the page atomically: a reader sees the old file or the whole new one."""
    text = render_html(report)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    write_text_atomic(path, text)


def _e(value: Any) -> str:
    return escape("" if value is None else str(value), quote=True)


def _header(report: dict[str, Any]) -> str:
    target = report.get("target") or {}
    arguments = report.get("arguments") or {}
    where = f"{target.get('display_path') or target.get('path', '')}:{target.get('line', '')}"
    signature = ", ".join(f"{a.get('name', '?')}: {a.get('abstract', '?')}"
                          for a in arguments.get("signature") or [])
    return (f"<h1>jaxlint explain <code>{_e(target.get('qualname', '?'))}</code></h1>"
            f'<p class="meta">{_e(where)} · {_e(target.get("kind", ""))}</p>'
            f'<p class="meta sig">arguments ({_e(arguments.get("source", "unknown"))}): '
            f"<code>({_e(signature)})</code></p>")


def _summary(lines: list[str]) -> str:
    if not lines:
        return ""
    return '<h2>Summary</h2><ul class="summary">' + "".join(f"<li>{_e(s)}</li>" for s in lines) + "</ul>"


def _pane(title: str, note: str, rows: str, label: str) -> str:
    return (f'<section class="pane" aria-label="{label}"><h2>{title} <small>{_e(note)}</small></h2>'
            f'<div class="scroll">{rows}</div></section>')


def _row(kind: str, line: Any, text: str, extra_class: str = "", attrs: str = "", first: bool = False,
         gutter: str | None = None) -> str:
    number = "" if line is None else str(line)
    shown = number if gutter is None else gutter
    return (f'<div class="ln xref {kind} {_e(extra_class)}" data-line="{_e(number)}" '
            f'tabindex="{0 if first else -1}"{attrs}><span class="no">{_e(shown)}</span>'
            f"<code>{text}</code></div>")


def _referenced_lines(report: dict[str, Any]) -> set[int]:
    jaxpr_rows = (report.get("jaxpr") or {}).get("lines") or []
    hlo_rows = (report.get("hlo") or {}).get("instructions") or []
    duplicates = (report.get("hlo") or {}).get("duplicates") or []
    rows = [*jaxpr_rows, *hlo_rows, *duplicates, *(report.get("findings") or []), *_collectives_here(report)]
    return {r["line"] for r in rows if isinstance(r.get("line"), int)}


def _source_pane(report: dict[str, Any]) -> str:
    source = report.get("source") or {}
    first = int(source.get("first_line") or 1)
    shown = {first + i: (text, "") for i, text in enumerate(source.get("lines") or [])}
    # Equations often come from helpers the function calls (a vmapped body elsewhere in the file):
    # show those lines too, so that every highlighted equation has a source row to point at.
    outside = sorted(_referenced_lines(report) - shown.keys())
    file_lines = _read_lines(source.get("path"), outside)
    for number in outside:
        shown[number] = (file_lines.get(number, "(not in this function)"), "outside")
    marks = _collective_marks(report)
    rows, previous = [], None
    for number in sorted(shown):
        if previous is not None and number != previous + 1:
            rows.append('<div class="gap">⋮</div>')
        text, extra = shown[number]
        rows.append(_row("src", number, _e(text) + marks.get(number, ""), extra, f' id="src-{number}"', first=not rows))
        previous = number
    body = "".join(rows) or '<div class="empty">No source.</div>'
    target = report.get("target") or {}
    return _pane("Source", str(target.get("display_path") or source.get("path", "")), body, "Source")


def _read_lines(path: Any, numbers: Iterable[int]) -> dict[int, str]:
    wanted = set(numbers)
    if not wanted or not isinstance(path, str):
        return {}
    try:
        return {n: t for n, t in enumerate(read_lines(path), 1) if n in wanted}
    except OSError:
        return {}


def _jaxpr_pane(report: dict[str, Any]) -> str:
    rows = []
    for eq in (report.get("jaxpr") or {}).get("lines") or []:
        indent = "  " * int(eq.get("depth") or 0)
        tag = '<span class="tag">remat</span>' if eq.get("remat") else ""
        rows.append(_row("eq", eq.get("line"), _e(indent + str(eq.get("text", ""))) + tag,
                         attrs=f' id="jaxpr-{_e(eq.get("id"))}" data-primitive="{_e(eq.get("primitive"))}"',
                         first=not rows))
    body = "".join(rows) or '<div class="empty">No jaxpr.</div>'
    return _pane("Jaxpr", f"{len(rows)} equations", body, "Jaxpr")


def _duplicate_of(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    duplicates = ((report.get("hlo") or {}).get("duplicates")) or []
    return {i: d for d in duplicates for i in d.get("instruction_ids") or []}


def _hlo_pane(report: dict[str, Any]) -> str:
    hlo = report.get("hlo") or {}
    instructions = hlo.get("instructions") or []
    duplicate_of = _duplicate_of(report)
    kinds = {f.get("name"): f.get("kind") for f in hlo.get("fusions") or []}
    rows, computation = [], None
    for ins in instructions:
        if ins.get("computation") != computation:
            computation = ins.get("computation")
            fusion = ins.get("fusion")
            inside = f" — inside fusion {fusion} ({kinds.get(fusion, '?')})" if fusion else ""
            rows.append(f'<div class="comp">{_e(computation)}{_e(inside)}</div>')
        text = str(ins.get("text", ""))
        shown, extra = _e(_METADATA.sub("", text).strip()), ""
        if isinstance(ins.get("trips"), int) and ins["trips"] > 1:
            shown += f'<span class="tag" title="runs once per loop iteration">×{ins["trips"]:,} trips</span>'
        dup = duplicate_of.get(ins.get("id"))
        if dup is not None:
            kind = str(dup.get("classification", ""))
            extra = f"dup {kind}"
            shown += (f'<span class="badge {_e(kind)}" title="{_e(dup.get("explanation"))}">'
                      f'{_e(_KINDS.get(kind, kind))} ×{_e(dup.get("count"))}</span>')
        attrs = (f' id="hlo-{_e(ins.get("id"))}" data-name="{_e(ins.get("name"))}" title="{_e(text)}"')
        gutter = "" if ins.get("line") is None else str(ins.get("line"))
        rows.append(_row("hlo", ins.get("line"), shown, extra, attrs, first=len(rows) <= 1, gutter=gutter))
    if instructions:
        body = "".join(rows)
    else:  # compile failed, or the report was made without HLO
        reason = hlo.get("error") or report.get("hlo_error") or "not available"
        body = f'<div class="empty">No optimized HLO: {_e(reason)}</div>'
    on = hlo.get("compiled_on_label") or (report.get("chip") or {}).get("label") or "CPU"
    return _pane(f"Optimized HLO ({on})", str(hlo.get("module_name") or ""), body, "Optimized HLO")


def _num(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, float) and not value.is_integer():
        return f"{value:,.4g}"
    return f"{int(value):,}" if isinstance(value, (int, float)) else str(value)


def _bytes(value: Any) -> str:
    if not isinstance(value, (int, float)):
        return _num(value)
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if abs(value) >= size:
            return f"{_num(value)} B ({value / size:.1f} {unit})"
    return f"{_num(value)} B"


def _cost(cost: dict[str, Any], eager_figures: Any) -> str:
    if not cost:
        return "<h2>Cost per call</h2><p class=\"empty\">No cost figures (the function was not compiled).</p>"
    compiled = cost.get("compiled") or {}
    estimate = cost.get("estimate") or {}
    rows = [("FLOPs", _num(compiled.get("flops")), _num(estimate.get("flops"))),
            ("bytes accessed", _bytes(compiled.get("bytes_accessed")), _bytes(estimate.get("bytes"))),
            ("transcendentals", _num(compiled.get("transcendentals")), _num(estimate.get("transcendentals")))]
    xla = cost.get("compiled_label") or "Compiled.cost_analysis(), after optimization"
    table = ("<table><tr><th></th><th>XLA, compiled</th><th>estimate</th></tr>"
             + "".join(f'<tr><th>{a}</th><td class="n">{_e(b)}</td><td class="n">{_e(c)}</td></tr>'
                       for a, b, c in rows) + "</table>")
    notes = "".join(f"<li>{_e(n)}</li>" for n in cost.get("notes") or [])
    eager = ""
    if isinstance(eager_figures, dict) and eager_figures.get("ops") is not None:
        eager = (f"<p>Called without jax.jit (op by op): {_e(_num(eager_figures['ops']))} dispatched ops, "
                 f"{_e(_bytes(eager_figures.get('materialized_bytes')))} materialized.</p>")
    labels = f'<p class="meta">XLA, compiled: {_e(xla)}.<br>estimate: {_e(estimate.get("label", "—"))}.</p>'
    timed = cost.get("time")
    if timed:
        labels += (f'<p>Time per call: {_e(seconds_text(timed["seconds"]))} ({_e(timed["bound"])}-bound) '
                   f'<span class="meta">{_e(timed["label"])}.</span></p>')
    return (f'<h2>Cost per call</h2><div class="tables">{table}</div>{labels}{eager}'
            + (f"<ul>{notes}</ul>" if notes else ""))


def _memory(report: dict[str, Any]) -> str:
    """The memory section: memory_analysis(), each differentiated loop's stacked residuals, the
    copies of carried buffers inside loop bodies (rows of the explained file light up their line)."""
    section = report.get("memory") or {}
    analysis = section.get("analysis") or (report.get("cost") or {}).get("memory") or {}
    mem = ("<table><tr><th>memory_analysis</th><th>bytes</th></tr>"
           + "".join(f'<tr><th>{name}</th><td class="n">{_e(_bytes(analysis.get(key)))}</td></tr>'
                     for name, key in (("arguments", "argument_bytes"), ("outputs", "output_bytes"),
                                       ("temporaries", "temp_bytes"), ("aliased", "alias_bytes")))
           + "</table>")
    loops = section.get("differentiated_loops") or []
    if loops:
        rows = "".join(
            f'<tr{_xref(loop, report)}><td>{_e(memory_place(loop, report))}</td>'
            f'<td class="n">{_e(_num(loop.get("trips")))}</td><td><code>{_e(r.get("shape"))}</code></td>'
            f'<td class="n">{_e(_bytes(r.get("bytes")))}</td><td>{_e(r.get("made_at"))}</td></tr>'
            for loop in loops for r in loop.get("residuals") or [])
        totals = "".join(f"<li>{_e(memory_place(loop, report))}: {_e(_bytes(loop.get('total_bytes')))} of "
                         "residuals</li>" for loop in loops)
        residuals = ("<table><tr><th>loop</th><th>iterations</th><th>residual</th><th>bytes</th>"
                     f"<th>made at</th></tr>{rows}</table><ul>{totals}</ul>")
    else:
        residuals = '<p class="empty">no differentiated loop</p>'
    copies = section.get("loop_copies")
    if copies is None:
        copied = '<p class="empty">not compiled</p>'
    elif not copies:
        copied = '<p class="empty">no copy inside a loop body</p>'
    else:
        copied = ("<table><tr><th>loop</th><th>copies</th><th>per iteration</th><th>iterations</th>"
                  "<th>per call</th></tr>"
                  + "".join(f'<tr{_xref(loop, report)}><td>{_e(memory_place(loop, report))}</td>'
                            f'<td><code>{_e(", ".join(str(c.get("shape")) for c in loop.get("copies") or []))}'
                            f'</code></td><td class="n">{_e(_bytes(loop.get("bytes_per_iteration")))}</td>'
                            f'<td class="n">{_e(_num(loop.get("trips")))}</td>'
                            f'<td class="n">{_e(_bytes(loop.get("total_bytes")))}</td></tr>' for loop in copies)
                  + "</table>")
    hbm = section.get("hbm")
    if hbm:
        share = f" ({hbm['share']:.1%})" if hbm.get("share") is not None else ""
        mem += (f'<p>HBM of one {_e((report.get("chip") or {}).get("chip_label", "TPU"))} chip: '
                f'{_e(_bytes(hbm.get("peak_bytes")))} of {_e(_bytes(hbm.get("hbm_bytes")))}{_e(share)}'
                + (f': {_e(hbm["note"])}' if hbm.get("note") else "") + "</p>")
    return (f'<h2>Memory</h2><div class="tables">{mem}</div>'
            f"<h3>Residuals saved by differentiated loops</h3>{residuals}"
            f"<h3>Copies of carried buffers inside loop bodies</h3>{copied}")


def _collectives_here(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The collectives made by a line of the explained file."""
    section = report.get("communication") or {}
    path = (report.get("target") or {}).get("path")
    return [c for c in section.get("collectives") or [] if c.get("line") is not None and c.get("path") == path]


def _collective_marks(report: dict[str, Any]) -> dict[int, str]:
    """line -> badges naming the collectives it made (and their runs per call inside a loop)."""
    marks: dict[int, str] = {}
    for c in _collectives_here(report):
        runs = f" ×{_num(c.get('runs_per_call'))}" if c.get("in_loop") else ""
        title = f"{c.get('shape')} over {', '.join(c.get('axes') or ['?'])}, {_bytes(c.get('bytes'))} per run"
        marks[c["line"]] = marks.get(c["line"], "") + \
            f'<span class="badge comm" title="{_e(title)}">{_e(c.get("kind"))}{_e(runs)}</span>'
    return marks


def _collective_place(collective: dict[str, Any], report: dict[str, Any]) -> str:
    if collective.get("line") is not None:
        return memory_place(collective, report)
    return f"by {collective['cause']}" if collective.get("cause") else "no source line"


def _communication(report: dict[str, Any]) -> str:
    """The communication section of a program partitioned over several devices (none otherwise):
    its collectives (rows light up their source line) and the per-device memory."""
    section = report.get("communication") or {}
    if not section.get("sharded"):
        return ""
    mesh = section.get("mesh") or {}
    over = ", ".join(f"{n}={s}" for n, s in zip(mesh.get("axis_names") or [], mesh.get("shape") or []))
    head = (f'<h2>Communication</h2><p class="meta">{_e(section.get("devices"))} devices'
            + (f", mesh {_e(over)}" if over else "") + ". Arguments "
            + _e(", ".join(s or "chosen by XLA" for s in section.get("arguments") or []) or "—") + "; outputs "
            + _e(", ".join(s or "chosen by XLA" for s in section.get("outputs") or []) or "—") + ".</p>")
    collectives = section.get("collectives") or []
    if collectives:
        rows = "".join(
            f'<tr{_xref(c, report)}><td>{_e(_collective_place(c, report))}</td>'
            f'<td><code>{_e(c.get("kind"))}</code></td><td><code>{_e(c.get("shape"))}</code></td>'
            f'<td>{_e(", ".join(c.get("axes") or []) if c.get("axes") is not None else "?")}</td>'
            f'<td class="n">{_e(_bytes(c.get("bytes")))}</td>'
            f'<td>{_e(memory_place({"line": c.get("loop_line"), "path": c.get("path")}, report) if c.get("in_loop") else "—")}</td>'
            f'<td class="n">{_e(_num(c.get("runs_per_call")))}</td><td class="n">{_e(_bytes(c.get("bytes_per_call")))}</td></tr>'
            for c in collectives)
        table = ("<table><tr><th>source</th><th>collective</th><th>shape</th><th>mesh axes</th><th>bytes</th>"
                 f"<th>loop</th><th>runs per call</th><th>bytes per call</th></tr>{rows}</table>"
                 f'<p class="meta">bytes: {_e(section.get("bytes_label"))}.</p>')
    else:
        table = '<p class="empty">no collective: each device computes its part without communicating</p>'
    memory = section.get("memory") or {}
    per_device, unsharded = memory.get("per_device") or {}, memory.get("unsharded") or {}
    mem = ("<table><tr><th></th><th>per device</th><th>unsharded</th></tr>"
           + "".join(f'<tr><th>{name}</th><td class="n">{_e(_bytes(per_device.get(key)))}</td>'
                     f'<td class="n">{_e(_bytes(unsharded.get(key)))}</td></tr>'
                     for name, key in (("arguments", "argument_bytes"), ("outputs", "output_bytes"),
                                       ("temporaries", "temp_bytes")))
           + f'</table><p class="meta">{_e(memory.get("unsharded_label"))}.</p>')
    return head + table + mem


def _xref(entry: dict[str, Any], report: dict[str, Any]) -> str:
    """A row of the explained file's line lights up with it."""
    if entry.get("line") is None or entry.get("path") not in (None, (report.get("target") or {}).get("path")):
        return ""
    return f' class="xref" data-line="{_e(entry["line"])}"'


def _duplicates(report: dict[str, Any]) -> str:
    hlo = report.get("hlo") or {}
    duplicates = hlo.get("duplicates") or []
    if not duplicates:
        note = "none: every operation appears once." if hlo.get("instructions") else "no optimized HLO."
        return f'<h2>Duplicated operations</h2><p class="empty">{note}</p>'
    names = {i.get("id"): i.get("name") for i in hlo.get("instructions") or []}
    head = ("<tr><th>op</th><th>line</th><th>count</th><th>classification</th><th>cause</th>"
            "<th>extra FLOPs</th><th>extra bytes</th><th>instructions</th><th>explanation</th></tr>")
    body = "".join(
        f'<tr class="xref" data-line="{_e(d.get("line"))}"><td><code>{_e(d.get("opcode"))}</code></td>'
        f'<td class="n">{_e(d.get("line"))}</td><td class="n">{_e(d.get("count"))}</td>'
        f'<td>{_e(_KINDS.get(d.get("classification"), d.get("classification")))}</td>'
        f'<td>{_e(d.get("cause") or "—")}</td><td class="n">{_e(_num(d.get("extra_flops")))}</td>'
        f'<td class="n">{_e(_bytes(d.get("extra_bytes")))}</td>'
        f'<td><code>{_e(", ".join(str(names.get(i, i)) for i in d.get("instruction_ids") or []))}</code></td>'
        f'<td>{_e(d.get("explanation"))}</td></tr>' for d in duplicates)
    return f"<h2>Duplicated operations</h2><table>{head}{body}</table>"


def _figure(key: str, value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(map(str, value)) or "—"
    return _bytes(value) if "bytes" in key else _num(value)


def _cell(key: str, value: Any) -> str:
    numeric = ' class="n"' if isinstance(value, (int, float)) else ""
    return f"<td{numeric}>{_e(_figure(key, value))}</td>"


def _cost_table(before: Any, after: Any) -> str:
    keys = list(dict.fromkeys([*(before or {}), *(after or {})]))
    if not keys:
        return ""
    return ("<table><tr><th></th><th>before</th><th>after fix</th></tr>"
            + "".join(f'<tr><th>{_e(k.replace("_", " "))}</th>{_cell(k, (before or {}).get(k))}'
                      f"{_cell(k, (after or {}).get(k))}</tr>" for k in keys)
            + "</table>")


def _findings(report: dict[str, Any]) -> str:
    findings = report.get("findings") or []
    if not findings:
        return '<h2>Findings</h2><p class="empty">No findings for this function.</p>'
    cards = []
    for f in findings:
        eager = f.get("eager") or {}
        compiled = _cost_table(f.get("cost_before"), f.get("cost_after"))
        eager_table = _cost_table(eager.get("before"), eager.get("after"))
        applicability = f' ({_e(f["applicability"])})' if f.get("applicability") else ""
        # Only a finding in the explained file cross-references the source pane's lines.
        xref = f' xref" data-line="{_e(f.get("line"))}' if in_explained_file(f, report) else ""
        cards.append(
            f'<div class="finding{xref}">'
            f'<p><b>{_e(f.get("code"))}</b> <code>{_e(f.get("name"))}</code> · {_e(finding_place(f, report))}</p>'
            f'<p>{_e(f.get("message"))}</p>'
            + (f"<p>Fix{applicability}: {_e(f['fix'])}</p>" if f.get("fix") else "")
            + '<div class="tables">'
            + (f"<div><p>Compiled cost (under jit)</p>{compiled}</div>" if compiled else "")
            + (f"<div><p>Eager (no jit)</p>{eager_table}</div>" if eager_table else "") + "</div>"
            + f'<p class="verdict">{_e(f.get("verdict"))}</p></div>')
    return "<h2>Findings</h2>" + "".join(cards)
