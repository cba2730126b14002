"""JX601 trace-error: the JAX error class, the user's line, and a hint chosen by the class.

Trace errors are analyzed in the test process (helpers.check_in_process: the worker's analysis
without a worker process); the module that fails to import keeps the real worker.
"""
from __future__ import annotations

from pathlib import Path

from helpers import check_in_process

from jaxlint.config.selection import select_rules
from jaxlint.engine.check import check

MODULE = '''\
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np


@jax.jit
def branches(x):
    if x.sum() > 0:  # bool
        return x
    return -x


@jax.jit
def to_int(x):
    return jnp.zeros(3)[: int(x.sum())]  # int


@jax.jit
def to_numpy(x):
    return np.asarray(x) + 1  # numpy


@jax.jit
def boolean_index(x):
    return x[x > 0]  # mask


@jax.jit
def traced_shape(x, n):
    return jnp.ones(n) + x.sum()  # shape


@partial(jax.jit, static_argnums=1)
def static_list(x, sizes):
    return x * len(sizes)


@jax.jit
def fine(x):
    return jnp.where(x > 0, x, -x)


x = jnp.ones(3)
for f in (branches, to_int, to_numpy, boolean_index, fine):
    try:
        f.trace(x)
    except Exception:
        pass
try:
    traced_shape.trace(x, 3)
except Exception:
    pass
'''

# A list where a static argument is expected: tracing fails as calling it would.
STATIC_LIST = '''\
from functools import partial

import jax


# jaxlint: args x=f32[3], sizes=[1, 2]
@partial(jax.jit, static_argnums=1)
def static_list(x, sizes):
    return x * len(sizes)
'''


def test_each_error_class_gets_its_hint(tmp_path: Path) -> None:
    path = tmp_path / "untraceable.py"
    path.write_text(MODULE)
    result = check_in_process([str(path)], select_rules(["JX601"], None))
    lines = MODULE.splitlines()
    found = {}
    for finding in result.findings:
        assert finding.code == "JX601"
        found[lines[finding.span.start_line - 1].split("# ")[-1]] = finding.message
    assert set(found) == {"bool", "int", "numpy", "mask", "shape"}, found
    assert "TracerBoolConversionError" in found["bool"] and "jnp.where or lax.cond" in found["bool"]
    assert "ConcretizationTypeError" in found["int"] and "mark the argument static" in found["int"]
    assert "TracerArrayConversionError" in found["numpy"] and "use jax.numpy" in found["numpy"]
    assert "NonConcreteBooleanIndexError" in found["mask"] and "size=n" in found["mask"]
    assert "shapes must be static" in found["shape"] or "static" in found["shape"]
    assert result.traced == 1  # fine


def test_non_hashable_static_argument_hint(tmp_path: Path) -> None:
    path = tmp_path / "static_list.py"
    path.write_text(STATIC_LIST)
    [finding] = check_in_process([str(path)], select_rules(["JX601"], None)).findings
    assert "Non-hashable static arguments" in finding.message and "pass a tuple" in finding.message


def test_a_more_specific_rule_explains_the_failure(tmp_path: Path) -> None:
    """The import fails on a list passed as a static argument: JX204 reports it, not JX601/JX901.
    An import error the worker catches: the real worker."""
    path = tmp_path / "static_call.py"
    path.write_text(
        "from functools import partial\n\nimport jax\nimport jax.numpy as jnp\n\n\n"
        "@partial(jax.jit, static_argnums=1)\n"
        "def scaled(x, sizes):\n"
        "    return x * len(sizes)\n\n\n"
        "scaled(jnp.ones(3), [1, 2])\n")
    findings = check([str(path)], select_rules(None, None)).findings
    assert [(f.code, f.span.start_line) for f in findings] == [("JX204", 12)]
