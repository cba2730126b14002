"""Each operation computed more than once, classified and priced in plain words."""
from __future__ import annotations

from typing import Any

from jaxlint.explain import duplicates, hlomap
from jaxlint.explain.target import code
from jaxlint.ir import hlo

# jaxpr primitive -> the HLO opcode it becomes.
OPCODES = {"add": "add", "add_any": "add", "sub": "subtract", "mul": "multiply", "div": "divide",
           "max": "maximum", "min": "minimum", "neg": "negate", "abs": "abs", "exp": "exponential",
           "expm1": "exponential-minus-one", "log": "log", "log1p": "log-plus-one", "tanh": "tanh",
           "logistic": "logistic", "sin": "sine", "cos": "cosine", "tan": "tan", "pow": "power",
           "sqrt": "sqrt", "rsqrt": "rsqrt", "cbrt": "cbrt", "atan2": "atan2", "erf": "erf",
           "dot_general": "dot", "conv_general_dilated": "convolution", "reduce_sum": "reduce",
           "reduce_max": "reduce", "reduce_min": "reduce", "reduce_prod": "reduce",
           "argmax": "reduce", "argmin": "reduce", "integer_pow": "multiply", "square": "multiply",
           "select_n": "select", "eq": "compare", "ne": "compare", "lt": "compare", "le": "compare",
           "gt": "compare", "ge": "compare", "convert_element_type": "convert", "sort": "sort"}
_NOUNS = {"add": "addition", "subtract": "subtraction", "multiply": "multiplication",
          "divide": "division", "compare": "comparison", "select": "selection", "convert": "conversion",
          "maximum": "maximum", "minimum": "minimum", "negate": "negation"}


class Context:
    """What the explanations refer to: the file's lines, the jaxpr listing, the HLO placement."""

    def __init__(self, module: hlo.Module, placed: list[hlomap.Placed], path: str, file_lines: list[str],
                 jaxpr: dict[str, Any]) -> None:
        self.module = module
        self.placed = placed
        self.path = path
        self.file_lines = file_lines
        self.jaxpr = jaxpr
        self.shape_of = hlomap.shapes(module)
        self.instructions = module.instructions()
        self.by_name = {entry.instruction.name: entry for entry in placed}

    def source(self, line: int | None) -> str:
        if line is None or not 1 <= line <= len(self.file_lines):
            return ""
        return code(self.file_lines[line - 1])

    def line(self, entry: hlomap.Placed) -> int | None:
        return self.module.line_in(entry.instruction, self.path)

    def fusion_root(self, fusion: str) -> hlo.Instruction | None:
        caller = self.by_name.get(fusion)
        callee = next((n for r, n in hlo.called(caller.instruction) if r == "calls"), None) if caller else None
        computation = self.module.computations.get(callee or "")
        return computation.root if computation is not None else None


def classify_all(context: Context) -> list[dict[str, Any]]:
    """The report's ``hlo.duplicates``: HLO duplicates, then source duplicates XLA merged."""
    entries = [_entry(context, group) for group in duplicates.find(context.module, context.placed)]
    for written in context.jaxpr.get("source_duplicates", []):
        _source_duplicate(context, written, entries)
    order = {"recomputed-expensive": 0, "duplicated-in-source": 1, "recomputed-cheap": 2,
             "cheap-fusion-duplication": 3}
    entries.sort(key=lambda e: (order.get(e["classification"], 9), -(e["extra_flops"] or 0), e["line"] or 0))
    return [{k: v for k, v in e.items() if not k.startswith("_")} for e in entries]


def _cost(context: Context, entry: hlomap.Placed) -> tuple[int, int, int]:
    """(FLOPs, transcendentals, bytes) one copy costs per call, beyond what computing it once costs."""
    instruction = entry.instruction
    flops, transcendentals = hlomap.flops(instruction, context.shape_of)
    trips = entry.trips or 1
    fused_param_bytes = sum(hlo.nbytes(context.shape_of.get(name, "")) for name in instruction.operands
                            if context.shape_of.get(name) and _is_parameter(context, name))
    if _fused_into_consumer(context, entry):
        # Fused into a consumer: it reads its inputs instead of the stored result.
        extra_bytes = max(fused_param_bytes - hlo.nbytes(instruction.shape), 0)
    else:
        extra_bytes = hlomap.operand_bytes(instruction, context.shape_of) + hlo.nbytes(instruction.shape)
    return (flops or 0) * trips, transcendentals * trips, extra_bytes * trips


