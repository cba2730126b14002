"""Global JAX configuration a module sets at import does not reach the modules analyzed after it.

One worker imports several modules in turn (``--jobs 1`` here, so every module goes through the
same one; files are analyzed in sorted path order, so ``a.py`` comes first). Each module must be
analyzed as if it ran alone: with its own configuration while its functions are traced and its
fixes verified, and with the worker's starting configuration (JAX's defaults, or what the
environment set) otherwise. Real CLI runs in temporary projects.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jax
import pytest

# f32 * np.float64 widens to f64 only under x64 (JX502); JAX's default keeps f32 and is quiet.
WIDENS_UNDER_X64 = '''\
import jax
import jax.numpy as jnp
import numpy as np


@jax.jit
def shifted(x):
    return x + np.float64(2)


shifted(jnp.ones(8, jnp.float32))
'''

ENABLES_X64 = '''\
import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_enable_x64", True)


@jax.jit
def doubled(x):
    return x * np.float64(2)


doubled(jnp.ones(8, jnp.float32))
'''

# bf16 + a NumPy f32 constant widens to f32 under JAX's default ("standard") dtype promotion
# (JX502); with implicit promotion disabled ("strict") the same line is a trace error (JX601).
WIDENS_BF16 = '''\
import jax
import jax.numpy as jnp
import numpy as np


@jax.jit
def scaled(h):
    return h * np.float32(2)


scaled(jnp.ones(8, jnp.bfloat16))
'''

DISABLES_PROMOTION = '''\
import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_numpy_dtype_promotion", "strict")
jax.config.update("jax_numpy_rank_promotion", "raise")


@jax.jit
def summed(x, y):
    return x + y


summed(jnp.ones((2, 3), jnp.float32), jnp.ones((2, 3), jnp.float32))
'''

# Its own rank-promotion "raise" applies to its function: a trace error (JX601).
RAISES_ON_RANK_PROMOTION = '''\
import jax

jax.config.update("jax_numpy_rank_promotion", "raise")


# jaxlint: args x=f32[2, 3], y=f32[3]
@jax.jit
def summed(x, y):
    return x + y
'''

# The founding example's fixable vmap under x64: `jnp.arange(10)` is i64, so the fix is verified
# (outputs before == after) only if the verifying import sees the module's own x64 again.
X64_WITH_SAFE_FIX = '''\
import jax
import jax.numpy as jnp

jax.config.update("jax_enable_x64", True)


def blackbox_function(x, y):
    x = x + 1
    y = x * y
    return x, y


@jax.jit
def my_mapped_function(x, y):
    x, y = jax.vmap(blackbox_function, in_axes=(None, 0))(x, y)
    return x[0], y


my_mapped_function(1, jnp.arange(10))
'''

# jax_num_cpu_devices cannot change once the backends started (this module starts them):
# putting the option back after the module must be skipped quietly. (Older JAX has no such
# option; there the module runs without it.)
FIXED_AFTER_BACKEND_START = '''\
import jax
import jax.numpy as jnp

try:
    jax.config.update("jax_num_cpu_devices", 2)
except AttributeError:
    pass
jnp.ones(2).block_until_ready()


@jax.jit
def plain(x):
    return x * 2.0


plain(jnp.ones(8, jnp.float32))
'''


def jaxlint(project: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "jaxlint", "check", "--jobs", "1", "--output-format",
                           "json", *args, "."], cwd=project, capture_output=True, text=True, timeout=600,
                          env=env)


def project(tmp_path: Path, **modules: str) -> Path:
    for name, text in modules.items():
        (tmp_path / f"{name}.py").write_text(text, encoding="utf-8")
    return tmp_path


def findings_by_file(run: subprocess.CompletedProcess, project: Path) -> dict[str, list[tuple[str, int]]]:
    """file name -> sorted (code, line); every analyzed file present, even without findings."""
    assert run.returncode in (0, 1), run.stderr
    assert "Traceback" not in run.stderr, run.stderr
    by_file: dict[str, list[tuple[str, int]]] = {p.name: [] for p in project.glob("*.py")}
    for finding in json.loads(run.stdout):
        by_file[Path(finding["filename"]).name].append((finding["code"], finding["location"]["row"]))
    return {name: sorted(found) for name, found in by_file.items()}


def environment_without_jax_settings() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("JAX_", "XLA_FLAGS"))}


def test_x64_set_by_one_module_does_not_reach_the_next(tmp_path: Path) -> None:
    root = project(tmp_path, a=ENABLES_X64, b=WIDENS_UNDER_X64)
    found = findings_by_file(jaxlint(root, env=environment_without_jax_settings()), root)
    assert found["a.py"] == [("JX502", 10)]  # a's own x64 applies while a is traced
    assert found["b.py"] == []  # b is traced with JAX's default: f32 stays f32
    # The same b under x64 is reported: the quiet result above is not a blind spot of the rule.
    x64_env = {**environment_without_jax_settings(), "JAX_ENABLE_X64": "1"}
    found = findings_by_file(jaxlint(root, env=x64_env), root)
    assert found["b.py"] == [("JX502", 8)]  # the environment's setting is the worker's, kept


def test_disabling_a_default_does_not_reach_the_next(tmp_path: Path) -> None:
    root = project(tmp_path, a=DISABLES_PROMOTION, b=WIDENS_BF16, c=RAISES_ON_RANK_PROMOTION)
    found = findings_by_file(jaxlint(root, env=environment_without_jax_settings()), root)
    assert found["a.py"] == []
    assert found["b.py"] == [("JX502", 8)]  # standard promotion: widened, not a trace error
    assert found["c.py"] == [("JX601", 9)]  # c's own rank promotion "raise" applies to c


def test_fix_is_verified_with_the_module_own_configuration(tmp_path: Path) -> None:
    root = project(tmp_path, a=X64_WITH_SAFE_FIX, b=WIDENS_UNDER_X64)
    run = jaxlint(root, "--diff", env=environment_without_jax_settings())
    assert run.returncode == 1, run.stderr
    assert "+    x, y = jax.vmap(blackbox_function, in_axes=(None, 0), out_axes=(None, 0))(x, y)" in run.stdout
    assert "rejected" not in run.stderr, run.stderr


def test_option_fixed_once_backends_start_is_left_quietly(tmp_path: Path) -> None:
    root = project(tmp_path, a=FIXED_AFTER_BACKEND_START, b=WIDENS_BF16)
    run = jaxlint(root, env=environment_without_jax_settings())
    found = findings_by_file(run, root)
    assert found == {"a.py": [], "b.py": [("JX502", 8)]}
    assert "jax_num_cpu_devices" not in run.stderr
    assert "(2 targets traced)" in run.stderr


# jax.sharding.set_mesh at import (JAX >= 0.6) sets the thread's mesh, which is no option: the next
# module, on a mesh of Auto axes, must not trace under a's Explicit one.
SETS_A_GLOBAL_MESH = '''\
import jax
import jax.numpy as jnp

mesh = jax.make_mesh((4, 2), ("data", "model"))
jax.sharding.set_mesh(mesh)


@jax.jit
def double(x):
    return x * 2


double(jnp.ones((8, 4)))
'''
CONSTRAINS_ON_AN_AUTO_MESH = '''\
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("rows", "cols"))


@jax.jit
def spread(x):
    return jax.lax.with_sharding_constraint(x + 1, NamedSharding(mesh, P("rows", None)))


spread(jnp.ones((8, 4)))
'''


@pytest.mark.skipif(not hasattr(jax.sharding, "set_mesh"), reason="no jax.sharding.set_mesh in this JAX")
def test_a_mesh_set_at_import_does_not_reach_the_next(tmp_path: Path) -> None:
    root = project(tmp_path, a=SETS_A_GLOBAL_MESH, b=CONSTRAINS_ON_AN_AUTO_MESH)
    (root / "jaxlint.toml").write_text("devices = 8\n")
    run = jaxlint(root, env=environment_without_jax_settings())
    assert findings_by_file(run, root) == {"a.py": [], "b.py": []}, run.stdout
    assert "(2 targets traced)" in run.stderr, run.stderr


def test_the_worker_imports_nothing_from_the_folder_jaxlint_runs_in(tmp_path: Path) -> None:
    """`python -m` would put the current folder first on the worker's sys.path while it imports its
    own modules: a `typing.py` there (a repository the editor server was started in) would run."""
    folder, driver = tmp_path / "project", tmp_path / "driver"
    folder.mkdir()
    driver.mkdir()
    ran = tmp_path / "RAN"
    for name in ("typing", "dataclasses", "json", "runpy"):
        (folder / f"{name}.py").write_text(f"open({str(ran)!r}, 'a').write({name!r})\n")
    (folder / "mod.py").write_text("import jax\n\n\n@jax.jit\ndef f(x):\n    return x + 1\n\n\nf(jax.numpy.ones(3))\n")
    # The jaxlint process is started from a script elsewhere, as the `jaxlint` command is.
    (driver / "run.py").write_text("import sys\nfrom jaxlint.cli.main import main\nsys.exit(main(sys.argv[1:]))\n")
    run = subprocess.run([sys.executable, str(driver / "run.py"), "check", "--no-cache", "--output-format", "json",
                          "mod.py"], cwd=folder, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    assert not ran.exists()
