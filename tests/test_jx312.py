"""JX312 tpu-tile-padding: a buffer whose TPU tiled layout takes 8x its data and 64 MiB more,
reported at the line that makes it, with the product written elementwise compiled for the target.

`jaxlint check --target tpu-v5e` runs in a subprocess on tests/data/padding/small_matrices.py
(and, in a slow test, small_inverses.py: its compile for a TPU takes longer than all the others), whose
`# expect:` markers follow the rule cases' convention (tests/rules/README.md) for JX312 alone;
test_rule_cases.py exempts JX312 for that reason. Without libtpu those tests skip; the layout
reader (checked against XLA's own buffer assignment where libtpu is there), the message and the
CPU path run everywhere."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import case_markers, skip_unless_libtpu_0042, skip_without_libtpu

from jaxlint.ir import hlo, padding
from jaxlint.ir.memory import Frame
from jaxlint.ir.padding import Padded, Padding, Rewrite
from jaxlint.rules.jx312_tpu_tile_padding import message

DATA = Path(__file__).resolve().parent / "data" / "padding" / "small_matrices.py"
INVERSES = DATA.with_name("small_inverses.py")
needs_libtpu = skip_without_libtpu("JX312's programs compile for a TPU v5e")


# The cases' layouts are those of libtpu 0.0.42 (JAX 0.10.2), which the chip in tpu-facts.md runs.
needs_libtpu_0042 = skip_unless_libtpu_0042("layouts")


@pytest.mark.parametrize(("dtype", "dims", "layout", "expected"), [
    ("f32", (262144, 3, 3), "2,1,0:T(4,128)", 262144 * 4 * 128 * 4),  # each 3x3 block in a 4x128 tile
    ("f32", (262144, 3, 3), "0,2,1:T(4,128)", 3 * 4 * 262144 * 4),  # the batch minor: 4/3 of the data
    ("bf16", (262144, 3, 3), "2,1,0:T(4,128)(2,1)", 262144 * 4 * 128 * 2),  # two bfloat16 per word
    ("f32", (1048576, 3), "0,1:T(4,128)", 4 * 1048576 * 4),
    ("f32", (10,), "0:T(128)", 128 * 4),
    ("f32", (), ":T(128)", 128 * 4),
    ("pred", (262144, 3), "0,1:T(4,128)(4,1)", 4 * 262144),
    ("pred", (256, 128), "1,0:T(8,128)E(32)", 256 * 128 * 4),  # an element widened to 32 bits
    ("f32", (8, 128), "1,0", 8 * 128 * 4),  # no tiling: the data
])
def test_the_stored_size_is_the_tiles(dtype: str, dims: tuple[int, ...], layout: str, expected: int) -> None:
    assert padding.stored_bytes(dtype, dims, layout) == expected


def test_a_buffer_in_the_cores_memory_is_not_hbm() -> None:
    assert padding.stored_bytes("f32", (262144, 3, 3), "0,2,1:T(4,128)S(1)") is None


MODULE = """\
HloModule jit_f, entry_computation_layout={(f32[262144,3,3]{0,2,1:T(4,128)})->f32[262144,3,3]{0,2,1:T(4,128)}}

FileNames
1 "/p/m.py"

FunctionNames
1 "f"

FileLocations
1 {file_name_id=1 function_name_id=1 line=7 end_line=7 column=11 end_column=16}

StackFrames
1 {file_location_id=1 parent_frame_id=0}

%fused (p: f32[262144,3,3]) -> f32[262144,3,3] {
  %p = f32[262144,3,3]{2,1,0:T(4,128)} parameter(0)
  ROOT %t = f32[262144,3,3]{2,1,0:T(4,128)} tanh(%p)
}

