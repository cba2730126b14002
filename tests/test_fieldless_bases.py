"""A method of a class that holds no array (issue 48, argsources/instances.py): a field-less base
whose subclasses hold the arrays (brax's ``Base`` of ``Transform`` and ``Motion``) is traced with
``self`` its first subclass that inherits the method and can be built, as an abstract base's
method is. A field-less class with no such subclass, or whose subclasses override the method,
keeps its reason. A parameter the method maps over beside ``self`` (``tree_map(f, self, other)``,
argsources/co_mapped.py) is another instance of the class; one annotated as an array is not. One
project, one check, in the test process.
"""
from __future__ import annotations

import textwrap

import pytest
from helpers import check_project, skip_reasons, traced_signatures

MODULE = textwrap.dedent('''\
    import dataclasses
    from typing import Any

    import jax
    import jax.numpy as jnp


    @dataclasses.dataclass
    class Base:  # no field: its subclasses hold the arrays
        def log_norm(self):
            y = sum(jax.tree_util.tree_leaves(jax.tree_util.tree_map(lambda x: jnp.sum(x * x), self)))
            return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501

        def overridden(self):
            return jnp.zeros(3)

        def log_ratio(self, other: Any):
            y = jax.tree_util.tree_map(lambda a, b: a / b, self, other)
            return jax.tree_util.tree_map(lambda v: jnp.where(v > 0, jnp.log(v), 0.0), y)  # expect JX501

        def log_of_array(self, other: jax.Array):  # annotated as an array: not another instance
            y = jax.tree_util.tree_map(lambda a, b: a / b, self, other)
            return jax.tree_util.tree_map(lambda v: jnp.where(v > 0, jnp.log(v), 0.0), y)


    @jax.tree_util.register_pytree_node_class
    @dataclasses.dataclass
    class Point(Base):
        x: jax.Array
        y: jax.Array

        def overridden(self):
            return self.x + self.y

        def tree_flatten(self):
            return (self.x, self.y), None

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children)


    @dataclasses.dataclass
    class Lonely:  # no field and no subclass
        def log_norm(self):
            y = jnp.ones(3)
            return jnp.where(y > 0, jnp.log(y), 0.0)
''')


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory):
    result = check_project(tmp_path_factory.mktemp("bases"), {"shapes": MODULE})
    signatures, skipped = traced_signatures(result), skip_reasons(result)
    findings = {(f.code, f.span.start_line) for fa in result.files for f in fa.findings}
    return signatures, skipped, findings


def _line(text: str, after: str) -> int:
    lines = MODULE.splitlines()
    start = next(i for i, line in enumerate(lines) if after in line)
    return next(i for i, line in enumerate(lines) if i >= start and text in line) + 1


def test_a_fieldless_bases_method_is_traced_with_a_subclass(checked) -> None:
    signatures, _, findings = checked
    assert signatures["Base.log_norm"] == "self=Point(x=f32[], y=f32[])"
    assert ("JX501", _line("# expect JX501", "def log_norm")) in findings


def test_a_parameter_mapped_beside_self_is_another_instance(checked) -> None:
    signatures, skipped, findings = checked
    assert signatures["Base.log_ratio"] == "self=Point(x=f32[], y=f32[]), other=Point(x=f32[], y=f32[])"
    assert ("JX501", _line("# expect JX501", "def log_ratio")) in findings
    assert "Base.log_of_array" not in signatures and "other=f32[]" in skipped["Base.log_of_array"]


def test_without_a_subclass_that_inherits_it_the_reason_stays(checked) -> None:
    signatures, skipped, _ = checked
    assert "Base.overridden" not in signatures and "Lonely.log_norm" not in signatures
    for target in ("Base.overridden", "Lonely.log_norm"):
        assert skipped[target].endswith("neither its fields nor the method's parameters take an array"), skipped[target]
