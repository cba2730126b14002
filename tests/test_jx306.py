"""JX306 beyond its case (tests/rules/JX306.py): the messages, fixes and costs of the case's
findings, and what the rule compiles: the gradient rebuilt with the loop body checkpointed
(jaxlint.ir.remat) computes the traced gradient's values, a loop whose checkpointing saves nothing
stays quiet, and nothing is compiled for a program without large stacked residuals."""
from __future__ import annotations

from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import case_line, check_in_process, checked_case
from jax import lax

from jaxlint.ir import compile as compile_step
from jaxlint.ir import remat
from jaxlint.ir.build import build_program
from jaxlint.rules import rule_classes

H = jax.ShapeDtypeStruct((64, 256), jnp.float32)
W = jax.ShapeDtypeStruct((256, 256), jnp.float32)
MIB = 2**20


def residual(h, w, checkpoint=False):
    def body(h, _):
        a = jnp.tanh(h @ w)
        b = jnp.tanh(a @ w)
        return h + b, None

    h, _ = lax.scan(jax.checkpoint(body) if checkpoint else body, h, None, length=200)
    return h.sum()


def forward_scan(program):
    """The program's one scan whose stacked outputs a transposed scan reads."""
    [loop] = [op for op in program.walk() if op.primitive == "scan" and not op.under("transpose")
              and any(use.under("transpose") for value in op.outputs for use in value.uses)]
    return loop


def test_case_findings_give_residuals_lines_and_both_compiled_sizes() -> None:
    findings = {f.span.start_line: f for f in checked_case("JX306")[1].findings if f.code == "JX306"}
    scan_line = case_line("JX306", "h, _ = lax.scan(body, h, None, length=200)  # expect")
    fori_line = case_line("JX306", "return lax.fori_loop(0, 200, body, h).sum()  # expect")
    assert set(findings) == {scan_line, fori_line}
    scan = findings[scan_line]
    assert "62.5 MiB of residuals" in scan.message and "200 iterations (5 x f32[200,64,256])" in scan.message
    a_line, b_line = case_line("JX306", "a = jnp.tanh(h @ w)"), case_line("JX306", "b = jnp.tanh(a @ w)")
    # Each tanh line makes its output and its derivative: 2 x 12.5 MiB; the carry is the fifth.
    assert f"line {a_line} (25.0 MiB), line {b_line} (25.0 MiB), the carry (12.5 MiB)" in scan.message
    # XLA's temporary memory as traced and checkpointed (63.1-63.2 MiB and 13.1-13.2 MiB).
    assert "63.1 MiB of temporary memory, 13.1 MiB with jax.checkpoint" in scan.message \
        or "63.2 MiB of temporary memory, 13.2 MiB with jax.checkpoint" in scan.message
    assert scan.cost is not None and scan.cost.basis == "compiled" and 49 * MIB < scan.cost.bytes < 51 * MIB
    assert [e.content for e in scan.fix.edits] == ["jax.checkpoint(body)"] and scan.fix.applicability == "safe"
    fori = findings[fori_line]
    fori_b = case_line("JX306", "return h + jnp.tanh(a @ w)")
    assert f"line {fori_b - 1} (25.0 MiB), line {fori_b} (25.0 MiB), the carry (12.5 MiB)" in fori.message
    assert [e.content for e in fori.fix.edits] == ["jax.checkpoint(body)"]


def train(h, w):
    """A training loop around the gradient: the rebuild walks into the outer scan's body."""
    def step(w, _):
        return w - 0.1 * jax.grad(residual, argnums=1)(h, w), None

    w, _ = lax.scan(step, w, None, length=3)
    return w


def vjp_of(h, w):
    y, back = jax.vjp(residual, h, w)
    return back(jnp.ones_like(y))


@pytest.mark.parametrize("function", [jax.grad(residual, argnums=(0, 1)), train, vjp_of],
                         ids=["grad", "training-loop", "vjp"])
def test_rebuilt_gradient_computes_the_traced_values_in_less_memory(function) -> None:
    closed = jax.make_jaxpr(function)(H, W)
    program = build_program(closed)
    loop = forward_scan(program)
    rebuilt = remat.checkpointed(closed, loop.params["jaxpr"])
    assert rebuilt is not None
    rng = np.random.default_rng(0)
    h = rng.normal(size=(64, 256)).astype(np.float32) * 0.1
    w = rng.normal(size=(256, 256)).astype(np.float32) * 0.05
    want = jax.tree_util.tree_leaves(function(h, w))
    for got, expected in zip(jax.jit(rebuilt)(h, w), want, strict=True):
        np.testing.assert_allclose(np.asarray(got), np.asarray(expected), rtol=1e-5, atol=1e-6)
    memory = program.checkpoint_memory(loop)
    assert memory.temp_bytes - memory.checkpointed_temp_bytes > 35 * MIB


