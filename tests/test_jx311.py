"""JX311 hbm-overflow: a function whose program, compiled for the TPU target chip, does not fit its
HBM, reported at the function with the buffers live at the peak and what would make it fit.

The programs compile for a TPU v5e with libtpu (no TPU needed): `jaxlint check --target tpu-v5e`
runs in a subprocess on tests/data/hbm/steps.py, whose `# expect:` markers follow the rule cases'
convention (tests/rules/README.md) for JX311 alone; test_rule_cases.py exempts JX311 for that
reason. Without libtpu (CI's older JAX) those tests skip; the readers of XLA's figures, the
message and the CPU path are JAX-free or need no TPU and always run."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import case_markers, skip_unless_libtpu_0042, skip_without_libtpu

from jaxlint.ir import hbm
from jaxlint.ir.hbm import Buffer, Hbm, Remedy
from jaxlint.ir.memory import Frame
from jaxlint.rules.jx311_hbm_overflow import message

DATA = Path(__file__).resolve().parent / "data" / "hbm" / "steps.py"
needs_libtpu = skip_without_libtpu("JX311's programs compile for a TPU v5e")


# The cases' sizes are set against the compiler of libtpu 0.0.42 (JAX 0.10.2), which the chip in
# tpu-facts.md runs. libtpu 0.0.2 (JAX 0.4.35) schedules the same programs into other sizes
# (slice_step: 14.50 GiB of its 14.96, so it fits there) and writes no live ranges: what it
# reports is right for that compiler, but not these figures.
needs_libtpu_0042 = skip_unless_libtpu_0042("sizes")

REFUSAL = ("RESOURCE_EXHAUSTED: Ran out of memory on HBM, the total memory required for HLO temporaries "
           "(48.00G) exceeds available HBM (15.75G).")
LIVE_RANGES = """\
  Live ranges at 16 (peak):
    convolution_multiply_fusion{}: 8589934592 bytes (cumulative: 8589934592 bytes)
    x.1{}: 8589934592 bytes (cumulative: 17179869184 bytes)
    fusion{}: 4294967296 bytes (cumulative: 21474836480 bytes)
  Stack trace breakdown for peak usage: 60 129 542 144 bytes
