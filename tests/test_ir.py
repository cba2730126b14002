"""The jaxpr IR on real jaxprs: inlining, regions, source locations and transform stacks."""
from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxlint.ir.build import build_program

LINE = {}  # name -> line number of a marked source line, filled from this file's text
for number, text in enumerate(open(__file__).read().splitlines(), start=1):
    if "# line:" in text:
        LINE[text.split("# line:")[1].strip()] = number


@jax.custom_jvp
def custom_sin(x):
    return jnp.sin(x)  # line: custom_jvp body


custom_sin.defjvp(lambda primals, tangents: (custom_sin(primals[0]), tangents[0]))


@jax.custom_vjp
def custom_cos(x):
    return jnp.cos(x)  # line: custom_vjp body


custom_cos.defvjp(lambda x: (custom_cos(x), x), lambda res, g: (g,))


def many_constructs(x, key):
    a = jax.lax.scan(lambda c, v: (c + v, c * v), 0.0, x)[1]  # line: scan
    b = jax.lax.while_loop(lambda c: c < 3.0, lambda c: c + 1.0, 0.0)  # line: while
    c = jax.lax.cond(x[0] > 0, lambda v: v + 1, lambda v: v - 1, x)  # line: cond
    d = custom_sin(x) + custom_cos(x) + jax.checkpoint(lambda v: v * 2)(x)  # line: calls
    e = jax.random.normal(key, (3,))  # line: library jit
    return a, b, c, d, e


def program():
    return build_program(jax.make_jaxpr(jax.jit(many_constructs))(jnp.ones(3), jax.random.key(0)))


def ops_on(prog, line):
    return [op for op in prog.walk() if op.location and op.location.span.start_line == line]


def test_call_like_equations_are_inlined_and_control_flow_kept_as_regions() -> None:
    prog = program()
    primitives = [op.primitive for op in prog.walk()]
    for inlined in ("jit", "pjit", "custom_jvp_call", "custom_vjp_call", "remat2", "checkpoint"):
        assert inlined not in primitives
    regions = {op.primitive: [r.name for r in op.regions] for op in prog.walk() if op.regions}
    assert regions["scan"] == ["jaxpr"]
    assert regions["while"] == ["cond_jaxpr", "body_jaxpr"]
    assert regions["cond"] == ["branches[0]", "branches[1]"]
    assert all(op.under_jit for op in prog.walk())


def test_every_op_has_the_user_line() -> None:
    prog = program()
    assert all(op.location is not None and op.location.path == __file__ for op in prog.walk())
    assert {op.primitive for op in ops_on(prog, LINE["scan"])} >= {"scan", "add", "mul"}
    assert {op.primitive for op in ops_on(prog, LINE["while"])} >= {"while", "lt", "add"}
    assert "sin" in {op.primitive for op in ops_on(prog, LINE["custom_jvp body"])}
    assert "cos" in {op.primitive for op in ops_on(prog, LINE["custom_vjp body"])}
    # jax.random.normal is a library jit: its equations get the user's call line.
    assert "erf_inv" in {op.primitive for op in ops_on(prog, LINE["library jit"])}


def test_columns_match_the_expression() -> None:
    prog = program()
    [scan] = [op for op in prog.walk() if op.primitive == "scan"]
    text = open(__file__).read().splitlines()[LINE["scan"] - 1]
    span = scan.location.span
    assert text[span.start_col:span.end_col] == "jax.lax.scan(lambda c, v: (c + v, c * v), 0.0, x)"


def test_values_link_producers_and_uses_across_inlined_calls() -> None:
    def f(x):
        y = jax.jit(lambda v: v * 2.0)(x)
        return jnp.sin(y)

    prog = build_program(jax.make_jaxpr(f)(jnp.ones(4)))
    [mul] = [op for op in prog.walk() if op.primitive == "mul"]
    [sin] = [op for op in prog.walk() if op.primitive == "sin"]
    assert sin.inputs[0] is mul.outputs[0] and mul.outputs[0].uses == [sin]
    assert prog.top.outputs == sin.outputs
    assert mul.under_jit and not sin.under_jit


def test_transform_stacks_accumulate_through_jit() -> None:
    def loss(w, xs):
        return jax.vmap(lambda x: jnp.tanh(w * x))(xs).sum()

    prog = build_program(jax.make_jaxpr(jax.jit(jax.grad(loss)))(1.0, jnp.ones(5)))
    stacks = {op.transforms for op in prog.walk() if op.primitive in ("tanh", "mul")}
    assert ("jvp", "vmap") in stacks
    assert any(s[:2] == ("transpose", "jvp") for s in stacks)


def test_shard_map_is_a_region() -> None:
    from jax.sharding import Mesh, PartitionSpec

    try:
        from jax import shard_map
    except ImportError:  # JAX < 0.6: only the experimental spelling
        from jax.experimental.shard_map import shard_map

    mesh = Mesh(jax.devices()[:1], ("i",))

    def f(x):
        return shard_map(lambda v: jnp.sin(v) * 2, mesh=mesh, in_specs=PartitionSpec("i"),
                         out_specs=PartitionSpec("i"))(x)

    prog = build_program(jax.make_jaxpr(jax.jit(f))(jnp.ones(4)))
    [shard] = [op for op in prog.walk() if op.primitive == "shard_map"]
    assert [r.name for r in shard.regions] == ["jaxpr"]
    inner = {op.primitive for op in shard.regions[0].ops}
    assert {"sin", "mul"} <= inner
    assert all(op.region is shard.regions[0] for op in shard.regions[0].ops)


def test_vmap_markers_become_typed_outputs_of_the_program() -> None:
    from jaxlint.ir import VmapLeaf, VmapRecord

    record = VmapRecord("jaxlint_mark_7", "f.py", None, None, 0, 0, {}, (), {}, None, ["[0]", "[1]"], [0, 0])
    assert VmapLeaf.from_scope(record.marker(1)) == VmapLeaf("jaxlint_mark_7", 1)

    def f(x):
        with jax.named_scope(record.marker(1)):
            marked = jax.lax.optimization_barrier(x * 2.0)
        return marked + 1.0

    program = build_program(jax.make_jaxpr(f)(jnp.ones(3)))
    [(leaf, values)] = program.vmap_outputs.items()
    assert leaf == VmapLeaf("jaxlint_mark_7", 1)
    assert [v.producer.primitive for v in values] == ["mul"]  # the marker itself is no op
    assert "optimization_barrier" not in {op.primitive for op in program.walk()}
