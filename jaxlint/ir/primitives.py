"""What each primitive does, in one table keyed by primitive name, with a generic fallback for
the primitives it does not list: the way JAX's key-reuse checker keys its signatures by primitive
(``jax.experimental.key_reuse._core.key_reuse_signatures`` and its ``unknown_signature``).

Rules and IR helpers ask ``traits(name)`` or use the named sets below (queries of the table)
for what a primitive is; what a rule matches or says about particular primitives (a pattern's
path, a message's wording) stays in the rule. Names that are not primitives of every supported
JAX stay in the table on purpose: ``pjit`` (``jit`` before 0.7.0), ``debug_callback`` (what
``jax.debug.print`` was before 0.8.0), ``copy_p`` and ``expand_dims`` (older or alternative
spellings, harmless where absent). Plain Python: no JAX.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable, Iterable, Literal

Cost = Literal["elementwise", "transcendental", "reduction", "data", "contraction"]


@dataclass(frozen=True)
class KeyUse:
    """How an op treats PRNG-key operands (JX401), in the terms of JAX's key-reuse checker:
    which operands it consumes ("sinks") and which outputs are its operands' keys ("forward")."""

    # Operand positions it consumes; None: every key-typed operand (the generic fallback, as JAX's
    # ``unknown_signature``).
    sinks: tuple[int, ...] | None = None
    # "same": output 0 holds operand 0's keys in the same positions; "view": a static view of
    # operand 0 (slice, squeeze, reshape, transpose: the positions move); "each": output i is
    # operand i. None: the outputs are new keys (or no keys).
    forward: Literal["same", "view", "each"] | None = None
    # How JAX's checker treats it when it differs ("" when it agrees); rules/JX401.md says why.
    jax: str = ""


@dataclass(frozen=True)
class Traits:
    """One row of the table: what a primitive does, as the IR helpers and rules ask it."""

    # How ir.costs counts its FLOPs: one per output element, one per input element (reduction),
    # none (data movement), or by its contraction (dot_general, conv). "transcendental": an
    # elementwise op XLA treats as expensive (never duplicated by fusion).
    cost: Cost = "elementwise"
    # "shape": the operand's numbers in a new shape (broadcast, reshape, squeeze); "copy": the same
    # numbers, the same shape. None: the output's numbers are computed.
    layout: Literal["shape", "copy"] | None = None
    # No gradient flows back through it (its derivative is zero or undefined everywhere).
    gradient_free: bool = False
    # Elementwise kind: "binary" arithmetic whose result takes the operands' promoted dtype,
    # "compare" (a boolean result); None for the rest.
    elementwise: Literal["binary", "compare"] | None = None
    # Its output lies in a small range (exp of it neither overflows nor underflows).
    bounded: bool = False
    # Which operands it is linear in: "all" jointly, "one" (bilinear: linear while at most one
    # operand varies), "first" (div, pad), "cases" (select_n: all but the predicate).
    linear: Literal["all", "one", "first", "cases"] | None = None
    # A side effect: a host "callback", an "rng" state or device "io".
    effect: Literal["callback", "rng", "io"] | None = None
    # JAX emits it between a constant index array and its use (negative-index wrapping, the
    # trailing index dimension, dtype casts): built from these and constants, an index is constant.
    index_arithmetic: bool = False
    # What its nested jaxpr is: a "jit" or other "call" (inlined by ir.build), a "remat" (inlined
    # by ir.build, kept as a block by explain's listing), a "loop" body or a "branch".
    nested: Literal["jit", "call", "remat", "loop", "branch"] | None = None
    # Its gradient is the user's own rule (custom_jvp, custom_vjp), not its body's: ir.build marks
    # the inlined body's ops (Op.custom_derivative).
    custom_derivative: bool = False
    # Integer arithmetic whose result wraps around silently when the exact value leaves the dtype's
    # range (JX507 reports it where the bounds of its operands prove it).
    wraps: bool = False
    # Part of JAX's PRNG (keys, raw bits, the threefry hash): integer arithmetic beside it is
    # jax.random's own hashing, wraparound meant (JX507 stays quiet there).
    prng: bool = False
    key: KeyUse = field(default_factory=KeyUse)


GENERIC = Traits()  # the fallback row: computed elementwise numbers, a gradient, keys consumed
_TABLE: dict[str, Traits] = {}


