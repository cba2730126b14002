"""--cost compiled: XLA's own before/after figures for verified fixes, honest about jit. The figures
are what these tests read: the analysis and the fixes' verification run in the test process
(helpers.check_in_process)."""
from __future__ import annotations

import shutil
from pathlib import Path

from helpers import check_in_process

from jaxlint.config.selection import select_rules

REPO = Path(__file__).resolve().parent.parent

EAGER = '''
import jax
import jax.numpy as jnp


def blackbox(x, y):
    x = x + 1
    return x, x * y


def eager(x, y):
    a, b = jax.vmap(blackbox, in_axes=(None, 0))(x, y)
    return a[0], b


eager(1.0, jnp.arange(10.0))
'''


def test_founding_example_saves_nothing_compiled(tmp_path: Path) -> None:
    shutil.copy(REPO / "examples" / "founding.py", tmp_path / "founding.py")
    result = check_in_process([str(tmp_path)], select_rules(["JX101"], None), cost="compiled")
    [finding] = result.findings
    # Under jit XLA deletes broadcast -> slice -> squeeze: the fix changes no compiled figure.
    assert finding.cost.basis == "compiled"
    assert finding.cost.flops == 0 and finding.cost.bytes == 0
    assert "compiled before and after the fix" in finding.cost.note
    assert (tmp_path / "founding.py").read_text() == (REPO / "examples" / "founding.py").read_text()


def test_eager_function_keeps_the_shapes_estimate(tmp_path: Path) -> None:
    (tmp_path / "eager_mod.py").write_text(EAGER)
    result = check_in_process([str(tmp_path)], select_rules(["JX101"], None), cost="compiled")
    [finding] = result.findings
    assert finding.cost.basis == "shapes" and finding.cost.bytes == 40.0
