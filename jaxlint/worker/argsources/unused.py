"""Parameters the body never reads (issue 48): a value that nothing reads cannot change what the
function computes, so such a parameter, where nothing else guesses it (a method's ``self`` of a
class defined inside a function, whose class jaxlint cannot make: ``def log_prob(self, value):
return jnp.asarray(dist.log_prob(value))``; a callback's ``unused_state``), gets a placeholder,
shown ``self=<unused>``. Read in the def's own AST: no load of the name anywhere in its body
(nested defs and lambdas included, outside those that take a parameter of that name), and no
call that reads a frame's locals (``super()`` with no arguments reads the first parameter;
``locals()``, ``vars()``, ``eval``, ``exec``).
"""
from __future__ import annotations

import ast

from jaxlint.worker.argsources import usage

_FRAME_READERS = frozenset({"super", "locals", "vars", "eval", "exec"})


class Unused:
    """The value of a parameter the body never reads (no ``__dict__``: shown as itself, not as a
    built instance's fields)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<unused>"


UNUSED = Unused()


def unused(definition: ast.AST | None, name: str) -> bool:
    """Whether ``definition``'s body never reads ``name`` (nor reads its frame's locals)."""
    if not isinstance(definition, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    if any(isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FRAME_READERS
           for statement in definition.body for node in ast.walk(statement)):
        return False
    parents = {child: node for node in ast.walk(definition) for child in ast.iter_child_nodes(node)}
    return not usage.occurrences(definition, name, parents)