def _fused_into_consumer(context: Context, entry: hlomap.Placed) -> bool:
    root = context.fusion_root(entry.fusion) if entry.fusion else None
    return root is not None and root.name != entry.instruction.name


def _is_parameter(context: Context, name: str) -> bool:
    found = context.instructions.get(name)
    return found is not None and found.opcode == "parameter"


def _where(context: Context, entry: hlomap.Placed) -> str:
    instruction = entry.instruction
    loop = f" in the body of {entry.loop}" + (f", x{entry.trips} per call" if entry.trips and entry.trips > 1 else "") \
        if entry.loop else ""
    if entry.fusion is None:
        return f"{instruction.name} (on its own{loop})"
    root = context.fusion_root(entry.fusion)
    if root is None or root.name == instruction.name:
        return f"{instruction.name} (its own fusion {entry.fusion}{loop})"
    made_by = context.module.line_in(root, context.path)
    return (f"{instruction.name} inside {entry.fusion} (which computes the {root.opcode}"
            + (f" of line {made_by}" if made_by else "") + f"{loop})")


def _entry(context: Context, group: list[hlomap.Placed]) -> dict[str, Any]:
    remat = [e for e in group if duplicates.REMAT_MARK in e.instruction.metadata.get("op_name", "")]
    primal = [e for e in group if e not in remat]
    # The copy that would remain if it were computed once: a primal, standalone one first.
    ordered = sorted(primal or group, key=lambda e: (_fused_into_consumer(context, e), e.loop is not None))
    keep = ordered[0]
    others = [e for e in group if e is not keep]
    opcode = keep.instruction.opcode
    lines = [context.line(e) for e in group]
    line = next((n for n in lines if n is not None), None)
    costs = [_cost(context, e) for e in others]
    extra_flops, extra_transcendentals, extra_bytes = (sum(c[i] for c in costs) for i in range(3))
    expensive = opcode in hlomap.EXPENSIVE
    distinct_lines = sorted({n for n in lines if n is not None})
    places = "; ".join(_where(context, e) for e in [keep] + others)
    unknown_trips = any(e.trips is None for e in group)
    if remat:
        classification = "recomputed-expensive" if expensive else "recomputed-cheap"
        cause = "remat (jax.checkpoint)"
    elif expensive:
        classification, cause = "recomputed-expensive", _cause(context, group)
    elif len({e.fusion for e in group}) > 1:
        classification, cause = "cheap-fusion-duplication", "fusion"
    else:
        classification, cause = "recomputed-cheap", _cause(context, group)
    entry = {"opcode": opcode, "line": line, "lines": distinct_lines, "count": len(group),
             "instruction_ids": [e.id for e in [keep] + others], "classification": classification,
             "cause": cause, "extra_flops": extra_flops, "extra_transcendentals": extra_transcendentals,
             "extra_bytes": extra_bytes, "per_iteration": unknown_trips}
    entry["_places"], entry["_shape"] = places, keep.instruction.shape
    entry["explanation"] = _explain(context, entry)
    entry["summary"] = _summary(context, entry, others)
    return entry


def _cause(context: Context, group: list[hlomap.Placed]) -> str | None:
    loops = {e.loop for e in group}
    computations = {e.instruction.computation for e in group if e.fusion is None}
    if len(loops) > 1 or len(computations) > 1:
        return "no CSE across a loop or branch boundary"
    stacks = {e.instruction.metadata.get("op_name", "").rsplit("/", 1)[0] for e in group}
    if len(stacks) > 1:
        return "a transform (" + " vs ".join(sorted(s.split("/", 1)[-1] or "(top)" for s in stacks)) + ")"
    if len({e.fusion for e in group}) > 1:
        return "fusion"
    return None