def _set(names: Iterable[str], **values: object) -> None:
    for name in names:
        _TABLE[name] = replace(_TABLE.get(name, GENERIC), **values)  # type: ignore[arg-type]


_set(["exp", "exp2", "expm1", "log", "log1p", "tanh", "logistic", "sin", "cos", "tan", "asin", "acos",
      "atan", "atan2", "sinh", "cosh", "asinh", "acosh", "atanh", "pow", "erf", "erfc", "erf_inv",
      "lgamma", "digamma", "rsqrt", "sqrt", "cbrt"], cost="transcendental")
_set(["reduce_sum", "reduce_max", "reduce_min", "reduce_prod", "reduce_and", "reduce_or", "reduce_xor",
      "argmax", "argmin", "cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"], cost="reduction")
_set(["broadcast_in_dim", "reshape", "squeeze", "expand_dims", "transpose", "slice", "dynamic_slice",
      "dynamic_update_slice", "concatenate", "pad", "gather", "scatter", "select_n", "convert_element_type",
      "copy", "copy_p", "rev", "iota", "bitcast_convert_type"], cost="data")
_set(["dot_general", "conv_general_dilated"], cost="contraction")

_set(["broadcast_in_dim", "reshape", "squeeze", "expand_dims"], layout="shape")
_set(["copy", "copy_p"], layout="copy")
# A sharded program's placement ops: the value itself, laid out over the mesh another way (what
# XLA makes of them, a collective or nothing, is explain's business, not the rules').
# sharding_constraint is with_sharding_constraint; reshard (not in JAX 0.4.35) moves a value between
# the shardings of Explicit axes, which jaxpr types carry (f32[8@data,16]).
SHARDING_OPS = frozenset({"sharding_constraint", "reshard"})
_set(SHARDING_OPS, layout="copy", cost="data", linear="all", index_arithmetic=True)

_set(["add", "sub", "mul", "div", "max", "min", "pow", "rem", "atan2", "nextafter"], elementwise="binary")
_set(["gt", "lt", "ge", "le", "eq", "ne"], elementwise="compare")
_set(["gt", "lt", "ge", "le", "eq", "ne", "is_finite", "stop_gradient", "floor", "ceil", "round", "sign",
      "iota", "argmax", "argmin"], gradient_free=True)
_set(["sin", "cos", "tanh", "logistic", "erf"], bounded=True)

_set(["add_any", "add", "sub", "neg", "concatenate", "transpose", "reshape", "squeeze", "expand_dims",
      "broadcast_in_dim", "convert_element_type", "reduce_sum", "copy", "copy_p", "rev", "slice", "cumsum",
      "reduce_precision", "real", "imag", "conj"], linear="all")
_set(["mul", "dot_general", "conv_general_dilated"], linear="one")
_set(["div", "pad"], linear="first")
_set(["select_n"], linear="cases")

_set(["debug_callback", "debug_print", "io_callback", "pure_callback", "outside_call"], effect="callback")
_set(["rng_uniform"], effect="rng")
_set(["infeed", "outfeed"], effect="io")

_set(["iota", "add", "sub", "mul", "neg", "lt", "le", "gt", "ge", "eq", "ne", "select_n", "broadcast_in_dim",
      "convert_element_type", "reshape", "squeeze", "expand_dims", "concatenate", "device_put", "copy",
      "copy_p"], index_arithmetic=True)

_set(["add", "sub", "mul", "reduce_sum"], wraps=True)
_set(["random_bits", "random_split", "random_fold_in", "random_seed", "random_wrap", "random_unwrap",
      "random_gamma", "threefry2x32", "rng_bit_generator"], prng=True)

_set(["jit", "pjit"], nested="jit")
_set(["closed_call", "core_call", "custom_jvp_call", "custom_vjp_call", "custom_vjp_call_jaxpr", "custom_lin"],
     nested="call")
_set(["custom_jvp_call", "custom_vjp_call", "custom_vjp_call_jaxpr", "custom_lin"], custom_derivative=True)
_set(["remat", "remat2", "checkpoint"], nested="remat")
_set(["scan", "while"], nested="loop")
_set(["cond"], nested="branch")

