"""JX709 bf16-matmul-before-solve: on a TPU target, a float32 product at default precision (one
bfloat16 pass of the matrix unit) whose result reaches a linear solve or a factorization.

The programs compile for a TPU v5e with libtpu (no TPU needed): `jaxlint check --target tpu-v5e`
runs in a subprocess on tests/data/precision/solves.py, whose `# expect:` markers follow the rule
cases' convention (tests/rules/README.md) for JX709 alone; test_rule_cases.py exempts JX709 for
that reason. Without libtpu (CI's older JAX may lack it) those tests skip; the reader of XLA's
products, the dataflow over the IR, the jaxpr's precision, the fix's text and the CPU target
need no TPU and always run."""
from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import case_markers, skip_without_libtpu

from jaxlint.ir import precision
from jaxlint.model import Span
from jaxlint.rules.jx709_bf16_matmul_before_solve import precision_fix, product_at
from jaxlint.scan.index import SourceIndex
from jaxlint.text import apply_edits

DATA = Path(__file__).resolve().parent / "data" / "precision" / "solves.py"
PAGE = Path(__file__).resolve().parents[1] / "rules" / "JX709.md"
needs_libtpu = skip_without_libtpu("JX709's programs compile for a TPU v5e")

# What XLA's TPU compiler (libtpu 0.0.42, JAX 0.10.2) printed for `a = x.T @ x` (line 7) and
# `b = jnp.matmul(x.T, x, precision="highest")` (line 8), trimmed: the frame tables, and each
# product inside its fusion.
MODULE = """\
HloModule jit_f, is_scheduled=true

FileNames
1 "/p/m.py"
2 "/p/jaxlint/ir/target_devices.py"

FunctionNames
1 "f"
2 "lower"

FileLocations
1 {file_name_id=2 function_name_id=2 line=220 end_line=220 column=15 end_column=55}
2 {file_name_id=1 function_name_id=1 line=7 end_line=7 column=8 end_column=15}
3 {file_name_id=1 function_name_id=1 line=8 end_line=8 column=8 end_column=47}

StackFrames
1 {file_location_id=1 parent_frame_id=1}
2 {file_location_id=2 parent_frame_id=2}
3 {file_location_id=3 parent_frame_id=2}


%fused_computation (param_0: f32[256,128]) -> f32[128,128] {
  %param_0 = f32[256,128]{1,0:T(8,128)S(1)} parameter(0)
  ROOT %convolution.2 = f32[128,128]{1,0:T(8,128)} convolution(%param_0, %param_0), dim_labels=fb_io->bf, \
metadata={op_name="jit(f)/dot_general" stack_frame_id=2}
}

%fused_computation.1 (param_0.1: f32[256,128]) -> f32[128,128] {
  %param_0.1 = f32[256,128]{1,0:T(8,128)S(1)} parameter(0)
  ROOT %convolution.3 = f32[128,128]{1,0:T(8,128)} convolution(%param_0.1, %param_0.1), dim_labels=fb_io->bf, \
operand_precision={highest,highest}, metadata={op_name="jit(f)/dot_general" stack_frame_id=3}
}

ENTRY %main.1 (args_0_.1: f32[256,128]) -> (f32[128,128], f32[128,128]) {
  %args_0_.1 = f32[256,128]{1,0:T(8,128)} parameter(0)
  %fusion = f32[128,128]{1,0:T(8,128)} fusion(%args_0_.1), kind=kOutput, calls=%fused_computation, \
metadata={op_name="jit(f)/dot_general" stack_frame_id=2}
  %fusion.1 = f32[128,128]{1,0:T(8,128)} fusion(%args_0_.1), kind=kOutput, calls=%fused_computation.1, \
metadata={op_name="jit(f)/dot_general" stack_frame_id=3}
  ROOT %tuple.1 = (f32[128,128]{1,0:T(8,128)}, f32[128,128]{1,0:T(8,128)}) tuple(%fusion, %fusion.1)
}
""".replace("\\\n", "")

# JAX 0.4.35 (libtpu 0.0.2) writes the innermost frame's file and line on each instruction, no
# column; a product in a loop body reads operands XLA itself rounded to bfloat16.
OLD_MODULE = """\
HloModule jit_f, entry_computation_layout={(f32[64,64]{1,0})->f32[64,64]{1,0}}

%fused_computation (param_0: f32[64,64]) -> f32[64,64] {
  %param_0 = f32[64,64]{1,0} parameter(0)
  %convert.1 = bf16[64,64]{1,0} convert(f32[64,64]{1,0} %param_0), metadata={op_name="jit(f)/dot_general" \
source_file="/p/m.py" source_line=12}
  ROOT %convolution.4 = f32[64,64]{1,0} convolution(bf16[64,64]{1,0} %convert.1, bf16[64,64]{1,0} %convert.1), \
dim_labels=bf_io->bf, metadata={op_name="jit(f)/dot_general" source_file="/p/m.py" source_line=12}
}

ENTRY %main (Arg_0.1: f32[64,64]) -> f32[64,64] {
  %Arg_0.1 = f32[64,64]{1,0} parameter(0)
  ROOT %fusion = f32[64,64]{1,0} fusion(f32[64,64]{1,0} %Arg_0.1), kind=kOutput, calls=%fused_computation, \
metadata={op_name="jit(f)/dot_general" source_file="/p/m.py" source_line=12}
}
""".replace("\\\n", "")