def test_checkpoint_memory_of_the_evidence_gradient() -> None:
    program = build_program(jax.make_jaxpr(jax.jit(jax.grad(residual, argnums=(0, 1))))(H, W))
    memory = program.checkpoint_memory(forward_scan(program))
    assert 62 * MIB < memory.temp_bytes < 64 * MIB
    assert 12 * MIB < memory.checkpointed_temp_bytes < 14 * MIB


def test_a_checkpointed_body_saves_nothing_more() -> None:
    # Its one residual is the carry (12.5 MiB): with min-bytes below it the loop is compiled both
    # ways, and the rebuilt program needs no less memory, so the rule stays quiet.
    checkpointed = lambda h, w: residual(h, w, checkpoint=True)  # noqa: E731
    program = build_program(jax.make_jaxpr(jax.grad(checkpointed, argnums=(0, 1)))(H, W))
    memory = program.checkpoint_memory(forward_scan(program))
    assert memory is not None and memory.checkpointed_temp_bytes >= memory.temp_bytes


def test_no_transposed_loop_nothing_to_rebuild() -> None:
    closed = jax.make_jaxpr(residual)(H, W)
    [loop] = [op for op in build_program(closed).walk() if op.primitive == "scan"]
    assert remat.checkpointed(closed, loop.params["jaxpr"]) is None


NEAR_MISSES = '''
import jax
import jax.numpy as jnp
from jax import lax

H = jax.ShapeDtypeStruct((64, 256), jnp.float32)
W = jax.ShapeDtypeStruct((256, 256), jnp.float32)


def loop(h, w, length):
    def body(h, _):
        return h + jnp.tanh(jnp.tanh(h @ w) @ w), None

    h, _ = lax.scan(body, h, None, length=length)
    return h.sum()


def forward_only(h, w):
    return loop(h, w, 200)


def short(h, w):
    return loop(h, w, 50)


jax.jit(forward_only).lower(H, W)
grad_short = jax.jit(jax.grad(short, argnums=(0, 1)))
grad_short.lower(H, W)
'''


def test_nothing_compiles_without_large_stacked_residuals(tmp_path: Path) -> None:
    path = tmp_path / "near.py"
    path.write_text(NEAR_MISSES, encoding="utf-8")
    compiled, rebuilt = len(compile_step._CACHE), len(compile_step._REMAT)
    result = check_in_process([str(path)], rule_classes(["JX306"]))
    assert result.traced >= 2 and result.findings == []
    assert (len(compile_step._CACHE), len(compile_step._REMAT)) == (compiled, rebuilt)
    # With min-bytes below the short loop's 15.6 MiB it is compiled and reported.
    (tmp_path / "pyproject.toml").write_text("[tool.jaxlint.rules.JX306]\nmin-bytes = 1048576\n", encoding="utf-8")
    result = check_in_process([str(path)], rule_classes(["JX306"]))
    assert [f.code for f in result.findings] == ["JX306"] and len(compile_step._REMAT) > rebuilt


def chained(h, w):
    def first(h, _):
        a = jnp.tanh(h @ w)
        return a, a

    h, ys = lax.scan(first, h, None, length=20)

    def second(c, y):
        return c + jnp.tanh(y @ w), None

    c, _ = lax.scan(second, h, ys)
    return c.sum()


def test_ys_a_forward_scan_reads_are_not_residuals() -> None:
    # The first scan's ys feed the second scan (the user's values) and its transposed scan; only
    # what the transposed scans alone read is dropped and recomputed.
    grad = jax.grad(chained, argnums=(0, 1))
    closed = jax.make_jaxpr(grad)(H, W)
    first = next(e for e in closed.jaxpr.eqns if e.primitive.name == "scan")
    _, residuals = remat._find(closed.jaxpr, first.params["jaxpr"])
    assert residuals and 0 not in residuals  # ys 0 is `a`, which the second scan reads
    rebuilt = remat.checkpointed(closed, first.params["jaxpr"])
    h = np.random.default_rng(1).normal(size=(64, 256)).astype(np.float32) * 0.1
    w = np.random.default_rng(2).normal(size=(256, 256)).astype(np.float32) * 0.05
    for got, want in zip(jax.jit(rebuilt)(h, w), grad(h, w), strict=True):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-6)
