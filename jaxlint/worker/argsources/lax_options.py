"""Parameters named as ``jax.lax.dot_general``'s options, which code wrapping it passes on
(a custom-JVP dot, a quantized dot): for inferred arguments (inferred.py), a value lax accepts
where the parameter's name and annotation decide nothing else.

- ``dimension_numbers``: ``(((), ()), ((), ()))``, no contracting and no batch dimension: an outer
  product, valid for operands of any rank the ladder gives (a conv's dimension numbers are no such
  tuple: a function that passes them to a convolution fails to trace, and is no finding);
- ``precision`` and ``preferred_element_type``: ``None``, lax's own default.
"""
from __future__ import annotations

OUTER_PRODUCT = (((), ()), ((), ()))
_VALUES = {"dimension_numbers": OUTER_PRODUCT, "precision": None, "preferred_element_type": None}


def option_role(name: str, annotation_text: str) -> tuple | None:
    """("static", value) for a parameter named as one of lax's dot options, without an annotation
    or with one that admits None (``DTypeLike | None``); None else."""
    if name not in _VALUES:
        return None
    if annotation_text and "None" not in annotation_text:
        return None
    return ("static", _VALUES[name])
