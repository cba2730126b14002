"""The compile target (`target` / --target): its forms and errors, the libtpu it needs, and
check, explain and the in-process drivers compiling for a TPU without one (libtpu's compile-only
devices; tpu-facts.md). Tests that compile for a TPU skip where libtpu is not installed."""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest
from helpers import skip_without_libtpu, with_plugin_autoload

from jaxlint.chips import CPU, TargetError, install_line, parse_target

REPO = Path(__file__).resolve().parent.parent
FOUNDING = REPO / "examples" / "founding.py"
needs_libtpu = skip_without_libtpu("no TPU target to compile for (jaxlint[tpu])")


def jaxlint(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "jaxlint", *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=600)


@pytest.mark.parametrize("text, chips, label, topology", [
    ("tpu-v5e", 1, "TPU v5e", "v5e:1x1"),
    ("tpu-v6e", 1, "TPU v6e", "v6e:1x1"),
    ("tpu-v5p", 1, "TPU v5p", "v5:1x1x1"),
    ("tpu-v4", 1, "TPU v4", "v4:1x1x1"),
    ("tpu-v5e:2x4", 8, "TPU v5e 2x4 slice (8 chips)", "v5e:2x4"),
    ("TPU-V5P:2x2x1", 4, "TPU v5p 2x2x1 slice (4 chips)", "v5:2x2x1"),
])
def test_target_forms(text: str, chips: int, label: str, topology: str) -> None:
    target = parse_target(text)
    assert (target.chips, target.label, target.topology, target.is_tpu) == (chips, label, topology, True)
    assert parse_target("cpu") == CPU and not CPU.is_tpu and CPU.label == "CPU"


@pytest.mark.parametrize("text, says", [
    ("gpu", "unknown target 'gpu'"),
    ("tpu-v7", "unknown target 'tpu-v7'"),
    ("tpu-v5e:2x2x1", "a slice of it is 2 sizes, e.g. tpu-v5e:2x4"),
    ("tpu-v5p:2x2", "a slice of it is 3 sizes, e.g. tpu-v5p:2x2x1"),
    ("tpu-v5e:0x4", "unknown topology '0x4'"),
])
def test_unknown_targets_name_the_valid_forms(text: str, says: str) -> None:
    with pytest.raises(TargetError) as error:
        parse_target(text)
    assert says in str(error.value)
    assert "cpu, tpu-v5e, tpu-v6e, tpu-v5p, tpu-v4 (one chip)" in str(error.value)


