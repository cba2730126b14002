"""Hypothesis strategies for programs built around each fixable pattern: the inputs of the fixer's
differential test (test_fix_fuzz.py).

A program is a module: an import header in one of several spellings (aliases, ``from`` imports),
then one to three fragments, each a rule's pattern (or a near miss of it) written with drawn names
(ASCII and not), operators, literal values, comments, line breaks inside calls and, for JX203,
loops that change what the jitted lambda reads. The generator knows what each fragment computes
(its entry functions and their float32 argument shapes) and whether its fix must be applied
("fixed"), must not be ("kept") or may be ("either").
"""
from __future__ import annotations

from dataclasses import dataclass

from hypothesis import strategies as st


@dataclass(frozen=True)
class Entry:
    """A function of the program to run: its name and the shapes of its float32 arguments."""

    name: str
    shapes: tuple[tuple[int, ...], ...]


@dataclass(frozen=True)
class Fragment:
    code: str  # the rule whose pattern this is
    variant: str  # what was drawn, for the statistics
    text: str  # top-level statements, "\n" line endings
    entries: tuple[Entry, ...]
    expect: str  # "fixed", "kept" (the text must stay as written) or "either"


@dataclass(frozen=True)
class Style:
    """How the program spells its imports; every fragment uses the same."""

    jax: str  # the name jax is bound to
    jnp: str  # the name jax.numpy is bound to
    np: str  # the name numpy is bound to
    jit: str  # an expression for jax.jit
    vmap: str  # an expression for jax.vmap
    header: str


@dataclass(frozen=True)
class Program:
    style: Style
    fragments: tuple[Fragment, ...]
    newline: str  # "\n" or "\r\n"
    bom: bool

    @property
    def text(self) -> str:
        """The module as written to disk (str; the test encodes it)."""
        body = "\n\n\n".join([self.style.header.rstrip("\n")] + [f.text.rstrip("\n") for f in self.fragments]) + "\n"
        return ("\ufeff" if self.bom else "") + body.replace("\n", self.newline)


# Parameter names: ASCII and not (ast counts columns in UTF-8 bytes, jaxlint in characters).
NAMES = ["x", "y", "a", "b", "u", "v", "row", "vals", "data", "inp", "données", "δ", "数据", "xs_2"]
COMMENTS = ["# note", "# keep: see issue", "# naïve", "# 計算", "# TODO(me): check", "#"]


@st.composite
def styles(draw: st.DrawFn) -> Style:
    jax = draw(st.sampled_from(["jax", "J", "jx"]))
    jnp = draw(st.sampled_from(["jnp", "jn", "numpy_"]))
    np = draw(st.sampled_from(["np", "onp"]))
    lines = ["import jax" if jax == "jax" else f"import jax as {jax}",
             "import jax.numpy as jnp" if jnp == "jnp" else draw(st.sampled_from(
                 [f"import jax.numpy as {jnp}", f"from jax import numpy as {jnp}"])),
             f"import numpy as {np}" if np != "np" else "import numpy as np",
             "from functools import partial"]
    jit, vmap = f"{jax}.jit", f"{jax}.vmap"
    if draw(st.booleans()):
        lines.append("from jax import jit, vmap")
        jit, vmap = "jit", "vmap"
    elif draw(st.booleans()):
        lines.append("from jax import vmap as batched")
        vmap = "batched"
    if draw(st.booleans()):
        lines.insert(0, draw(st.sampled_from(['"""A generated module."""', "# A generated module.", "# -*- coding: utf-8 -*-"])))
    return Style(jax, jnp, np, jit, vmap, "\n".join(lines) + "\n")


def comment(draw: st.DrawFn) -> str:
    """An end-of-line comment (with its two spaces) or nothing."""
    return draw(st.sampled_from([""] + [f"  {c}" for c in COMMENTS]))


def two_names(draw: st.DrawFn) -> tuple[str, str]:
    a, b = draw(st.lists(st.sampled_from(NAMES), min_size=2, max_size=2, unique=True))
    return a, b


def hint(names: tuple[str, ...], shapes: tuple[tuple[int, ...], ...]) -> str:
    return "# jaxlint: args " + ", ".join(f"{n}=f32[{','.join(map(str, s))}]" for n, s in zip(names, shapes))


