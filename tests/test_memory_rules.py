"""JX307 and JX308 beyond their cases: the messages and places of the cases' findings, and the
compile step they read (jaxlint.ir.compile) on real compiled programs: what it reads from XLA's
module, that it compiles only a program of the shape a rule looks for, and that a program that
does not compile gives no facts instead of an error."""
from __future__ import annotations

from pathlib import Path

import jax
import jax.numpy as jnp
from helpers import case_line, check_in_process, checked_case
from jax import lax

from jaxlint.ir import compile as compile_step
from jaxlint.ir.build import build_program
from jaxlint.ir.memory import alias_parameters
from jaxlint.jaxapi import version
from jaxlint.rules.registry import rule_classes

X = jax.ShapeDtypeStruct((1024, 1024), jnp.float32)
NEW_JAX = version.JAX_VERSION >= (0, 5, 0)


def findings_of(code: str) -> dict[tuple[str, int], str]:
    return {(Path(f.path).name, f.span.start_line): f.message for f in checked_case(code)[1].findings
            if f.code == code}


def test_jx308_names_the_argument_and_why() -> None:
    found = findings_of("JX308")
    at = lambda text, before=0: ("donating.py", case_line("JX308", text, "donating.py") - before)  # noqa: E731
    bf16 = found[at("@partial(jax.jit, donate_argnums=0)  # expect: JX308")]
    assert "of `to_bf16`" in bf16 and "'x' (float32[1024,1024], 4.0 MiB)" in bf16
    assert ("buffer_donor" if NEW_JAX else "Some donated buffers were not usable") in bf16
    unused = found[at("def unused_donation(x, y)", 1)]
    assert "'x'" in unused and "never reads it" in unused
    summed = found[at("def summed(a, b)", 1)]
    assert summed.count("float32[1024,1024]") == 1  # one of the two is aliased to the output
    # A jit made by a call is reported at the call, naming the function it jits.
    advance = found[at("advance = jax.jit(")]
    assert "of `_advance`" in advance and "'vel'" in advance and "'pos'" not in advance
    # A traced function calling a donating jit of another file: reported at its call.
    call = found[("trainer.py", case_line("JX308", "y = to_bf16(x)", "trainer.py"))]
    assert "of `to_bf16`" in call


def test_jx307_reports_bytes_times_trip_count_at_the_scan() -> None:
    findings = [f for f in checked_case("JX307")[1].findings if f.code == "JX307"]
    assert len(findings) == 1
    finding = findings[0]
    line = case_line("JX307", "lax.scan(body, P, jnp.arange(1, P.shape[0]))  # expect")
    assert finding.span.start_line == line
    assert "f32[1000,10,10] x2" in finding.message and "x 999 iterations" in finding.message
    assert finding.cost is not None and finding.cost.bytes == 2 * 400_000 * 999
    assert "usually a `.at[].set`" in finding.message  # the body's in-place update is the cause


# A scan of plain weight updates: no in-place update in the body, yet XLA's CPU backend copies carried
# weights its matmuls read (both JAX versions here; which weights differs between them).
TRAIN_STEP = """\
import jax
import jax.numpy as jnp


def loss(params, x):
    for w in params:
        x = jnp.tanh(x @ w)
    return x.sum()


# jaxlint: args params=[f32[256, 256], f32[256, 256], f32[256, 256]], x=f32[64, 256]
@jax.jit
def train(params, x):
    def step(p, _):
        g = jax.grad(loss)(p, x)
        return [a - 1e-3 * b for a, b in zip(p, g)], None
    return jax.lax.scan(step, params, None, length=20)[0]
"""


def test_jx307_says_when_no_in_place_update_explains_the_copy(tmp_path: Path) -> None:
    path = tmp_path / "train.py"
    path.write_text(TRAIN_STEP)
    findings = [f for f in check_in_process([str(path)], rule_classes(["JX307"]), jobs=1).findings]
    assert [f.span.start_line for f in findings] == [TRAIN_STEP.splitlines().index(
        "    return jax.lax.scan(step, params, None, length=20)[0]") + 1]
    assert "f32[256,256]" in findings[0].message and "x 20 iterations" in findings[0].message
    assert "Nothing in the loop's body updates an array in place" in findings[0].message
    assert "usually a `.at[].set`" not in findings[0].message


def test_alias_map_of_a_pytree_donation() -> None:
    def update(state):
        return {"w": state["w"] * 2, "b": state["b"].astype(jnp.bfloat16)}

    step = jax.jit(update, donate_argnums=0)
    closed = jax.make_jaxpr(step)({"w": X, "b": jax.ShapeDtypeStruct((10,), jnp.float32)})
    (jit,) = build_program(closed).compiled("donations")
    by_name = {d.name: d for d in jit.donations}
    assert jit.function == "update"
    assert by_name["state['w']"].aliased and by_name["state['w']"].reason == ""
    assert not by_name["state['b']"].aliased
    assert by_name["state['b']"].reason == ("no-output" if NEW_JAX else "dropped")


def test_alias_header_is_read_from_the_module_text() -> None:
    header = ("HloModule jit_f, is_scheduled=true, input_output_alias={ {1}: (1, {}, may-alias), {0}: "
              "(2, {}, may-alias) }, buffer_donor={ (0, {}) }, entry_computation_layout={(f32[10]{0})}")
    assert alias_parameters(header) == ({1, 2}, {0})
    assert alias_parameters("HloModule jit_f, entry_computation_layout={()->f32[]}") == (set(), set())


def shifted(P):
    def body(P, i):
        P = P.at[i].set(P[i - 1] * 1.01)
        return P, None

    P, _ = lax.scan(body, P, jnp.arange(1, P.shape[0]))
    return P.sum()


def test_copies_of_the_gradient_loop_but_not_the_forward_one() -> None:
    P = jax.ShapeDtypeStruct((1000, 10, 10), jnp.float32)
    big = lambda loops: [c for loop in loops for c in loop.copies if c[1] >= 65536]  # noqa: E731
    backward = build_program(jax.make_jaxpr(jax.grad(shifted))(P)).compiled("loops")
    forward = build_program(jax.make_jaxpr(shifted)(P)).compiled("loops")
    assert big(backward) == [("f32[1000,10,10]", 400_000)] * 2
    assert forward and big(forward) == []
    assert {loop.trip_count for loop in backward} == {999}


def test_nothing_compiles_without_a_donation_or_a_loop() -> None:
    before = len(compile_step._CACHE)
    program = build_program(jax.make_jaxpr(jax.jit(lambda x: x * 2 + 1))(X))
    assert program.compiled("donations") == [] and program.compiled("loops") == []
    assert len(compile_step._CACHE) == before


def test_a_program_that_does_not_compile_gives_no_facts() -> None:
    # A symbolic dimension traces, but jit cannot compile it for a concrete device.
    from jax import export

    (n,) = export.symbolic_shape("n")
    donating = jax.jit(lambda x: x.astype(jnp.bfloat16), donate_argnums=0)
    closed = jax.make_jaxpr(donating)(jax.ShapeDtypeStruct((n, 4), jnp.float32))
    assert build_program(closed).compiled("donations") == []