def test_a_bad_target_is_exit_2_without_a_traceback(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("import jax\n")
    flag = jaxlint("check", "--target", "tpu-v9", ".", cwd=tmp_path)
    assert flag.returncode == 2 and "Traceback" not in flag.stderr
    assert "unknown target 'tpu-v9'" in flag.stderr and "tpu-v5e:2x4" in flag.stderr
    (tmp_path / "jaxlint.toml").write_text('target = "tpu-v5e:3"\n')
    key = jaxlint("check", ".", cwd=tmp_path)
    assert key.returncode == 2 and "Traceback" not in key.stderr
    assert "`target`" in key.stderr and "unknown topology '3'" in key.stderr
    explain = jaxlint("explain", "--target", "nope", f"{FOUNDING}::my_mapped_function", cwd=tmp_path)
    assert explain.returncode == 2 and "unknown target 'nope'" in explain.stderr and "Traceback" not in explain.stderr


def test_show_settings_shows_the_target(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("import jax\n")
    assert 'target = "cpu"' in jaxlint("check", "--show-settings", ".", cwd=tmp_path).stdout
    (tmp_path / "jaxlint.toml").write_text('target = "tpu-v5e:2x4"\n')
    if importlib.util.find_spec("libtpu") is not None:
        assert 'target = "tpu-v5e:2x4"' in jaxlint("check", "--show-settings", ".", cwd=tmp_path).stdout


def _without_libtpu(into: Path) -> str:
    """A sys.path prefix of every entry of this environment's site-packages but libtpu's, so a
    ``python -S`` process sees the same packages as this one, less libtpu."""
    site = Path(sysconfig.get_paths()["purelib"])
    for entry in site.iterdir():
        if not entry.name.lower().startswith("libtpu"):
            (into / entry.name).symlink_to(entry)
    return str(into)


def test_a_tpu_target_without_libtpu_says_what_to_install(tmp_path: Path) -> None:
    packages = tmp_path / "site"
    packages.mkdir()
    path = [str(REPO), _without_libtpu(packages)]
    (tmp_path / "m.py").write_text("import jax\n")
    run = subprocess.run([sys.executable, "-S", "-c",
                          f"import sys; sys.path[:0] = {path!r}; from jaxlint.cli.main import entry; sys.exit(entry())",
                          "check", "--target", "tpu-v5e", "."],
                         cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert run.returncode == 2, run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in run.stderr
    assert "libtpu, which is not installed" in lines[0] and "pip install" in lines[0]
    assert "jaxlint[" not in lines[0]  # PyPI's jaxlint is another project


@pytest.mark.parametrize("pin, line", [("libtpu==0.0.42.*", 'pip install "libtpu==0.0.42.*"'),
                                       (None, 'pip install "jax[tpu]"')])
def test_the_install_line_names_the_libtpu_not_pypis_jaxlint(pin: str | None, line: str) -> None:
    assert install_line(pin) == line


@needs_libtpu
def test_chip_peaks_match_jax_tpu_info() -> None:
    """jaxlint's table of published peaks (JAX-free, for the parent) agrees with JAX's own."""
    tpu_info = pytest.importorskip("jax._src.pallas.mosaic.tpu_info")
    for name, version in (("tpu-v5e", "TPU_V5E"), ("tpu-v6e", "TPU_V6E"), ("tpu-v5p", "TPU_V5P"), ("tpu-v4", "TPU_V4")):
        target = parse_target(name)
        megacore = 2 if target.megacore else 1
        info = tpu_info.get_tpu_info_for_chip(getattr(tpu_info.ChipVersion, version), megacore)
        # JAX gives one TensorCore's share; a megacore chip (v4, v5p) runs two as one device.
        assert info.bf16_ops_per_second * info.num_cores == pytest.approx(target.bf16_flops, rel=1e-6)
        assert info.mem_bw_bytes_per_second * info.num_cores == pytest.approx(target.hbm_bandwidth, rel=1e-6)


def _explain(target: str, tmp_path: Path) -> dict:
    run = jaxlint("explain", "--format", "json", "--target", target, f"{FOUNDING}::my_mapped_function", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(report, json.loads((REPO / "tests" / "data" / "explain-schema.json").read_text()))
    return report


@needs_libtpu
def test_explain_gives_the_tpu_program(tmp_path: Path) -> None:
    """The founding example: the CPU copies `x + 1` into the multiply's fusion; the TPU computes it
    once (tpu-facts.md). explain names the chip, its HBM and an estimated time per call."""
    cpu, tpu = _explain("cpu", tmp_path), _explain("tpu-v5e", tmp_path)
    assert cpu["hlo"]["compiled_on"] == "cpu" and tpu["hlo"]["compiled_on"] == "tpu-v5e"
    assert "TPU v5e" in tpu["cost"]["compiled_label"]
    assert [d for d in cpu["hlo"]["duplicates"]] and not tpu["hlo"]["duplicates"]
    hbm = tpu["memory"]["hbm"]
    assert hbm["hbm_bytes"] == int(15.75 * 2 ** 30) or hbm["hbm_bytes"] == int(14.96 * 2 ** 30)  # libtpu's own
    assert hbm["peak_bytes"] > 0 and hbm["share"] < 0.01 and hbm["note"] is None
    assert tpu["cost"]["time"]["bound"] == "memory" and tpu["cost"]["time"]["seconds"] > 0
    assert cpu["memory"].get("hbm") is None and cpu["cost"].get("time") is None
    text = jaxlint("explain", "--target", "tpu-v5e", f"{FOUNDING}::my_mapped_function", cwd=tmp_path).stdout
    assert "2. Optimized HLO (TPU v5e)" in text and "HBM of one TPU v5e chip" in text and "time per call" in text


SHARDED = textwrap.dedent("""\
    from functools import partial

    import jax
    import jax.numpy as jnp
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    try:  # JAX >= 0.6 makes Explicit axes by default; with_sharding_constraint needs Auto ones
        from jax.sharding import AxisType
        AUTO = {"axis_types": (AxisType.Auto, AxisType.Auto)}
    except ImportError:  # 0.4.35: every axis is Auto
        AUTO = {}

    mesh = jax.make_mesh((4, 2), ("x", "y"), **AUTO)
    blocks = NamedSharding(mesh, P("y", None, "x"))
    X = jax.ShapeDtypeStruct((64, 128, 64), jnp.float32)


    @partial(jax.jit, in_shardings=(blocks, blocks))
    def h(a, b):
        d = a + b
        return jax.lax.with_sharding_constraint(d, NamedSharding(mesh, P(None, ("x", "y"), None)))


    h.lower(X, X)
    """)


@needs_libtpu
def test_a_sharded_program_is_laid_on_the_slice(tmp_path: Path) -> None:
    """jax#21562 on a v5e 2x4 slice: the mesh's 8 CPU devices become the slice's 8 chips (the
    jit's shardings and the constraint inside), and the TPU's partitioner warns as the CPU's
    does (JX310, naming the target). One chip cannot hold the mesh: said, not silently skipped."""
    (tmp_path / "sharded.py").write_text(SHARDED)
    slice_run = jaxlint("check", "--no-cache", "--target", "tpu-v5e:2x4", "--select", "JX310",
                        "--output-format", "json", ".", cwd=tmp_path)
    found = json.loads(slice_run.stdout)
    assert [(f["code"], f["location"]["row"]) for f in found] == [("JX310", 21)], slice_run.stderr
    assert found[0]["message"].endswith("Compiled for TPU v5e 2x4 slice (8 chips).")
    chip_run = jaxlint("check", "--no-cache", "--target", "tpu-v5e", "--select", "JX310", ".", cwd=tmp_path)
    assert "sharded.py: not compiled for the target: its mesh (x=4, y=2) has 8 devices and TPU v5e has 1 chip" \
        in chip_run.stderr
    assert chip_run.returncode == 0


DONATED = textwrap.dedent("""\
    import functools

    import jax
    import jax.numpy as jnp


    @functools.partial(jax.jit, donate_argnums=0)
    def cast(x):
        return x.astype(jnp.bfloat16)


    cast.lower(jax.ShapeDtypeStruct((4096, 4096), jnp.float32))
    """)


@needs_libtpu
def test_compiled_rules_read_the_tpu_program(tmp_path: Path) -> None:
    """JX308 reads the alias map of the program compiled for the target and says so."""
    (tmp_path / "donated.py").write_text(DONATED)
    cpu = json.loads(jaxlint("check", "--no-cache", "--select", "JX308", "--output-format", "json", ".",
                             cwd=tmp_path).stdout)
    tpu = json.loads(jaxlint("check", "--no-cache", "--target", "tpu-v5e", "--select", "JX308", "--output-format",
                             "json", ".", cwd=tmp_path).stdout)
    assert [f["code"] for f in cpu] == ["JX308"] and [f["code"] for f in tpu] == ["JX308"]
    assert "Compiled for" not in cpu[0]["message"]
    assert tpu[0]["message"].endswith("Compiled for TPU v5e.")


@needs_libtpu
def test_lint_in_process_compiles_for_the_configured_target(tmp_path: Path) -> None:
    """jaxlint.lint (in the caller's process) reads the target from the project's configuration,
    as check does: the same JX308 with the target named."""
    (tmp_path / "jaxlint.toml").write_text('target = "tpu-v5e"\n')
    (tmp_path / "donated.py").write_text(DONATED.replace('cast.lower(', '# cast.lower('))
    script = ("import jax, jax.numpy as jnp, jaxlint, donated\n"
              "found = jaxlint.lint(donated.cast, jax.ShapeDtypeStruct((4096, 4096), jnp.float32))\n"
              "print([f.message for f in found if f.code == 'JX308'])\n")
    run = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO)])})
    assert run.returncode == 0, run.stderr
    assert "Compiled for TPU v5e." in run.stdout