def test_the_products_of_the_compiled_module_with_their_precision_and_frames() -> None:
    found = precision.products(MODULE)
    assert [(p.opcode, p.dtypes, p.result, p.precision) for p in found] == [
        ("convolution", ("f32", "f32"), "f32", ()),
        ("convolution", ("f32", "f32"), "f32", ("highest", "highest"))]
    default, highest = found
    assert default.frames[0] == ("/p/m.py", 7, 8) and default.one_pass
    assert not highest.one_pass and not highest.default_precision
    assert precision.one_pass_at(found, "/p/m.py", 7, 8) == [default]
    assert precision.one_pass_at(found, "/p/m.py", 7, 12) == []  # another product of the line
    assert precision.one_pass_at(found, "/p/m.py", 8) == []  # HIGHEST
    assert precision.one_pass_at(found, "/p/other.py", 7) == []


def test_the_old_metadata_gives_the_line_alone_and_xla_own_rounding_is_one_pass() -> None:
    [product] = precision.products(OLD_MODULE)
    assert product.dtypes == ("bf16", "bf16") and product.result == "f32"
    assert product.frames == (("/p/m.py", 12, None),)
    assert product.one_pass
    assert precision.one_pass_at([product], "/p/m.py", 12, 30) == [product]  # no column to compare


def test_operand_precision_and_algorithms() -> None:
    assert precision.operand_precision("{high,high}") == ("high", "high")
    assert precision.operand_precision("") == ()
    three = precision.Product("dot", ("f32", "f32"), "f32", ("high", "high"), "", ())
    chosen = precision.Product("dot", ("f32", "f32"), "f32", (), "dot_bf16_bf16_f32_x3", ())
    wide = precision.Product("dot", ("f64", "f64"), "f64", (), "", ())
    assert not three.one_pass and not chosen.one_pass and not wide.one_pass
    assert precision.products("not HLO") == []


def _fixed(source: str, snippet: str) -> str:
    index = SourceIndex("/p/m.py", source)
    node = next(n for n in ast.walk(index.tree) if isinstance(n, ast.expr) and index.text(n) == snippet)
    assert product_at(index, index.span(node)) is node
    fix = precision_fix(index, node)
    assert fix is not None and fix.applicability == "unsafe"
    return apply_edits(source, list(fix.edits))


def test_the_fix_passes_highest_to_each_form_of_product() -> None:
    head = "import jax\nimport jax.numpy as jnp\n"
    assert _fixed(head + "g = x.T @ x\n", "x.T @ x") == \
        head + "g = jnp.matmul(x.T, x, precision=jax.lax.Precision.HIGHEST)\n"
    assert _fixed(head + "g = jnp.dot(x, x.T)\n", "jnp.dot(x, x.T)") == \
        head + "g = jnp.dot(x, x.T, precision=jax.lax.Precision.HIGHEST)\n"
    assert _fixed(head + 'g = jnp.einsum("ni,nj->ij", x, x, optimize=True)\n',
                  'jnp.einsum("ni,nj->ij", x, x, optimize=True)') == \
        head + 'g = jnp.einsum("ni,nj->ij", x, x, optimize=True, precision=jax.lax.Precision.HIGHEST)\n'
    assert _fixed(head + "g = jnp.matmul(x.T, x, precision=None)\n", "jnp.matmul(x.T, x, precision=None)") == \
        head + "g = jnp.matmul(x.T, x, precision=jax.lax.Precision.HIGHEST)\n"
    assert _fixed(head + "g = x.dot(y)\n", "x.dot(y)") == head + "g = x.dot(y, precision=jax.lax.Precision.HIGHEST)\n"


def test_the_fix_writes_precision_as_the_module_imports_it() -> None:
    source = "from jax import lax\n\ng = lax.dot_general(a, b, dims, None)\nh = lax.dot(a, b)\n"
    fixed = _fixed(source, "lax.dot_general(a, b, dims, None)")
    assert fixed == "from jax import lax\n\ng = lax.dot_general(a, b, dims, lax.Precision.HIGHEST)\nh = lax.dot(a, b)\n"
    assert _fixed(source, "lax.dot(a, b)").endswith("h = lax.dot(a, b, precision=lax.Precision.HIGHEST)\n")
    # Nothing imported reaches jax.lax or jax.numpy: `import jax` is added.
    assert _fixed('"""Doc."""\nimport numpy as np\n\ng = a @ b\n', "a @ b") == (
        '"""Doc."""\nimport numpy as np\nimport jax\n\n'
        "g = jax.numpy.matmul(a, b, precision=jax.lax.Precision.HIGHEST)\n")