# PRNG keys (JX401), row by row as in jax/experimental/key_reuse/_core.py. An op with a nested
# jaxpr consumes nothing itself: JX401 walks into its regions.
_DRAW, _READ = KeyUse(sinks=(0,)), KeyUse(sinks=())
for _name, _use in {
    "random_bits": _DRAW,
    "random_split": _DRAW,
    "random_gamma": _DRAW,
    "random_fold_in": _READ,  # derives a new key (JAX: Source(0))
    "random_clone": _READ,
    "random_seed": _READ,
    "random_wrap": KeyUse((), "same", jax="Source(0): a new key at every wrap, so legacy uint32 keys are never "
                                         "tracked"),
    "random_unwrap": KeyUse((), "same", jax="no forward: the raw bits are a new value"),
    "eq": _READ,
    "ne": _READ,
    "select_n": KeyUse((), jax="the fallback: consumes its key operands"),
    "concatenate": KeyUse((), jax="consumes every operand (two or more)"),
    "broadcast_in_dim": KeyUse((), jax="Forward(0, 0): the broadcast keys are the operand's"),
    "dynamic_slice": KeyUse((), jax="Forward(0, 0): the slice is the operand's keys"),
    "gather": KeyUse((), jax="Forward(0, 0): the gathered keys are the operand's"),
    "dynamic_update_slice": KeyUse((), jax="Sink(1), Forward(0, 0): consumes the inserted key"),
    "scatter": KeyUse((), jax="Sink(2), Forward(0, 0): consumes the scattered keys"),
    "debug_callback": _READ,
    "debug_print": KeyUse((), jax="the fallback: consumes its key operands"),
    "cond": _READ,
    "scan": _READ,
    "while": _READ,
    "slice": KeyUse((), "view", jax="consumes the sliced positions"),
    "squeeze": KeyUse((), "view"),
    "reshape": KeyUse((), "view"),
    "transpose": KeyUse((), "view", jax="the fallback: consumes its key operand"),
    "copy": KeyUse((), "same"),
    "copy_p": KeyUse((), "same"),
    "convert_element_type": KeyUse((), "same"),
    "sharding_constraint": KeyUse((), "same"),
    "reshard": KeyUse((), "same"),
    "layout_constraint": KeyUse((), "same"),
    "device_put": KeyUse((), "each"),
    "optimization_barrier": KeyUse((), "each", jax="the fallback: consumes its key operands"),
}.items():
    _set([_name], key=_use)


def traits(primitive: str) -> Traits:
    """The row of ``primitive``; the generic fallback for a primitive the table does not list."""
    return _TABLE.get(primitive, GENERIC)


def named(test: Callable[[Traits], bool]) -> frozenset[str]:
    """The listed primitives whose row passes ``test`` (the fallback row never is listed)."""
    return frozenset(name for name, row in _TABLE.items() if test(row))


# Queries the IR helpers and rules share.
TRANSCENDENTAL = named(lambda t: t.cost == "transcendental")
REDUCTIONS = named(lambda t: t.cost == "reduction")
DATA_MOVEMENT = named(lambda t: t.cost == "data")
COSTLY = named(lambda t: t.cost in ("transcendental", "reduction", "contraction"))
SHAPE_ONLY = named(lambda t: t.layout == "shape")
SAME_NUMBERS = named(lambda t: t.layout is not None)  # ops that keep the operand's numbers
SAME_VALUE = named(lambda t: t.layout == "copy")  # the operand itself: same numbers, same shape
GRADIENT_FREE = named(lambda t: t.gradient_free)
BOUNDED = named(lambda t: t.bounded)
BINARY_ARITHMETIC = named(lambda t: t.elementwise == "binary")
EFFECTFUL = named(lambda t: t.effect is not None)
CALLBACKS = named(lambda t: t.effect == "callback")
INDEX_ARITHMETIC = named(lambda t: t.index_arithmetic)
CALLS = named(lambda t: t.nested in ("jit", "call", "remat"))  # inlined by ir.build
JITS = named(lambda t: t.nested == "jit")
REMATS = named(lambda t: t.nested == "remat")
LOOPS = named(lambda t: t.nested == "loop")
CUSTOM_DERIVATIVES = named(lambda t: t.custom_derivative)
WRAPPING = named(lambda t: t.wraps)
PRNG = named(lambda t: t.prng)