@needs_libtpu
def test_retargeting_keeps_named_tuples_and_lays_meshes_on_chips() -> None:
    """A convolution's dimension numbers (a named tuple in the equation's params) survive the
    retargeting that moves meshes to the chips: the program compiles for the TPU, with TPU tiles."""
    import jax
    import jax.numpy as jnp

    from jaxlint.ir import target_devices

    def conv(images, kernel):
        return jax.lax.conv_general_dilated(images, kernel, (1, 1), "SAME",
                                            dimension_numbers=("NHWC", "HWIO", "NHWC"))

    args = [jax.ShapeDtypeStruct((2, 16, 16, 8), jnp.bfloat16), jax.ShapeDtypeStruct((3, 3, 8, 16), jnp.bfloat16)]
    closed = jax.make_jaxpr(conv)(*args)
    before = target_devices.current()
    target_devices.use(parse_target("tpu-v5e"))
    try:
        moved = target_devices.retarget(closed)
        assert moved.jaxpr.eqns[0].params["dimension_numbers"] is closed.jaxpr.eqns[0].params["dimension_numbers"]
        text = target_devices.lower_jaxpr(closed, args).compile().as_text()
    finally:
        target_devices.use(before)
    assert "T(8,128)" in text and "convolution(" in text


@needs_libtpu
def test_fix_verification_compiles_for_the_target(tmp_path: Path) -> None:
    """--cost compiled: the figures before and after a verified fix are the target's, and say so."""
    (tmp_path / "founding.py").write_text(FOUNDING.read_text())
    notes = {}
    for target in ("cpu", "tpu-v5e"):
        run = jaxlint("check", "--no-cache", "--cost", "compiled", "--target", target, "--output-format", "json",
                      "founding.py", cwd=tmp_path)
        [finding] = json.loads(run.stdout)
        notes[target] = finding["cost"]["note"]
    assert notes["cpu"].startswith("compiled before and after the fix")
    assert notes["tpu-v5e"].startswith("compiled for TPU v5e before and after the fix")