@st.composite
def jx101(draw: st.DrawFn, style: Style, k: int) -> Fragment:
    """``vmap`` with an unbatched output that every use indexes with one row (JX101's fix)."""
    a, b = two_names(draw)
    o1, o2 = draw(st.sampled_from([("p", "q"), ("out", "rest"), ("x0", "y0"), ("第一", "第二")]))
    op = draw(st.sampled_from(["+", "*", "-"]))
    const = draw(st.sampled_from(["1", "2.0", "0.5"]))
    in_axes = draw(st.sampled_from(["(None, 0)", "[None, 0]", "(None, 0,)"]))
    uses = {"first": (f"{o1}[0], {o2}", "fixed"), "last": (f"{o1}[-1], {o2}", "fixed"),
            "arith": (f"{o1}[0] * 2.0 + {o2}", "fixed"), "twice": (f"{o1}[0] + {o1}[1], {o2}", "either"),
            "whole": (f"{o1}.sum() + {o2}", "kept"), "later": (f"{o2}, {o1}[0]", "fixed")}
    use = draw(st.sampled_from(sorted(uses)))
    returned, expect = uses[use]
    bb, fn = f"blackbox_{k}", f"mapped_{k}"
    if draw(st.booleans()):
        call = f"{style.vmap}({bb}, in_axes={in_axes})({a}, {b})"
    else:  # arguments over several lines, maybe with a comment among them
        call = f"{style.vmap}(\n        {bb},{comment(draw)}\n        in_axes={in_axes},\n    )({a}, {b})"
    text = (f"def {bb}({a}, {b}):{comment(draw)}\n"
            f"    {a} = {a} {op} {const}\n"
            f"    {b} = {a} * {b}\n"
            f"    return {a}, {b}\n\n\n"
            f"{hint((a, b), ((3,), (4, 3)))}\n"
            f"@{style.jit}\n"
            f"def {fn}({a}, {b}):\n"
            f"    {o1}, {o2} = {call}{comment(draw)}\n"
            f"    return {returned}\n")
    return Fragment("JX101", use, text, (Entry(fn, ((3,), (4, 3))),), expect)


@st.composite
def jx303(draw: st.DrawFn, style: Style, k: int) -> Fragment:
    """A gather with a literal index that is a slice (JX303's fix), or one that is not."""
    x = draw(st.sampled_from(NAMES))
    module = draw(st.sampled_from([style.np, style.jnp]))
    kinds = {"arange": (lambda s, e, step: f"{module}.arange({s}, {e})", "fixed"),
             "arange-stop": (lambda s, e, step: f"{module}.arange({e})", "fixed"),
             "arange-step": (lambda s, e, step: f"{module}.arange({s}, {e}, {step})", "fixed"),
             "list": (lambda s, e, step: f"{module}.array({list(range(s, e, step))})", "fixed"),
             "asarray-dtype": (lambda s, e, step: f"{module}.asarray({list(range(s, e, step))}, dtype={style.jnp}.int32)",
                               "fixed"),
             "negative": (lambda s, e, step: f"{module}.array([-3, -2, -1])", "fixed"),
             "permutation": (lambda s, e, step: f"{module}.array([2, 0, 1])", "kept"),
             "mixed-signs": (lambda s, e, step: f"{module}.array([-1, 0])", "kept")}
    kind = draw(st.sampled_from(sorted(kinds)))
    make, expect = kinds[kind]
    s = draw(st.integers(0, 3))
    e = draw(st.integers(s + 2, 8))
    step = draw(st.integers(1, 3))
    if len(range(s, e, step)) < 2:
        step = 1
    index = make(s, e, step)
    leading = draw(st.booleans())  # gather along axis 0 of (8, 3) or axis 1 of (3, 8)
    shape = (8, 3) if leading else (3, 8)
    subscript = f"{x}[{index}]" if leading else f"{x}[:, {index}]"
    fn = f"gather_{k}"
    text = (f"{hint((x,), (shape,))}\n"
            f"@{style.jit}\n"
            f"def {fn}({x}):{comment(draw)}\n"
            f"    return {subscript} * 2.0{comment(draw)}\n")
    return Fragment("JX303", kind, text, (Entry(fn, (shape,)),), expect)


