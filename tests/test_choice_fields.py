"""Fields without a default annotated with an enum or a ``Literal`` (mujoco's ``jacobian:
JacobianType``, jax_md's static ``format: NeighborListFormat``): the first member or value is the
field's value, shown in the signature, so the class's methods are traced. One check per module,
in the test process."""
from __future__ import annotations

import textwrap
from pathlib import Path

from helpers import check_in_process, write

from jaxlint.config import load_config
from jaxlint.rules import all_rules

MODULE = textwrap.dedent('''\
    import dataclasses
    import enum
    from typing import Literal, Optional

    import jax
    import jax.numpy as jnp


    class Format(enum.Enum):
        DENSE = "dense"
        SPARSE = "sparse"


    class Nothing(enum.Enum):
        pass


    @dataclasses.dataclass
    class Neighbors:
        idx: jax.Array
        format: Format = dataclasses.field(metadata={"static": True})

        def count(self):
            if self.format is Format.DENSE:
                return jnp.sum(self.idx, axis=-1)
            return jnp.sum(self.idx)


    @dataclasses.dataclass
    class Option:
        gravity: jax.Array
        jacobian: Format

        def scaled(self, x):
            return jnp.multiply(self.gravity, x)


    @dataclasses.dataclass
    class Reduce:
        values: jax.Array
        mode: Literal["mean", "sum"] = dataclasses.field(metadata={"static": True})
        other: Optional[Literal[3, 4]] = dataclasses.field(metadata={"static": True})

        def __call__(self):
            return jnp.mean(self.values) if self.mode == "mean" else jnp.sum(self.values)


    @dataclasses.dataclass
    class Named:
        values: jax.Array
        name: str = dataclasses.field(metadata={"static": True})

        def total(self):
            return jnp.sum(self.values)


    @dataclasses.dataclass
    class Empty:
        values: jax.Array
        kind: Nothing = dataclasses.field(metadata={"static": True})

        def total(self):
            return jnp.sum(self.values)
''')


def _checked(tmp_path: Path):
    path = write(tmp_path, "choices", MODULE)
    (tmp_path / "pyproject.toml").write_text("[tool.jaxlint]\n")
    return check_in_process([str(path)], all_rules(), config=load_config([str(path)]))


def test_an_enum_or_literal_field_gets_its_first_choice(tmp_path: Path) -> None:
    result = _checked(tmp_path)
    signatures = {t.target: t.signature for fa in result.files for t in fa.result.traced}
    assert signatures["Neighbors.count"] == "self=Neighbors(idx=i32[n], format=Format.DENSE)"  # an index: i32
    assert signatures["Option.scaled"] == "self=Option(gravity=f32[], jacobian=Format.DENSE), x=f32[]"
    assert signatures["Reduce.__call__"] == "self=Reduce(values=f32[], mode='mean', other=3)"


def test_a_str_field_or_an_enum_without_members_stays_untraced(tmp_path: Path) -> None:
    result = _checked(tmp_path)
    skipped = {s.target: s.reason for _, s in result.skipped}
    assert skipped == {
        "Named.total": "arguments not inferred: no Named instance: self.name: a static field with no default",
        "Empty.total": "arguments not inferred: no Empty instance: self.kind: a static field with no default",
    }