def test_a_product_that_is_not_one_is_not_pointed_at() -> None:
    index = SourceIndex("/p/m.py", "y = jnp.linalg.solve(a, b)\nz = a * b\n")
    assert product_at(index, Span(1, 4, 1, 26)) is None
    assert product_at(index, Span(2, 4, 2, 9)) is None


# --- the jaxpr and the dataflow (JAX, CPU) -------------------------------------------------------

def _products(fun, *shapes):
    import jax
    import jax.numpy as jnp

    from jaxlint.ir.build import build_program

    program = build_program(jax.make_jaxpr(fun)(*[jax.ShapeDtypeStruct(s, jnp.float32) for s in shapes]))
    return [op for op in program.walk() if op.primitive == "dot_general"]


def test_the_precision_in_the_jaxpr_honours_the_argument_the_block_and_the_flag() -> None:
    import jax
    import jax.numpy as jnp

    from jaxlint.rules.jx709_bf16_matmul_before_solve import _reduced_in_jaxpr

    def gram(x):
        return x.T @ x

    [default] = _products(gram, (8, 4))
    assert _reduced_in_jaxpr(default)
    [highest] = _products(lambda x: jnp.matmul(x.T, x, precision="highest"), (8, 4))
    [high] = _products(lambda x: jnp.matmul(x.T, x, precision="high"), (8, 4))
    assert not _reduced_in_jaxpr(highest) and not _reduced_in_jaxpr(high)
    with jax.default_matmul_precision("float32"):
        [blocked] = _products(gram, (8, 4))
    assert not _reduced_in_jaxpr(blocked)
    previous = jax.config.jax_default_matmul_precision
    jax.config.update("jax_default_matmul_precision", "float32")
    try:
        [flagged] = _products(lambda x: x.T @ x, (8, 4))
    finally:
        jax.config.update("jax_default_matmul_precision", previous)
    assert not _reduced_in_jaxpr(flagged)
    [bf16] = _products(lambda x: x.astype(jnp.bfloat16).T @ x.astype(jnp.bfloat16), (8, 4))
    assert not _reduced_in_jaxpr(bf16)


def test_the_values_reach_a_solve_through_loops_and_helpers_and_stop_at_activations_and_bf16() -> None:
    import jax
    import jax.numpy as jnp
    import jax.scipy.linalg as jsl
    from jax import lax

    from jaxlint.rules.jx709_bf16_matmul_before_solve import reaches_solve

    def solved(fun, *shapes):
        """What the function's first product (the user's; a solve's own follow) reaches."""
        return getattr(reaches_solve(_products(fun, *shapes)[0].outputs[0]), "primitive", None)

    assert solved(lambda x, y: jnp.linalg.solve(x.T @ x, y), (8, 4), (4,)) == "custom_linear_solve"
    assert solved(lambda x: jsl.cho_factor(x @ x.T + jnp.eye(8))[0], (8, 4)) == "cholesky"
    assert solved(lambda x: jnp.linalg.eigh(jax.jit(lambda a: a.T @ a)(x))[0], (8, 4)) == "eigh"
    assert solved(lambda x: jnp.linalg.pinv(lax.fori_loop(0, 3, lambda i, t: t + x.T @ x, jnp.zeros((4, 4)))),
                  (8, 4)) == "svd"
    assert solved(lambda x: jnp.linalg.lstsq(x.T @ x, x[0])[0], (8, 4)) == "svd"
    assert solved(lambda x: jnp.linalg.qr(x.T @ x)[0], (8, 4)) == "qr"
    assert solved(lambda x: jnp.linalg.det(x.T @ x), (8, 4)) == "lu"
    assert solved(lambda x: jnp.linalg.eigvals(x.T @ x), (8, 4)) == "eig"
    assert solved(lambda x, y: jsl.solve_triangular(x.T @ x, y), (8, 4), (4,)) == "triangular_solve"
    # Quiet paths: an activation, a cast to bfloat16, a loss.
    assert solved(lambda x: jnp.linalg.inv(jnp.tanh(x.T @ x)), (8, 4)) is None
    assert solved(lambda x: jnp.linalg.inv((x.T @ x).astype(jnp.bfloat16).astype(jnp.float32)), (8, 4)) is None
    assert solved(lambda x, w: jnp.tanh(x @ w).sum(), (8, 4), (4, 4)) is None