@st.composite
def jx304(draw: st.DrawFn, style: Style, k: int) -> Fragment:
    """A max/min of a broadcast along the broadcast axes (JX304's fix), in drawn surroundings
    where the replacement may need parentheses."""
    x = draw(st.sampled_from(NAMES))
    j = style.jnp
    reduction = draw(st.sampled_from(["max", "min", "amax", "amin"]))
    operand = draw(st.sampled_from([x, f"{x} + 1.0", f"{x} * 2.0", f"-{x}", f"{j}.sin({x})", f"{x} ** 2",
                                    f"{x} if True else {x}", f"{x}[::-1]"]))
    n = draw(st.integers(334, 400))  # at least 1000 elements: JX304's min-elements
    if draw(st.booleans()) and reduction in ("max", "min"):
        call = f"{j}.broadcast_to({operand}, ({n}, 3)).{reduction}(axis=0)"
    else:
        call = f"{j}.{reduction}({j}.broadcast_to({operand}, ({n}, 3)), axis=0)"
    around = draw(st.sampled_from(["{}", "{} + 1.0", "2.0 * {}", "-{}", "{} ** 2", "{}[0]", "{}.sum()",
                                   "{}.T", "({})", "[{}][0]", "{}, 1.0"]))
    assigned = draw(st.booleans())
    fn = f"reduced_{k}"
    body = (f"    y = {around.format(call)}{comment(draw)}\n    return y\n" if assigned
            else f"    return {around.format(call)}{comment(draw)}\n")
    text = f"{hint((x,), ((3,),))}\n@{style.jit}\ndef {fn}({x}):\n{body}"
    return Fragment("JX304", f"{reduction} {around}", text, (Entry(fn, ((3,),)),), "fixed")


# JX203: (name, lines before the loop, first line in the loop, the rate the lambda reads, expect).
# "kept": the loop changes what the lambda reads, so hoisting it would freeze the first value.
LOOP_STATES = [
    ("constant", "", "", "0.1", "fixed"),
    ("unrelated", "count = 0", "count += 1", "0.1", "fixed"),
    ("item", "hp = [0.1]", "hp[0] = 0.1 * 0.5 ** {step}", "hp[0]", "kept"),
    ("attribute", "opt = Opt{k}()", "opt.lr = 0.1 * 0.5 ** {step}", "opt.lr", "kept"),
    ("method", "sched = Opt{k}()", "sched.update(0.1 * 0.5 ** {step})", "sched.lr", "kept"),
    ("rebound", "lr = 0.1", "lr = 0.1 * 0.5 ** {step}", "lr", "kept"),
    ("augmented", "lr = 0.1", "lr *= 0.5", "lr", "kept"),
    ("dict", 'cfg = {{"lr": 0.1}}', 'cfg["lr"] *= 0.5', 'cfg["lr"]', "kept"),
    ("passed", "hp = [0.1]", "decay_{k}(hp)", "hp[0]", "kept"),
    ("global", "", "set_rate_{k}(0.1 * 0.5 ** {step})", "RATE_{k}", "kept"),
    ("loop-variable", "", "", "(0.1 + 0.01 * {step})", "kept"),
]


