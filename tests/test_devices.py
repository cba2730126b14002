"""The worker's CPU devices (`devices`, --devices, else a module's literal mesh shape): modules
that build a mesh at import are linted, a mesh larger than the devices is a clear JX901, and
results with different device counts never share a cache entry.

The CLI tests run jaxlint in a subprocess: the forced device count reaches only its workers, never
this test process (whose JAX keeps the devices it started with)."""
from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from helpers import check_in_process

from jaxlint.config import ConfigError, load_config
from jaxlint.config.selection import select_rules
from jaxlint.engine.cache import ResultCache
from jaxlint.engine.jobs import MAX_INFERRED_DEVICES, job_devices
from jaxlint.engine.pool import xla_flags
from jaxlint.model import Settings
from jaxlint.scan.meshes import MeshLiteral, largest, literal_meshes, literal_meshes_in

RULES = select_rules(["ALL"], [])

# A (4, 2) mesh built at import, and a jitted function sharded over it, traced at import.
MESH_MODULE = """\
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((4, 2), ("data", "model"))
blocks = NamedSharding(mesh, P("data", "model"))


@jax.jit
def scale(x):
    return jnp.exp(x) * 2.0


sharded = jax.jit(scale, in_shardings=blocks, out_shardings=blocks)
sharded.trace(jax.ShapeDtypeStruct((8, 4), jnp.float32))
"""

# The older spelling: all devices reshaped; a mesh of 2, so one run needs two device counts.
PAIR_MODULE = """\
import jax
import numpy as np
from jax.sharding import Mesh

mesh = Mesh(np.array(jax.devices()).reshape(2), ("data",))


@jax.jit
def double(x):
    return x * 2


double.trace(jax.ShapeDtypeStruct((4,), np.float32))
"""


def test_literal_mesh_shapes_are_read() -> None:
    source = textwrap.dedent("""
        import jax, numpy as np
        from jax.experimental import mesh_utils
        from jax.sharding import Mesh
        a = jax.make_mesh((4, 2), ("x", "y"))
        b = Mesh(np.array(jax.devices()).reshape(2, 3), ("x", "y"))
        c = Mesh(devices=np.asarray(jax.devices()).reshape((16,)), axis_names=("x",))
        d = mesh_utils.create_device_mesh((2, 2, 2))
        e = jax.make_mesh(axis_shapes=[3], axis_names=("x",))
        n = 4
        f = jax.make_mesh((n, 2), ("x", "y"))        # not literal
        g = Mesh(np.array(jax.devices()).reshape(-1, 2), ("x", "y"))  # not a whole number
        h = np.zeros(8).reshape(4, 2)               # not a mesh
    """)
    meshes = literal_meshes(ast.parse(source))
    assert [(m.line, m.shape) for m in meshes] == [(5, (4, 2)), (6, (2, 3)), (7, (16,)), (8, (2, 2, 2)), (9, (3,))]
    assert largest(meshes) == MeshLiteral(7, (16,), 7) and largest(meshes).size == 16
    assert literal_meshes_in(source) == meshes
    assert literal_meshes_in("import jax\nx = jnp.zeros(3).reshape(3, 1)\n") == []  # no mesh call: not parsed
    assert literal_meshes_in("jax.make_mesh((2,), ('x',)) +\n") == []  # does not parse
    assert largest([MeshLiteral(1, (1,))]) is None and largest([]) is None
    [split] = literal_meshes(ast.parse("m = Mesh(\n    np.array(jax.devices()).reshape(\n        4, 2),\n    ('x', 'y'))\n"))
    assert split.shape == (4, 2) and [split.covers(n) for n in range(1, 6)] == [True, True, True, True, False]


def test_the_devices_of_a_module_come_from_the_setting_else_its_literal_mesh_up_to_a_limit() -> None:
    unset, eight = Settings(), Settings(devices=8)
    assert job_devices("m.py", "mesh = jax.make_mesh((4, 2), ('x', 'y'))\n", unset) == 8
    assert job_devices("m.py", "mesh = jax.make_mesh((4, 2), ('x', 'y'))\n", Settings(devices=2)) == 2
    assert job_devices("m.py", "import jax\n", unset) is None and job_devices("m.py", "import jax\n", eight) == 8
    # A mesh of 4096 devices starts no worker of that size unasked (its import then fails: JX901).
    assert job_devices("m.py", "mesh = jax.make_mesh((64, 64), ('x', 'y'))\n", unset) is None
    assert MAX_INFERRED_DEVICES < 64 * 64


def test_the_device_count_is_appended_to_the_users_xla_flags_unless_they_set_one() -> None:
    assert xla_flags(None, "--xla_cpu_use_thunk_runtime=false") == "--xla_cpu_use_thunk_runtime=false"
    assert xla_flags(8, "") == "--xla_force_host_platform_device_count=8"
    assert xla_flags(8, "--xla_cpu_use_thunk_runtime=false") == \
        "--xla_cpu_use_thunk_runtime=false --xla_force_host_platform_device_count=8"
    assert xla_flags(8, "--xla_force_host_platform_device_count=2") == "--xla_force_host_platform_device_count=2"