"""


def test_the_refusal_gives_what_is_needed_and_what_the_chip_has() -> None:
    assert hbm.parse_required(REFUSAL) == (48 * 2**30, int(15.75 * 2**30))
    assert hbm.parse_required("INTERNAL: something else") is None


def test_the_buffers_live_at_the_peak_are_read_from_the_live_ranges() -> None:
    assert hbm.peak_live(LIVE_RANGES) == [("convolution_multiply_fusion", 8 * 2**30), ("x.1", 8 * 2**30),
                                          ("fusion", 4 * 2**30)]
    assert hbm.peak_live("HloLiveRange (max 18):\n") == []


def test_the_slices_are_the_generations_smallest_first() -> None:
    assert hbm.slices(2, 3)[:2] == [(2, 2), (2, 4)]
    assert hbm.slices(3, 8)[0] == (2, 2, 2)


def test_the_message_names_the_target_the_sizes_the_lines_and_what_was_compiled() -> None:
    fit = Hbm("TPU v5e", int(15.75 * 2**30), int(16.5 * 2**30), True,
              (Buffer("x.1", "f32[262144,4096]", 4 * 2**30, "argument", (), "x"),
               Buffer("fusion", "f32[262144,4096]", 4 * 2**30, "temporary", (Frame("/p/m.py", 12),))),
              (Remedy("batch", "a batch of 131072 instead of 262144 ('x')", True, int(10.5 * 2**30)),
               Remedy("donate", "donating 'ws[0]'", False)), "step")
    text = message(fit, "/p/m.py")
    assert text.startswith("`step` needs 16.50 GiB of HBM on TPU v5e, which has 15.75 GiB per chip (XLA refuses")
    assert "f32[262144,4096] (4.00 GiB, argument 'x')" in text
    assert "(4.00 GiB, a temporary made at line 12)" in text
    assert "(compiled: 10.50 GiB)" in text and "donating 'ws[0]' (not checked by compiling)" in text


def test_on_the_cpu_nothing_more_is_compiled() -> None:
    import jax
    import jax.numpy as jnp

    from jaxlint.chips import CPU
    from jaxlint.ir import compile as compiled
    from jaxlint.ir import target_devices

    target_devices.use(CPU)
    closed = jax.make_jaxpr(jax.jit(lambda x: jnp.tanh(x) * 2))(jax.ShapeDtypeStruct((8,), jnp.float32))
    spent = compiled.SPENT["seconds"]
    assert compiled.compiled_facts(closed, "hbm") == []
    assert compiled.SPENT["seconds"] == spent


# Every test that takes this fixture is marked slow: its check compiles each case for a TPU
# (two to three minutes on two cores); `pytest -m slow` and .ci/run run them.
@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess]:
    root = tmp_path_factory.mktemp("jx311")
    (root / "jaxlint.toml").write_text("")
    shutil.copy(DATA, root / DATA.name)
    run = subprocess.run([sys.executable, "-m", "jaxlint", "check", "--no-cache", "--jobs", "1", "--timeout", "300",
                          "--target", "tpu-v5e", "--select", "JX311", "--output-format", "json", "."],
                         cwd=root, capture_output=True, text=True, timeout=600)
    return root, run


def _messages(run: subprocess.CompletedProcess) -> dict[int, str]:
    return {f["location"]["row"]: f["message"] for f in json.loads(run.stdout)}


@pytest.mark.slow
@needs_libtpu_0042
def test_the_findings_are_the_marked_lines(checked: tuple[Path, subprocess.CompletedProcess]) -> None:
    root, run = checked
    assert run.returncode == 1, run.stdout + run.stderr
    found = sorted((Path(f["filename"]).name, f["code"], f["location"]["row"]) for f in json.loads(run.stdout))
    assert found == case_markers(root), run.stdout
    # The near misses were traced and compiled: quiet because they fit (5.5 GiB, and 15.0 GiB = 95%).
    assert re.search(r"\(6 targets traced", run.stderr), run.stderr


@pytest.mark.slow
@needs_libtpu_0042
def test_a_refused_compile_names_its_buffers_and_their_lines(
        checked: tuple[Path, subprocess.CompletedProcess]) -> None:
    root, run = checked
    text = _messages(run)[_line(root, "def huge_step")]
    assert text.startswith("`huge_step` needs 56.00 GiB of HBM on TPU v5e, which has 15.75 GiB per chip "
                           "(XLA refuses to compile it: RESOURCE_EXHAUSTED)."), text
    line = _line(root, "h = jnp.tanh(h @ w)")
    assert "f32[65536,32768] (8.00 GiB, argument 'x')" in text
    assert f"f32[65536,32768] (8.00 GiB, a temporary made at line {line})" in text
    assert "No smaller batch, donation or sharding over a slice that jaxlint compiled fits" in text
    assert text.endswith("Also worth trying: jax.checkpoint on the layers whose temporaries are live at the peak "
                         "(recomputed in the backward pass instead of kept) (not checked by compiling).")


@pytest.mark.slow
@needs_libtpu_0042
def test_a_step_that_fits_only_on_a_slice_says_what_fits_compiled(
        checked: tuple[Path, subprocess.CompletedProcess]) -> None:
    root, run = checked
    text = _messages(run)[_line(root, "def slice_step")]
    assert "needs 16.50 GiB of HBM on TPU v5e, which has 15.75 GiB per chip" in text, text
    assert "a batch of 131072 instead of 262144 ('x') (compiled: 10.50 GiB)" in text
    assert ("sharding the batch dimension (262144) of 'x' over the chips of a TPU v5e 2x2 slice (4 chips) "
            "(--target tpu-v5e:2x2) (compiled: 5.50 GiB per chip)") in text


@pytest.mark.slow
@needs_libtpu
def test_an_update_that_fits_when_donated_says_so_compiled(checked: tuple[Path, subprocess.CompletedProcess]) -> None:
    root, run = checked
    text = _messages(run)[_line(root, "def sgd")]
    assert text.startswith("`sgd` needs 16.50 GiB of HBM on TPU v5e"), text
    assert "donating 'w' (donate_argnums), which the outputs can be written into (compiled: 11.00 GiB)" in text
    assert "a batch of" not in text  # both arguments are updated state, not a batch


def _line(root: Path, text: str) -> int:
    return next(n for n, line in enumerate((root / DATA.name).read_text().splitlines(), 1) if text in line)


def test_explain_says_a_program_at_ninety_percent_or_more() -> None:
    from jaxlint.explain.chip import hbm_use, refused

    chip = {"is_tpu": True, "chip_label": "TPU v5e", "hbm_bytes": int(15.75 * 2**30)}
    memory = {"argument_bytes": 0, "output_bytes": 0, "alias_bytes": 0}
    assert hbm_use(None, {**memory, "temp_bytes": 15 * 2**30}) is None
    assert hbm_use(chip, {**memory, "temp_bytes": int(5.5 * 2**30)})["note"] is None
    assert hbm_use(chip, {**memory, "temp_bytes": 15 * 2**30})["note"] == (
        "needs 15.00 GiB of the 15.75 GiB of HBM one TPU v5e chip has (95%): it fits, with 0.75 GiB to spare; "
        "a larger batch or another buffer may not")
    message = ("RESOURCE_EXHAUSTED: Ran out of memory on HBM, the total memory required for HLO temporaries "
               "(16.50G) exceeds available HBM (15.75G).")
    assert "refuses it, needing 16.50 GiB of the chip's 15.75 GiB" in refused(chip, message)["note"]
    old = "RESOURCE_EXHAUSTED: Compilation failure: ... Requires 384.00G, has 14.96G available."  # libtpu 0.0.2
    assert refused(chip, old)["peak_bytes"] == 384 * 2**30


@pytest.mark.slow
@needs_libtpu_0042
def test_explain_of_the_step_at_95_percent_says_so(tmp_path: Path) -> None:
    (tmp_path / "jaxlint.toml").write_text("")
    shutil.copy(DATA, tmp_path / DATA.name)
    run = subprocess.run([sys.executable, "-m", "jaxlint", "explain", "--target", "tpu-v5e", "--timeout", "300",
                          "--format", "json", f"{DATA.name}::full_step"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    report = json.loads(run.stdout)
    assert report["memory"]["hbm"]["note"].startswith(
        "needs 15.00 GiB of the 15.75 GiB of HBM one TPU v5e chip has (95%): it fits"), report["memory"]["hbm"]
    assert [f for f in report["findings"] if f.get("code") == "JX311"] == []


@needs_libtpu_0042
def test_a_program_the_module_shards_is_compiled_as_sharded_on_the_slice(tmp_path: Path) -> None:
    source = DATA.parent.parent / "hbm_sharded" / "data_parallel.py"
    (tmp_path / "jaxlint.toml").write_text("")
    shutil.copy(source, tmp_path / source.name)
    run = subprocess.run([sys.executable, "-m", "jaxlint", "check", "--no-cache", "--jobs", "1", "--timeout", "300",
                          "--target", "tpu-v5e:2x4", "--select", "JX311", "--output-format", "json", "."],
                         cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert run.returncode == 1, run.stdout + run.stderr
    findings = json.loads(run.stdout)
    assert sorted((Path(f["filename"]).name, f["code"], f["location"]["row"]) for f in findings) == \
        case_markers(tmp_path)
    text = findings[0]["message"]
    assert text.startswith("`step`, as the module shards it, needs 16.50 GiB of HBM on each chip of a TPU v5e 2x4 "
                           "slice (8 chips), which has 15.75 GiB per chip"), text
    assert "f32[262144,4096] (4.00 GiB, argument 'x')" in text  # its eighth of the batch