def _amount(count: int, noun: str) -> str:
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def _price(entry: dict[str, Any], shape: str) -> str:
    parts = []
    if entry["extra_flops"]:
        noun = _NOUNS.get(entry["opcode"])
        scalar = "scalar " if not hlo.arrays(shape) or not hlo.arrays(shape)[0][1] else ""
        if noun and entry["extra_flops"] == 1:
            parts.append(f"one extra {scalar}{noun} (1 FLOP)")
        else:
            parts.append(_amount(entry["extra_flops"], "extra FLOP"))
    if entry["extra_transcendentals"]:
        parts.append(_amount(entry["extra_transcendentals"], f"extra {entry['opcode']} evaluation"))
    if not parts:
        parts.append("no extra FLOPs by XLA's count")
    when = "per loop iteration" if entry["per_iteration"] else "per call"
    memory = f"; {_amount(entry['extra_bytes'], 'byte')} of extra memory traffic (estimate)" \
        if entry["extra_bytes"] else ""
    return f"{' and '.join(parts)} {when}{memory}"


def _explain(context: Context, entry: dict[str, Any]) -> str:
    line = entry["line"]
    what = f"the {entry['opcode']} of line {line} (`{context.source(line)}`)" if line else f"a {entry['opcode']}"
    head = f"{what[0].upper()}{what[1:]} appears {times(entry['count'])} in the optimized HLO: {entry['_places']}."
    shape = entry["_shape"]
    price = _price(entry, shape)
    kind = entry["classification"]
    if kind == "cheap-fusion-duplication":
        scalar = "scalar " if not hlo.arrays(shape) or not hlo.arrays(shape)[0][1] else ""
        once = _jaxpr_once(context, entry)
        return (f"{head} XLA's fusion duplicated this cheap {scalar}{entry['opcode']} into the consuming "
                f"fusion instead of writing it to memory and reading it back. It costs {price}. This is "
                f"by design: recomputing a cheap elementwise op is cheaper than a round trip through "
                f"memory.{once}")
    if entry["cause"] == "remat (jax.checkpoint)":
        return (f"{head} The copy marked rematted_computation is jax.checkpoint (remat) recomputing the "
                f"forward value in the backward pass instead of storing it: {price}. That is the "
                f"trade remat makes: compute for memory (the stored result would be "
                f"{_amount(hlo.nbytes(shape), 'byte')} per iteration).")
    if kind == "duplicated-in-source":
        return _source_text(context, entry, head, price)
    because = f" XLA did not merge the copies ({entry['cause']})." if entry["cause"] else ""
    return f"{head}{because} It costs {price}."


def times(count: int) -> str:
    return {1: "once", 2: "twice"}.get(count, f"{count} times")


def _summary(context: Context, entry: dict[str, Any], others: list[hlomap.Placed]) -> str:
    """One sentence for the report's summary."""
    line, opcode = entry["line"], entry["opcode"]
    what = f"The {opcode} of line {line} (`{context.source(line)}`)" if line else f"A {opcode}"
    price = _price(entry, entry["_shape"])
    kind = entry["classification"]
    if kind == "cheap-fusion-duplication":
        scalar = "scalar " if entry["_shape"] and not hlo.arrays(entry["_shape"])[0][1] else ""
        consumer = next((context.fusion_root(e.fusion) for e in others
                         if e.fusion and context.fusion_root(e.fusion) is not None
                         and context.fusion_root(e.fusion).name != e.instruction.name), None)
        into = f"the {consumer.opcode} fusion ({next(e.fusion for e in others if context.fusion_root(e.fusion) is consumer)})" \
            if consumer is not None else "several fusions"
        return (f"{what} appears {times(entry['count'])} in the optimized HLO because XLA's fusion duplicated "
                f"this cheap {scalar}{opcode} into {into}; it costs {price}, by design.")
    if entry["cause"] == "remat (jax.checkpoint)":
        return f"{what} is recomputed by jax.checkpoint (remat) in the backward pass: {price}."
    if kind == "duplicated-in-source":
        numbers = entry["lines"]
        where = (f"Lines {', '.join(str(n) for n in numbers[:-1])} and {numbers[-1]} compute" if len(numbers) > 1
                 else f"Line {numbers[0]} computes")
        again = "" if len(numbers) > 1 else " more than once"
        if entry["count"] <= 1:
            how = "merged them" if entry["count"] == 1 else "folded them into the operations using them"
            return f"{where} the same {opcode}{again}; XLA {how}, so it costs nothing compiled."
        return f"{where} the same {opcode}{again} and XLA kept {times(entry['count'])}: {price}."
    because = f" ({entry['cause']})" if entry["cause"] else ""
    return f"{what} is computed {times(entry['count'])}{because}: {price}."