@needs_libtpu
def test_pytest_jaxlint_target(tmp_path: Path) -> None:
    """pytest --jaxlint --jaxlint-target tpu-v5e: the test's calls compiled for the target in the
    test's own process; a bad name is pytest's usage error."""
    (tmp_path / "jaxlint.toml").write_text("")
    (tmp_path / "donated.py").write_text(DONATED.replace("cast.lower(", "# cast.lower("))
    (tmp_path / "test_donated.py").write_text(
        "import jax.numpy as jnp\nfrom donated import cast\n\n\ndef test_cast():\n"
        "    assert cast(jnp.ones((2048, 2048))).dtype == jnp.bfloat16\n")

    def pytest_run(*flags: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0", "--jaxlint",
                               *flags], cwd=tmp_path, capture_output=True, text=True, timeout=600,
                              env={**os.environ, "PYTHONPATH": str(REPO)})

    run = pytest_run("--jaxlint-target", "tpu-v5e")
    assert "JX308" in run.stdout and "Compiled for TPU v5e." in run.stdout, run.stdout + run.stderr
    bad = pytest_run("--jaxlint-target", "tpu-v9")
    assert bad.returncode == 4 and "unknown target 'tpu-v9'" in bad.stderr


COMPLEX = textwrap.dedent("""\
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)


    @jax.jit
    def to_complex(x):
        return x.astype(jnp.complex128) * 2


    to_complex.lower(jax.ShapeDtypeStruct((4,), jnp.float64))
    """)


