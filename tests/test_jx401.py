"""JX401 prng-key-reuse on real jaxprs, end to end, compared with JAX's own key-reuse checker.

The same functions are checked twice: with legacy ``jax.random.PRNGKey`` uint32 keys and with
typed ``jax.random.key`` keys (one module each, one check call, in the test process:
helpers.check_in_process). The functions are JX401's case (tests/rules/JX401.py: its legacy-key
module, whose marked lines test_rule_cases.py checks): a function with a line marked
``# expect: JX401`` reuses a key there; the others are near misses that must stay quiet. The harm is shown by running the functions
in the test process: a reused key gives identical "random" arrays.
"""
from __future__ import annotations

import importlib.util
import inspect
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from helpers import by_target, case_source, check_in_process, checked_case

from jaxlint.config.selection import select_rules
from jaxlint.engine.results import CheckResult
from jaxlint.jaxapi import version
from jaxlint.model import Finding

FUNCTIONS = case_source("JX401").read_text(encoding="utf-8")  # with a legacy key
KEYS = {"legacy": "jax.random.PRNGKey(0)", "typed": "jax.random.key(0)"}
MARKER = "  # expect: JX401"
NEEDS_FRESH_TRACEBACKS = pytest.mark.skipif(
    version.JAX_VERSION < (0, 7, 0),
    reason="before JAX 0.7 a repeated draw's frames may be stale: the function is named")
NEW_JAX_MARKER = "  # expect(jax>=0.7): JX401"  # a place only JAX 0.7's tracebacks give (tests/rules/README.md)
LINES = FUNCTIONS.splitlines()


def module_text(kind: str) -> str:
    # KEY is defined after the functions, so both modules keep the same line numbers.
    return FUNCTIONS.replace(f"\nKEY = {KEYS['legacy']}\n", f"\nKEY = {KEYS[kind]}\n", 1)