def _jaxpr_once(context: Context, entry: dict[str, Any]) -> str:
    """" The jaxpr has it once (...)": the copies were made by XLA, not by a transform."""
    same = [line for line in context.jaxpr.get("lines", [])
            if line.get("line") == entry["line"] and OPCODES.get(line["primitive"]) == entry["opcode"]]
    if len(same) == 1:
        return (f" The traced program (jaxpr) computes it once (`{same[0]['text']}`): the copies were "
                "made by XLA after tracing, not by a JAX transform.")
    return ""


def _source_text(context: Context, entry: dict[str, Any], head: str, price: str) -> str:
    lines = entry["lines"]
    texts = " and ".join(f"line {n} (`{context.source(n)}`)" for n in lines)
    texts = texts[0].upper() + texts[1:]
    computes = f"{texts} {'compute' if len(lines) > 1 else 'computes'} the same {entry['opcode']} of the " \
               f"same inputs{'' if len(lines) > 1 else ' more than once'}."
    if entry["count"] == 1:
        return (f"{computes} XLA merged them (common-subexpression elimination): compiled, it costs "
                "nothing; only the source repeats it.")
    if entry["count"] == 0:
        return (f"{computes} The optimized HLO has no {entry['opcode']} from these lines: XLA's simplifier "
                "folded them into the operations that use them (see those lines' instructions), so the "
                "repetition itself costs nothing compiled.")
    return f"{head} {computes} XLA kept the copies: {price}. Compute it once and reuse it."


def _source_duplicate(context: Context, written: dict[str, Any], entries: list[dict[str, Any]]) -> None:
    """Fold a computation written twice in the source into the HLO entries (or add it)."""
    opcode = OPCODES.get(written["primitive"], written["primitive"])
    lines = set(written["lines"])
    shape = _hlo_type(written.get("type", ""))
    found = [e for e in context.placed if e.instruction.opcode == opcode and context.line(e) in lines
             and hlo.plain_shape(e.instruction.shape) == shape]
    ids = {e.id for e in found}
    for entry in entries:
        if ids and ids <= set(entry["instruction_ids"]) and entry["cause"] != "remat (jax.checkpoint)":
            entry["classification"], entry["cause"] = "duplicated-in-source", "written twice in the source"
            entry["lines"] = sorted(lines | set(entry["lines"]))
            entry["explanation"] = _explain(context, entry)
            entry["summary"] = _summary(context, entry, [])
            return
    # No group of equal values holds them: XLA computes this value once at most.
    found = found[:1]
    entry = {"opcode": opcode, "line": min(lines), "lines": sorted(lines), "count": len(found),
             "instruction_ids": [e.id for e in found],
             "classification": "duplicated-in-source", "cause": "written twice in the source",
             "extra_flops": 0, "extra_transcendentals": 0, "extra_bytes": 0, "per_iteration": False,
             "jaxpr_ids": written["ids"], "_places": "", "_shape": ""}
    entry["explanation"] = _explain(context, entry)
    entry["summary"] = _summary(context, entry, [])
    entries.append(entry)


def _hlo_type(jaxpr_type: str) -> str:
    """``i32[3]`` -> ``s32[3]``, ``bool[]`` -> ``pred[]``: a jaxpr type as HLO prints it."""
    dtype, bracket, dims = jaxpr_type.partition("[")
    dtype = {"bool": "pred"}.get(dtype, "s" + dtype[1:] if dtype.startswith("i") else dtype)
    return f"{dtype}{bracket}{dims.replace(' ', '')}"


def remat_merged(context: Context, duplicates_found: list[dict[str, Any]]) -> list[str]:
    """Notes for recomputations jax.checkpoint asked for that the optimized HLO does not do."""
    notes = []
    recomputed = {(d["opcode"], d["line"]) for d in duplicates_found if d["cause"] == "remat (jax.checkpoint)"}
    for item in context.jaxpr.get("remat_recomputes", []):
        opcode = OPCODES.get(item["primitive"])
        if opcode not in hlomap.EXPENSIVE or (opcode, item["line"]) in recomputed:
            continue
        notes.append(f"jax.checkpoint asks the backward pass to recompute the {item['primitive']} of line "
                     f"{item['line']} (`{context.source(item['line'])}`), but the optimized HLO computes it "
                     "once: XLA merged the recomputation with the forward computation, so nothing is "
                     "recomputed (and no memory saved) for it on this backend.")
    return notes