ENTRY %main (x: f32[262144,3,3]) -> f32[262144,3,3] {
  %x = f32[262144,3,3]{0,2,1:T(4,128)} parameter(0), metadata={op_name="args[0]"}
  %copy = f32[262144,3,3]{2,1,0:T(4,128)} copy(%x), metadata={op_name="args[0]"}
  %fusion = f32[262144,3,3]{2,1,0:T(4,128)} fusion(%copy), kind=kLoop, calls=%fused, metadata={op_name="jit(f)/tanh" stack_frame_id=1}
  %staged = f32[262144,3,3]{2,1,0:T(4,128)S(1)} copy(%fusion)
  ROOT %out = f32[262144,3,3]{0,2,1:T(4,128)} copy(%staged), metadata={op_name="jit(f)/tanh" stack_frame_id=1}
}
"""


def test_the_buffers_are_the_entrys_and_a_copy_takes_its_users_line() -> None:
    module = hlo.parse(MODULE)
    found = {b.name: b for b in padding.buffers(module)}
    assert set(found) == {"x", "copy", "fusion", "out"}  # a fusion's insides and VMEM are not buffers
    assert (found["x"].kind, found["out"].kind, found["fusion"].kind) == ("argument", "output", "temporary")
    assert found["copy"].frames == (Frame("/p/m.py", 7, 11, 16),)  # no frame of its own: its user's
    padded = padding.padded(module, padding.RATIO, padding.EXTRA)
    assert [b.name for b in padded] == ["copy", "fusion"]
    assert padded[0].stored == 512 * 2**20 and padded[0].data == 9 * 2**20 and padded[0].tile == "(4, 128)"
    assert padding.program_bytes(module, 1024) == 2 * 12 * 2**20 + 1024


def test_the_message_gives_both_sizes_the_share_and_the_compiled_rewrite() -> None:
    fusion = Padded("fusion", "f32[262144,3,3]", "2,1,0:T(4,128)", 9 * 2**20, 512 * 2**20, "temporary",
                    (Frame("/p/m.py", 7),), "jit(f)/dot_general")
    copy = Padded("copy", "bf16[262144,3,3]", "2,1,0:T(4,128)(2,1)", 9 * 2**19, 256 * 2**20, "temporary",
                  (Frame("/p/m.py", 7),), "args[0]")
    found = Padding("TPU v5e", 1536 * 2**20, (fusion, copy), together=Rewrite("", 36 * 2**20),
                    product_lines=(("/p/m.py", 7), ("/p/m.py", 8)))
    text = message(found, [fusion, copy], Rewrite("elementwise", 1024 * 2**20, same_values=True), True, 7)
    assert text.startswith("on TPU v5e the f32[262144,3,3] result of dot_general is stored in (4, 128) tiles: "
                           "512.0 MiB for 9.0 MiB of data (57x), 33% of the 1.5 GiB the function needs"), text
    assert "1 more buffer made here is padded too (256.0 MiB for 4.5 MiB)" in text
    assert text.endswith("With this product written elementwise as below, it needs 1.0 GiB; with the products "
                         "of line 8 written so too, 36.0 MiB."), text
    text = message(found, [fusion], None, False, 7)
    assert "Keep the small axes (3, 3) out of the two minor positions" in text
    gathered = Padded("gather_fusion", "f32[337500,3]", "1,0:T(8,128)", 337500 * 12, 337504 * 512, "temporary",
                      (Frame("/p/m.py", 9),), "jit(f)/gather")
    text = message(found, [gathered], None, False, 9)
    assert "164.8 MiB for 3.9 MiB of data (43x)" in text
    assert "gathering each column on its own (`x[:, c][idx]` for each c) avoids it, at a cost in time" in text


def test_on_the_cpu_nothing_more_is_compiled() -> None:
    import jax
    import jax.numpy as jnp

    from jaxlint.chips import CPU
    from jaxlint.ir import compile as compiled
    from jaxlint.ir import target_devices

    target_devices.use(CPU)
    closed = jax.make_jaxpr(jax.jit(lambda a, b: a @ b))(*[jax.ShapeDtypeStruct((262144, 3, 3), jnp.float32)] * 2)
    spent = compiled.SPENT["seconds"]
    assert compiled.compiled_facts(closed, "padding") == []
    assert compiled.SPENT["seconds"] == spent


def test_the_elementwise_contraction_is_the_products_value() -> None:
    import numpy as np
    from jax import lax

    from jaxlint.ir.elementwise import contract

    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((5, 3, 4, 2)).astype("float32"), rng.standard_normal((5, 4, 3, 6)).astype("float32")
    numbers = (((2, 3), (1, 3)), ((0,), (0,)))  # batch 0, contract (4, 2)... with b's axes 1 and 3
    b = b[..., :2]
    expected = lax.dot_general(a, b, numbers, precision=lax.Precision.HIGHEST)
    found = contract(a, b, numbers, np.float32)
    assert found.shape == expected.shape == (5, 3, 3)
    assert np.allclose(found, expected, rtol=1e-5, atol=1e-5)


def check_for_tpu(root: Path, data: Path) -> tuple[Path, subprocess.CompletedProcess]:
    """``data`` alone in ``root``, checked for a TPU v5e with JX312 selected."""
    (root / "jaxlint.toml").write_text("")
    shutil.copy(data, root / data.name)
    run = subprocess.run([sys.executable, "-m", "jaxlint", "check", "--no-cache", "--jobs", "1", "--timeout", "300",
                          "--target", "tpu-v5e", "--select", "JX312", "--output-format", "json", "."],
                         cwd=root, capture_output=True, text=True, timeout=600)
    return root, run


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess]:
    return check_for_tpu(tmp_path_factory.mktemp("jx312"), DATA)


def _findings(run: subprocess.CompletedProcess) -> dict[int, dict]:
    return {f["location"]["row"]: f for f in json.loads(run.stdout)}


def _line(root: Path, text: str, data: Path = DATA) -> int:
    return next(n for n, line in enumerate((root / data.name).read_text().splitlines(), 1) if text in line)


@pytest.mark.slow
@needs_libtpu_0042
def test_the_findings_are_the_marked_lines(checked: tuple[Path, subprocess.CompletedProcess]) -> None:
    root, run = checked
    assert run.returncode == 1, run.stdout + run.stderr
    found = sorted((Path(f["filename"]).name, f["code"], f["location"]["row"]) for f in json.loads(run.stdout))
    assert found == case_markers(root), run.stdout
    # The near misses were traced and compiled: quiet because their layouts are not padded enough.
    assert re.search(r"\(5 targets traced", run.stderr), run.stderr


@needs_libtpu_0042
def test_a_padded_product_gives_its_sizes_and_the_rewrite_compiled(
        checked: tuple[Path, subprocess.CompletedProcess]) -> None:
    root, run = checked
    finding = _findings(run)[_line(root, "return c @ b")]
    text = finding["message"]
    assert text.startswith("on TPU v5e the f32[262144,3,3] result of dot_general is stored in (4, 128) tiles: "
                           "512.0 MiB for 9.0 MiB of data (57x), 33% of the 1.5 GiB the function needs"), text
    first = _line(root, "c = jnp.tanh(a @ b)")
    assert f"with the products of line {first} written so too, 36.0 MiB." in text
    assert text.endswith("Compiled for TPU v5e."), text
    edit = finding["fix"]["edits"][0]
    assert finding["fix"]["applicability"] == "display-only"
    assert edit["content"] == "(c[..., :, :, None] * b[..., None, :, :]).sum(-2)"


@pytest.mark.slow
@needs_libtpu_0042
def test_an_inverse_of_small_matrices_says_what_to_do_as_text(tmp_path: Path) -> None:
    root, run = check_for_tpu(tmp_path, INVERSES)
    assert run.returncode == 1, run.stdout + run.stderr
    found = sorted((Path(f["filename"]).name, f["code"], f["location"]["row"]) for f in json.loads(run.stdout))
    assert found == case_markers(root), run.stdout
    finding = _findings(run)[_line(root, "return jnp.linalg.inv(a)", INVERSES)]
    assert "Keep the small axes (3, 3) out of the two minor positions" in finding["message"]
    assert finding["fix"] is None


@pytest.mark.slow
@needs_libtpu
def test_the_sizes_are_xlas_buffer_assignment(tmp_path: Path) -> None:
    """Every HBM buffer's size read from the layouts equals the size XLA's buffer assignment gives
    it, for the padded programs of the cases (compiled here with XLA's dump on)."""
    import jax
    import jax.numpy as jnp

    from jaxlint.chips import parse_target
    from jaxlint.ir import target_devices

    previous = target_devices.current()
    target_devices.use(parse_target("tpu-v5e"))
    small = jax.ShapeDtypeStruct((262144, 3, 3), jnp.float32)
    compared = 0
    try:
        for index, (function, args) in enumerate(((lambda a, b: jnp.tanh(a @ b) @ b, (small, small)),
                                                  (jnp.linalg.inv, (small,)),
                                                  (lambda a: ((a > 0).astype(jnp.int8), a[..., 0] > 0), (small,)))):
            folder = tmp_path / str(index)
            compiled = target_devices.lower_function(function, args).compile(
                compiler_options={"xla_dump_to": str(folder)})
            assignment = next(folder.glob("*after_optimizations-buffer-assignment.txt")).read_text()
            sizes = {(m[1], m[2] or "{}"): int(m[3]) for m in re.finditer(
                r"value: <\d+ ([\w.\-]+)(\{[\d,]*\})? @\d+> \(size=(\d+),offset=\d+\)", assignment)}
            module = hlo.parse(compiled.as_text())
            for instruction in (i for c in module.computations.values() for i in c.instructions):
                if "((" in instruction.shape:
                    continue  # a nested tuple (an asynchronous slice's): its indices are not positions
                arrays = padding._arrays(instruction.shape)
                for position, (dtype, dims, layout) in enumerate(arrays):
                    index_text = "{}" if instruction.shape.lstrip().startswith(dtype) else f"{{{position}}}"
                    size = sizes.get((instruction.name, index_text))
                    stored = padding.stored_bytes(dtype, dims, layout)
                    if size is None or stored is None:
                        continue
                    assert stored == size, (instruction.name, instruction.shape)
                    compared += 1
    finally:
        target_devices.use(previous)
    assert compared >= 20


@needs_libtpu_0042  # libtpu 0.0.2 dumps no live ranges, by which JX311 finds its module: JX312 compiles its own
def test_the_program_jx311_compiled_serves_jx312(monkeypatch: pytest.MonkeyPatch) -> None:
    """One TPU compile per program for both rules: after JX311's (hbm) compile, JX312 (padding)
    reads the same optimized module and compiles only its rewrite, never the program again."""
    import jax
    import jax.numpy as jnp

    from jaxlint.chips import parse_target
    from jaxlint.ir import compile as compiled
    from jaxlint.ir import target_devices

    previous = target_devices.current()
    target_devices.use(parse_target("tpu-v5e"))
    try:
        small = jax.ShapeDtypeStruct((262144, 3, 3), jnp.float32)
        closed = jax.make_jaxpr(jax.jit(lambda a, b: jnp.tanh(a @ b)))(small, small)
        compiled.compiled_facts(closed, "hbm")

        def no_second_compile(*args: object, **kwargs: object) -> None:
            raise AssertionError("the program was compiled again for JX312")

        monkeypatch.setattr(compiled, "_compiled", no_second_compile)
        [found] = compiled.compiled_facts(closed, "padding")
    finally:
        target_devices.use(previous)
    assert found.buffers[0].stored == 512 * 2**20 and found.needed > 0