@pytest.fixture(scope="module")
def modules(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("jx401")
    paths = {}
    for kind in KEYS:
        paths[kind] = folder / f"jx401_{kind}.py"
        paths[kind].write_text(module_text(kind), encoding="utf-8")
    return paths


@pytest.fixture(scope="module")
def found(modules: dict[str, Path]) -> dict[str, dict[str, Finding]]:
    """The findings by key kind: the legacy module's are the case's run (test_rule_cases.py)."""
    typed: CheckResult = check_in_process([str(modules["typed"])], select_rules(["JX401"], None))
    traced = [t.target for fa in typed.files if fa.result for t in fa.result.traced]
    # With inference on (the default) plain JAX functions are targets too: noise, a helper the
    # module calls at import, is traced with that call's arguments.
    assert typed.skipped == [] and sorted(traced) == sorted([*target_names(), "noise"])
    return {"legacy": by_target(checked_case("JX401")[1].findings, "JX401"),
            "typed": by_target(typed.findings)}


@pytest.fixture(scope="module")
def loaded(modules: dict[str, Path]) -> dict[str, ModuleType]:
    """The case modules imported in the test process, to run them and JAX's checker."""
    out = {}
    for kind, path in modules.items():
        spec = importlib.util.spec_from_file_location(f"jx401_cases_{kind}", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        out[kind] = module
    return out


def target_names() -> list[str]:
    """The case's jitted functions, in order: the triggers (a line marked ``# expect: JX401``) and
    the near misses."""
    return [LINES[i + 1].split()[1].split("(")[0] for i, line in enumerate(LINES) if line == "@jax.jit"]


def triggers() -> list[str]:
    """The functions with a marked line: the second consumer of a key."""
    names, current = [], None
    for line in LINES:
        if line.startswith("def "):
            current = line.split()[1].split("(")[0]
        if _marked(line) and current not in names:
            names.append(current)
    return names


def call(module: ModuleType, name: str) -> Any:
    f = getattr(module, name)
    params = list(inspect.signature(f).parameters)
    return f(*module.arguments(name, params))


def jax_checker_flags(module: ModuleType, name: str) -> bool:
    import jax
    from jax.errors import KeyReuseError
    from jax.experimental.key_reuse._core import check_key_reuse_jaxpr

    f = getattr(module, name)
    params = list(inspect.signature(f).parameters)
    try:
        check_key_reuse_jaxpr(jax.make_jaxpr(f)(*module.arguments(name, params)).jaxpr)
    except KeyReuseError:
        return True
    return False


def test_typed_keys_give_the_same_findings(found: dict[str, dict[str, Finding]]) -> None:
    # The legacy module is the case (test_rule_cases.py checks its lines); the typed one differs in
    # line on JAX before 0.7 (below), not in function.
    assert sorted(found["legacy"]) == sorted(triggers()) and len(triggers()) == 11
    assert sorted(found["typed"]) == sorted(triggers())


def second_call_span(name: str) -> tuple[int, int, int]:
    """(line, start column, end column) of the second consumer: the jax.random call on the
    line marked ``# second`` inside ``name``, the last one on that line."""
    start = next(i for i, line in enumerate(LINES) if line.startswith(f"def {name}("))
    index = next(i for i in range(start, len(LINES)) if _marked(LINES[i]))
    line = LINES[index].removesuffix(MARKER).removesuffix(NEW_JAX_MARKER)
    col = line.rindex("jax.random.")
    depth, end = 0, line.index("(", col)
    for end in range(end, len(line)):
        depth += {"(": 1, ")": -1}.get(line[end], 0)
        if depth == 0:
            break
    return index + 1, col, end + 1


def draws_twice() -> list[str]:
    """The triggers whose marked line is the second draw (not a call of a helper that draws)."""
    start = {name: next(i for i, line in enumerate(LINES) if line.startswith(f"def {name}(")) for name in triggers()}
    return [name for name in triggers()
            if "jax.random." in next(line for line in LINES[start[name]:] if _marked(line))]


def _marked(line: str) -> bool:
    return line.endswith(MARKER) or line.endswith(NEW_JAX_MARKER)


@pytest.mark.parametrize("name", draws_twice())
def test_points_at_the_second_consumer(found: dict[str, dict[str, Finding]], name: str) -> None:
    line, col, end = second_call_span(name)
    legacy = found["legacy"][name]
    if LINES[line - 1].endswith(NEW_JAX_MARKER) and version.JAX_VERSION < (0, 7, 0):
        pytest.skip("before JAX 0.7 a loop's repeated draw has stale frames: the function is named instead")
    assert (legacy.span.start_line, legacy.span.start_col, legacy.span.end_col) == (line, col, end)
    typed = found["typed"][name]
    if version.JAX_VERSION >= (0, 7, 0):
        assert (typed.span.start_line, typed.span.start_col, typed.span.end_col) == (line, col, end)
    else:
        # Before JAX 0.7 a cached library jaxpr keeps its first caller's traceback; with a typed
        # key there is no random_wrap at the user's call to locate it: the function is named.
        def_line = next(i for i, s in enumerate(LINES, 1) if s.startswith(f"def {name}("))
        assert typed.span.start_line in (line, def_line)
    assert legacy.fix is None and legacy.severity == "error"


def test_messages(found: dict[str, dict[str, Finding]]) -> None:
    twice = found["legacy"]["twice"].message
    first_line = next(i for i, s in enumerate(LINES, 1) if "a = jax.random.normal(key, (3,))" in s)
    assert twice.startswith("PRNG key reused: this draw (random_bits)")
    assert f"at line {first_line} already consumed" in twice
    assert "split" in found["legacy"]["split_after_draw"].message
    scan = found["legacy"]["scan_const"].message
    assert "loop-invariant in this scan body" in scan and "each of its 5 iterations" in scan
    assert "every iteration" in found["typed"]["while_const"].message
    assert "while_loop" in found["typed"]["while_const"].message
    assert "If the same bits are meant, draw from jax.random.clone(key)" in twice


@NEEDS_FRESH_TRACEBACKS
def test_a_loop_passing_one_key_to_a_helper_is_reported_at_its_call(found: dict[str, dict[str, Finding]]) -> None:
    """The helper draws once per call; the loop around the call repeats it with the same key: the
    place to change is the call in the loop, and the message names the helper's draw."""
    call_line = next(i for i, s in enumerate(LINES, 1) if s.endswith("x = noise(key, x)" + NEW_JAX_MARKER))
    draw_line = next(i for i, s in enumerate(LINES, 1) if "return x + jax.random.normal(key, x.shape)" in s)
    for kind in KEYS:
        finding = found[kind]["helper_in_loop"]
        column = LINES[call_line - 1].index("noise(")
        assert (finding.span.start_line, finding.span.start_col) == (call_line, column), kind
        assert (f"this call passes the same key to noise() on every iteration of the loop; noise draws from it "
                f"(random_bits) at {Path(finding.path).name}:{draw_line}, so every iteration draws the same") \
            in finding.message, finding.message
    for kind in KEYS:
        own = found[kind]["draw_in_loop"].message
        assert "consumes the same key on every iteration of the loop around it" in own, own
        assert "already consumed" not in own  # not "a draw at line N" about its own line


@pytest.mark.slow
def test_reused_keys_give_identical_random_arrays(loaded: dict[str, ModuleType]) -> None:
    import jax

    for module in loaded.values():
        for name in ("twice", "subkey_twice", "row_twice", "cloned"):
            a, b = call(module, name)
            assert np.array_equal(a, b) and np.unique(np.asarray(a)).size == 3
        for name in ("helper_in_loop", "draw_in_loop"):
            draws = np.asarray(call(module, name))
            assert np.allclose(draws, 3 * jax.random.normal(module.KEY, (3,))), name  # three equal draws
        for name in ("scan_const", "fori_const", "while_const", "carry_unchanged"):
            draws = np.asarray(call(module, name))
            assert np.unique(draws).size == 1, (name, draws)  # every iteration, the same number
        # The near misses' draws differ.
        for name in ("split_first", "fold_in"):
            a, b = call(module, name)
            assert not np.array_equal(a, b)
        for name in ("scan_xs", "scan_carry_split", "fori_fold_in", "keys_indexed", "vmapped"):
            draws = np.asarray(call(module, name))
            assert np.unique(draws).size == draws.size, (name, draws)


def test_compared_with_jax_key_reuse_checker(found: dict[str, dict[str, Finding]],
                                             loaded: dict[str, ModuleType]) -> None:
    names = target_names()
    jax_typed = {n for n in names if jax_checker_flags(loaded["typed"], n)}
    jax_legacy = {n for n in names if jax_checker_flags(loaded["legacy"], n)}
    # Everything JAX's checker finds on typed keys, jaxlint finds...
    assert set(triggers()) <= jax_typed
    # ...except two false alarms of JAX's: per-iteration keys indexed by the loop counter (the
    # draws differ, see the test above) and a scan of length one (a single draw).
    assert jax_typed - set(found["typed"]) == {"keys_indexed", "scan_length_one"}
    # JAX's checker misses every legacy-key reuse: each call re-wraps the raw uint32 bits.
    assert jax_legacy == set()
    assert set(found["legacy"]) == set(triggers())


NOISE = """\
import jax


def jitter(key, x):
    return x + jax.random.normal(key, x.shape)
"""

TRAIN = """\
import jax
import jax.numpy as jnp

from noise import jitter


@jax.jit
def run(key, x):
    for _ in range(3):
        x = jitter(key, x)
    return x


run.lower(jax.random.PRNGKey(0), jnp.ones(3))
"""


@NEEDS_FRESH_TRACEBACKS
def test_a_helper_in_another_file_is_reported_at_the_callers_loop(tmp_path: Path) -> None:
    """The user changes the loop in train.py, not the helper in noise.py: one finding, there."""
    (tmp_path / "pyproject.toml").write_text("[tool.jaxlint]\n", encoding="utf-8")
    (tmp_path / "noise.py").write_text(NOISE, encoding="utf-8")
    (tmp_path / "train.py").write_text(TRAIN, encoding="utf-8")
    result = check_in_process([str(tmp_path)], select_rules(["JX401"], None))
    [finding] = result.findings
    assert (Path(finding.path).name, finding.span.start_line, finding.span.start_col) == ("train.py", 10, 12)
    assert finding.message.startswith("PRNG key reused: this call passes the same key to jitter() on every "
                                      "iteration of the loop; jitter draws from it (random_bits) at noise.py:5,")


SPLIT_THEN_TWO_DRAWS = """\
import jax


@jax.jit
def init(key):
    k_centers, key = jax.random.split(key)
    centers = jax.random.normal(k_centers, (4, 2))
    a = jax.random.normal(key, (4,))
    b = jax.random.uniform(key, (4,))
    return centers, a + b


init({key})
"""


@pytest.mark.parametrize("kind", sorted(KEYS))
def test_names_the_draw_from_the_same_half_of_a_split(tmp_path: Path, kind: str) -> None:
    """Both halves of a split are one root here: the earlier draw named is the one from ``key``
    (line 8), not the first draw from any half (``k_centers``, line 7)."""
    (tmp_path / "pyproject.toml").write_text("[tool.jaxlint]\n", encoding="utf-8")
    (tmp_path / "init.py").write_text(SPLIT_THEN_TWO_DRAWS.format(key=KEYS[kind]), encoding="utf-8")
    result = check_in_process([str(tmp_path)], select_rules(["JX401"], None))
    [finding] = result.findings
    assert finding.span.start_line == 9
    assert "a draw (random_bits) at line 8 already consumed" in finding.message, finding.message