@st.composite
def jx203(draw: st.DrawFn, style: Style, k: int) -> Fragment:
    """``jax.jit(lambda ...)`` called in a loop (JX203's hoist), with loops that do and do not
    change what the lambda reads, maybe inside an outer loop that does or does not."""
    w, x = two_names(draw)
    j = style.jnp
    name, before, first, rate, expect = draw(st.sampled_from(LOOP_STATES))
    step = draw(st.sampled_from(["step", "i", "_t"]))
    if name == "loop-variable" and step == "_t":
        step = "i"
    fill = {"step": step, "k": k}
    before, first, rate = before.format(**fill), first.format(**fill), rate.format(**fill)
    outer = draw(st.sampled_from(["", "epochs", "decaying epochs"]))
    if outer == "decaying epochs":  # the outer loop changes the rate: a hoist stays inside it
        name, before, rate = f"{name} in decaying epochs", "; ".join(filter(None, [before, "decay = 1.0"])), \
            f"{rate} * decay"
        expect = "kept" if expect == "kept" else "either"
    elif outer:
        name = f"{name} in epochs"
    support = (f"class Opt{k}:\n    lr = 0.1\n\n    def update(self, lr):\n        self.lr = lr\n\n\n"
               f"def decay_{k}(h):\n    h[0] *= 0.5\n\n\n"
               f"RATE_{k} = 0.1\n\n\n"
               f"def set_rate_{k}(value):\n    global RATE_{k}\n    RATE_{k} = value\n\n\n")
    jitted = f"{style.jit}(lambda {w}: {w} - {rate} * {j}.sum({x} @ {w}))({w})"
    body = ([first] if first else []) + [f"{w} = {jitted}{comment(draw)}"]
    if draw(st.booleans()):
        loop = [f"for {step} in range(3):{comment(draw)}", *(f"    {line}" for line in body)]
    else:
        loop = [f"{step} = 0", f"while {step} < 3:", *(f"    {line}" for line in body), f"    {step} += 1"]
    if outer:
        decay = ["    decay = decay * 0.5"] if outer == "decaying epochs" else []
        loop = ["for epoch in range(2):", *decay, *(f"    {line}" for line in loop)]
    if draw(st.booleans()):
        loop.insert(0, "# the training loop")
    fn = f"train_{k}"
    text = (support + f"{hint((w, x), ((3,), (2, 3)))}\n"
            f"def {fn}({w}, {x}):\n" + (f"    {before}\n" if before else "")
            + "".join(f"    {line}\n" for line in loop) + f"    return {w}\n")
    return Fragment("JX203", name, text, (Entry(fn, ((3,), (2, 3))),), expect)


@st.composite
def jx501(draw: st.DrawFn, style: Style, k: int) -> Fragment:
    """``where`` guarding a log or sqrt (JX501's unsafe fix: forward values must not change)."""
    x = draw(st.sampled_from(NAMES))
    j = style.jnp
    function = draw(st.sampled_from(["log", "sqrt"]))
    condition = draw(st.sampled_from([f"{x} > 0", f"0 < {x}", f"{x} > 0.5", f"{x} >= 1e-3"]))
    fn = f"guarded_{k}"
    text = (f"{hint((x,), ((5,),))}\n@{style.jit}\ndef {fn}({x}):\n"
            f"    return {j}.where({condition}, {j}.{function}({x}), 0.0){comment(draw)}\n")
    return Fragment("JX501", f"{function} {condition.replace(x, 'x')}", text, (Entry(fn, ((5,),)),), "either")


@st.composite
def jx204(draw: st.DrawFn, style: Style, k: int) -> Fragment:
    """A list passed as a static argument (JX204's unsafe fix: a tuple, same values)."""
    x, reps = two_names(draw)
    j = style.jnp
    tile, fn = f"tile_{k}", f"batch_{k}"
    value = draw(st.sampled_from(["[2, 1]", "[1, 2]", "[ 2,1 ]"]))
    text = (f"@partial({style.jax}.jit, static_argnums=(1,))\n"
            f"def {tile}({x}, {reps}):\n    return {j}.tile({x}, {reps})\n\n\n"
            f"{hint((x,), ((2, 3),))}\ndef {fn}({x}):\n    return {tile}({x}, {value}){comment(draw)}\n\n\n"
            f"{tile}.lower({j}.ones((2, 3)), (2, 1))\n")
    return Fragment("JX204", value, text, (Entry(fn, ((2, 3),)),), "either")


PATTERNS = {"JX101": jx101, "JX203": jx203, "JX204": jx204, "JX303": jx303, "JX304": jx304, "JX501": jx501}


@st.composite
def programs(draw: st.DrawFn) -> Program:
    style = draw(styles())
    codes = draw(st.lists(st.sampled_from(sorted(PATTERNS)), min_size=1, max_size=3))
    fragments = tuple(draw(PATTERNS[code](style, k)) for k, code in enumerate(codes))
    return Program(style, fragments, draw(st.sampled_from(["\n", "\r\n"])), draw(st.booleans()))