def test_the_devices_key_takes_a_whole_number_of_at_least_one(tmp_path: Path) -> None:
    (tmp_path / "jaxlint.toml").write_text("devices = 8\n")
    assert load_config([str(tmp_path)]).settings().devices == 8
    assert load_config([str(tmp_path / "jaxlint.toml")]).devices == 8
    for wrong in ("0", "true", "2.0", '"8"'):
        (tmp_path / "jaxlint.toml").write_text(f"devices = {wrong}\n")
        with pytest.raises(ConfigError, match="`devices`: expected a whole number of CPU devices"):
            load_config([str(tmp_path)])


def cli(root: Path, *args: str, xla: str | None = None) -> subprocess.CompletedProcess:
    """jaxlint check in a fresh process; XLA_FLAGS: ``xla``, else none."""
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    if xla is not None:
        env["XLA_FLAGS"] = xla
    return subprocess.run([sys.executable, "-m", "jaxlint", "check", "--no-cache", "--jobs", "1", *args, "."],
                          cwd=root, capture_output=True, text=True, timeout=600, env=env)


def test_a_mesh_built_at_import_is_linted_with_the_devices_its_shape_takes(tmp_path: Path) -> None:
    (tmp_path / "jaxlint.toml").write_text("")
    (tmp_path / "sharded.py").write_text(MESH_MODULE)
    (tmp_path / "pairs.py").write_text(PAIR_MODULE)
    # Unset: 8 devices for one module, 2 for the other (one lane: its worker is replaced), said with -v.
    run = cli(tmp_path, "-v")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "sharded.py: 8 CPU devices, the product of the mesh shape (4, 2) at line 5" in run.stderr
    assert "pairs.py: 2 CPU devices, the product of the mesh shape (2,) at line 5" in run.stderr
    assert "linted 2 of 2 JAX functions" in run.stderr and "JX901" not in run.stdout
    # Set, by the flag or the key: no inference is said.
    (tmp_path / "pairs.py").unlink()
    run = cli(tmp_path, "-v", "--devices", "8")
    assert run.returncode == 0 and "linted 1 of 1 JAX functions" in run.stderr, run.stdout + run.stderr
    assert "CPU devices, the product" not in run.stderr
    (tmp_path / "jaxlint.toml").write_text("devices = 8\n")
    run = cli(tmp_path)
    assert run.returncode == 0 and "linted 1 of 1 JAX functions" in run.stderr, run.stdout + run.stderr


def test_a_mesh_larger_than_the_devices_is_a_clear_jx901(tmp_path: Path) -> None:
    (tmp_path / "jaxlint.toml").write_text("devices = 4\n")
    (tmp_path / "sharded.py").write_text(MESH_MODULE)
    # A mesh call over several lines: the error is raised on one of them.
    (tmp_path / "split.py").write_text(PAIR_MODULE.replace("Mesh(np.array(jax.devices()).reshape(2), (\"data\",))",
                                                            "Mesh(\n    np.array(jax.devices()).reshape(\n        3, 2),\n"
                                                            "    (\"data\", \"model\"))"))
    run = cli(tmp_path, "--output-format", "concise")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "Traceback" not in run.stdout + run.stderr
    [line, split] = run.stdout.splitlines()
    assert line.startswith("sharded.py:5:8: JX901 importing the module raised ValueError")
    assert ("the mesh (4, 2) at line 5 takes 8 devices and the worker has 4 CPU devices; "
            "set `devices = 8` under [tool.jaxlint] or pass --devices 8;") in line
    assert split.startswith("split.py:") and " JX901 " in split
    assert "the mesh (3, 2) at line 5 takes 6 devices and the worker has 4 CPU devices" in split
    (tmp_path / "split.py").unlink()
    # The user's own device count in XLA_FLAGS is kept, and the message says where it comes from.
    (tmp_path / "jaxlint.toml").write_text("")
    run = cli(tmp_path, "--output-format", "concise", xla="--xla_force_host_platform_device_count=2")
    assert "takes 8 devices and the worker has 2 CPU devices" in run.stdout, run.stdout + run.stderr
    assert "XLA_FLAGS" in run.stdout


def test_a_different_device_count_is_a_cache_miss(tmp_path: Path) -> None:
    (tmp_path / "plain.py").write_text("import jax\n\n\n@jax.jit\ndef double(x):\n    return x * 2\n\n\n"
                                       "double.trace(jax.ShapeDtypeStruct((4,), 'float32'))\n")

    def run(devices: int | None) -> int:
        (tmp_path / "jaxlint.toml").write_text("" if devices is None else f"devices = {devices}\n")
        config = load_config([str(tmp_path)])
        result = check_in_process([str(tmp_path)], RULES, config=config,
                                  cache=ResultCache(config.cache_dir, config.root))
        assert [a.job.devices for a in result.files] == [devices]
        return result.cached

    assert run(2) == 0 and run(2) == 1
    assert run(4) == 0 and run(None) == 0
    assert run(2) == 1 and run(4) == 1