@needs_libtpu
def test_a_program_the_tpu_compiler_aborts_on_is_not_compiled_and_said(tmp_path: Path) -> None:
    """libtpu aborts the whole process on a conversion to complex128 (diffrax's tests under x64):
    such a program is never compiled for a TPU, in the worker or in pytest's process, and the
    user is told; the compiles JX311 makes print nothing into pytest's terminal."""
    (tmp_path / "jaxlint.toml").write_text("")
    (tmp_path / "to_complex.py").write_text(COMPLEX)
    run = jaxlint("check", "--no-cache", "--target", "tpu-v5e", "--output-format", "json", ".", cwd=tmp_path)
    assert json.loads(run.stdout) == [], run.stdout  # no JX903: the worker did not abort
    assert "not compiled for the target: the program computes in complex128" in run.stderr
    (tmp_path / "to_complex.py").write_text(COMPLEX.replace("to_complex.lower(", "# to_complex.lower("))
    # Warnings are errors, as in numpyro's and blackjax's suites (a file jaxlint left open failed them).
    (tmp_path / "pytest.ini").write_text("[pytest]\nasyncio_default_fixture_loop_scope = function\n"
                                         "filterwarnings =\n    error\n")
    (tmp_path / "test_it.py").write_text(
        "import jax.numpy as jnp\nfrom to_complex import to_complex\n\n\n"
        "def test_it():\n    assert to_complex(jnp.ones(4)).dtype == jnp.complex128\n")
    tests = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0", "--jaxlint",
                            "--jaxlint-target", "tpu-v5e"], cwd=tmp_path, capture_output=True, text=True, timeout=600,
                           # every installed plugin, as such a suite runs (pytest.ini sets pytest-asyncio's option)
                           env=with_plugin_autoload({**os.environ, "PYTHONPATH": str(REPO)}))
    assert tests.returncode == 0, tests.stdout + tests.stderr
    assert "1 passed" in tests.stdout and "Ran out of memory" not in tests.stdout + tests.stderr
    assert "jaxlint: warning: not compiled for the target: the program computes in complex128" in tests.stdout


EXPLICIT = textwrap.dedent("""\
    import functools

    import jax
    import jax.numpy as jnp
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    mesh = jax.make_mesh((4, 2), ("data", "model"))  # Explicit axes by default (JAX >= 0.6)
    jax.sharding.set_mesh(mesh)


    @functools.partial(jax.jit, donate_argnums=0)
    def to_bf16(x):
        return (x * 2).astype(jnp.bfloat16)


    to_bf16.trace(jax.ShapeDtypeStruct((1024, 1024), jnp.float32, sharding=NamedSharding(mesh, P("data", None))))
    """)


@needs_libtpu
def test_a_program_with_explicit_types_is_said_not_compiled_for_a_tpu(tmp_path: Path) -> None:
    """Types that carry the CPU mesh's shardings cannot be laid on the chips yet: the compiled
    rules' silence there is said, not passed off as a clean result (JX308 on the CPU)."""
    jax = pytest.importorskip("jax")
    if not hasattr(jax.sharding, "AxisType"):
        pytest.skip("JAX 0.4.35 has no Explicit axes")
    (tmp_path / "jaxlint.toml").write_text('select = ["JX308"]\n')
    (tmp_path / "explicit.py").write_text(EXPLICIT)
    cpu = jaxlint("check", "--no-cache", "--output-format", "json", ".", cwd=tmp_path)
    assert [f["code"] for f in json.loads(cpu.stdout)] == ["JX308"], cpu.stderr
    tpu = jaxlint("check", "--no-cache", "--target", "tpu-v5e:2x4", "--output-format", "json", ".", cwd=tmp_path)
    assert json.loads(tpu.stdout) == []
    assert "explicit.py: not compiled for the target: its types carry shardings" in tpu.stderr


@needs_libtpu
def test_jaxlint_run_says_what_was_not_compiled_for_the_target(tmp_path: Path) -> None:
    (tmp_path / "jaxlint.toml").write_text("")
    (tmp_path / "to_complex.py").write_text(COMPLEX.replace("to_complex.lower(", "# to_complex.lower("))
    (tmp_path / "main.py").write_text("import jax.numpy as jnp\nfrom to_complex import to_complex\n\n"
                                      "print(to_complex(jnp.ones(4)).dtype)\n")
    run = jaxlint("run", "--target", "tpu-v5e", "python", "main.py", cwd=tmp_path)
    assert "complex128" in run.stdout
    assert "jaxlint: warning: not compiled for the target: the program computes in complex128" in run.stderr, \
        run.stderr