def test_on_the_cpu_nothing_is_compiled() -> None:
    import jax
    import jax.numpy as jnp

    from jaxlint.chips import CPU
    from jaxlint.ir import compile as compiled
    from jaxlint.ir import target_devices

    target_devices.use(CPU)
    closed = jax.make_jaxpr(lambda x: jnp.linalg.solve(x.T @ x, x[0]))(jax.ShapeDtypeStruct((8, 8), jnp.float32))
    spent = compiled.SPENT["seconds"]
    assert compiled.compiled_facts(closed, "precision") == []
    assert compiled.SPENT["seconds"] == spent


# --- jaxlint check (a subprocess; the TPU target needs libtpu) -------------------------------------

def _check(root: Path, *flags: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "jaxlint", "check", "--no-cache", "--jobs", "1", "--timeout", "300",
                           "--select", "JX709", "--output-format", "json", *flags, "."],
                          cwd=root, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("jx709")
    (root / "jaxlint.toml").write_text("")
    shutil.copy(DATA, root / DATA.name)
    return root


@pytest.fixture(scope="module")
def checked(project: Path) -> subprocess.CompletedProcess:
    return _check(project, "--target", "tpu-v5e")


@needs_libtpu
def test_the_findings_are_the_marked_lines(project: Path, checked: subprocess.CompletedProcess) -> None:
    assert checked.returncode == 1, checked.stdout + checked.stderr
    found = sorted((Path(f["filename"]).name, f["code"], f["location"]["row"]) for f in json.loads(checked.stdout))
    assert found == case_markers(project), checked.stdout
    assert "(16 targets traced" in checked.stderr, checked.stderr


@needs_libtpu
def test_the_message_says_what_the_tpu_does_where_the_product_goes_and_the_measured_error(
        project: Path, checked: subprocess.CompletedProcess) -> None:
    messages = {f["location"]["row"]: f for f in json.loads(checked.stdout)}
    lines = (project / DATA.name).read_text().splitlines()
    gram = next(n for n, line in enumerate(lines, 1) if "gram = x.T @ x" in line)
    finding = messages[gram]
    text = finding["message"]
    assert text.startswith("on TPU v5e a float32 product at default precision runs as one bfloat16 pass "
                           "(8 bits of mantissa), and this one reaches `jnp.linalg.solve` (a linear solve) "
                           f"at line {gram + 2}"), text
    assert "55% off at default precision and 0.053% off at HIGHEST" in text
    assert "1.4e-3 against 5.1e-5" in text
    assert text.endswith(" Compiled for TPU v5e."), text
    assert finding["fix"]["applicability"] == "unsafe"
    ridge = next(n for n, line in enumerate(lines, 1) if "kernel = jnp.dot" in line)
    assert "reaches `jsl.cho_factor` (a Cholesky factorization)" in messages[ridge]["message"]


def test_the_cpu_target_is_quiet(project: Path) -> None:
    run = _check(project)
    assert run.returncode == 0, run.stdout + run.stderr
    assert json.loads(run.stdout) == []
    assert "(16 targets traced" in run.stderr, run.stderr


@needs_libtpu
def test_the_precision_flag_set_by_the_module_is_honoured(tmp_path: Path) -> None:
    (tmp_path / "jaxlint.toml").write_text("")
    source = DATA.read_text().split("# Near misses.")[0]
    flagged = source.replace("from jax import lax\n",
                             'from jax import lax\n\njax.config.update("jax_default_matmul_precision", "float32")\n')
    (tmp_path / "flagged.py").write_text(flagged.replace("  # expect: JX709", ""))
    run = _check(tmp_path, "--target", "tpu-v5e")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "(8 targets traced" in run.stderr, run.stderr


def _block(section: str) -> str:
    text = PAGE.read_text(encoding="utf-8").split(f"## {section}\n", 1)[1]
    return text.split("```python\n", 1)[1].split("```\n", 1)[0]


@needs_libtpu
def test_the_unsafe_fix_turns_the_pages_example_into_use_instead(tmp_path: Path) -> None:
    """Verified as every fix (traced again, the finding gone, the values compared on the CPU)."""
    from jaxlint.jaxapi import version

    if version.JAX_VERSION < (0, 5):
        pytest.skip("JAX 0.4.35's HLO metadata gives lines without columns: the matrix-vector product on the "
                    "Example's line is confirmed with the Gram matrix and fixed too")
    (tmp_path / "jaxlint.toml").write_text("")
    (tmp_path / "fit.py").write_text(_block("Example"))
    run = _check(tmp_path, "--target", "tpu-v5e", "--fix", "--unsafe-fixes")
    assert run.returncode == 0, run.stdout + run.stderr
    assert (tmp_path / "fit.py").read_text() == _block("Use instead")
