"""JX401 prng-key-reuse on real jaxprs, end to end, compared with JAX's own key-reuse checker.

The same functions are checked twice: with legacy ``jax.random.PRNGKey`` uint32 keys and with
typed ``jax.random.key`` keys (one module each, one check call, in the test process:
helpers.check_in_process). Functions named ``t_*`` reuse a
key; ``q_*`` are near misses that must stay quiet. The harm is shown by running the functions
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
from helpers import check_in_process

from jaxlint.config.selection import select_rules
from jaxlint.engine.results import CheckResult
from jaxlint.model import Finding

FUNCTIONS = '''\
import jax
import jax.numpy as jnp
from jax import lax


@jax.jit
def t_twice(key):
    a = jax.random.normal(key, (3,))
    b = jax.random.normal(key, (3,))  # second
    return a, b


@jax.jit
def t_mixed(key):
    a = jax.random.normal(key, (3,))
    return a, jax.random.uniform(key, (3,))  # second


@jax.jit
def t_split_after_draw(key):
    x = jax.random.normal(key, (3,))
    k1, k2 = jax.random.split(key)  # second
    return x, jax.random.key_data(k1)


@jax.jit
def t_subkey_twice(key):
    k1, k2 = jax.random.split(key)
    return jax.random.normal(k1, (3,)), jax.random.normal(k1, (3,))  # second


@jax.jit
def t_row_twice(key):
    keys = jax.random.split(key, 3)
    a = jax.random.normal(keys[1], (3,))
    return a, jax.random.normal(keys[1], (3,))  # second


@jax.jit
def t_scan_const(key, xs):
    def body(c, x):
        return c, x * jax.random.normal(key, ())  # second
    return lax.scan(body, 0.0, xs)[1]


@jax.jit
def t_fori_const(key):
    return lax.fori_loop(0, 4, lambda i, c: c.at[i].set(jax.random.uniform(key, ())), jnp.zeros(4))  # second


@jax.jit
def t_while_const(key, n):
    return lax.fori_loop(0, n, lambda i, c: c.at[i].set(jax.random.uniform(key, ())), jnp.zeros(4))  # second


@jax.jit
def t_carry_unchanged(key, xs):
    def body(k, x):
        return k, x * jax.random.normal(k, ())  # second
    return lax.scan(body, key, xs)[1]


@jax.jit
def q_split(key):
    k1, k2 = jax.random.split(key)
    return jax.random.normal(k1, (3,)), jax.random.normal(k2, (3,))


@jax.jit
def q_fold_in(key):
    return jax.random.normal(jax.random.fold_in(key, 0), (3,)), jax.random.normal(jax.random.fold_in(key, 1), (3,))


@jax.jit
def q_once(key):
    return jax.random.normal(key, (3,))


@jax.jit
def q_rows(key):
    keys = jax.random.split(key, 3)
    return jax.random.normal(keys[0], (3,)), jax.random.normal(keys[1], (3,)), jax.random.normal(keys[2], (3,))


@jax.jit
def q_vmap(key):
    return jax.vmap(lambda k: jax.random.normal(k, ()))(jax.random.split(key, 4))


@jax.jit
def q_cond_branches(key, p):
    return lax.cond(p, lambda k: jax.random.normal(k, ()), lambda k: jax.random.uniform(k, ()), key)


@jax.jit
def q_remat_grad(key, w):
    def f(w):
        return jnp.sin(w * jax.random.normal(key, (3,))).sum()
    return jax.grad(jax.checkpoint(f))(w)


@jax.jit
def q_scan_xs(key, xs):
    def body(c, kx):
        k, x = kx
        return c, x * jax.random.normal(k, ())
    return lax.scan(body, 0.0, (jax.random.split(key, xs.shape[0]), xs))[1]


@jax.jit
def q_scan_carry_split(key, xs):
    def body(k, x):
        k, sub = jax.random.split(k)
        return k, x * jax.random.normal(sub, ())
    return lax.scan(body, key, xs)[1]


@jax.jit
def q_fori_fold_in(key):
    return lax.fori_loop(0, 4, lambda i, c: c.at[i].set(jax.random.uniform(jax.random.fold_in(key, i), ())), jnp.zeros(4))


@jax.jit
def q_keys_indexed(key):
    keys = jax.random.split(key, 4)
    return lax.fori_loop(0, 4, lambda i, c: c.at[i].set(jax.random.uniform(keys[i], ())), jnp.zeros(4))


@jax.jit
def q_scan_length_one(key, xs):
    return lax.scan(lambda c, x: (c, x * jax.random.normal(key, ())), 0.0, xs)[1]


@jax.jit
def q_cloned(key):
    # The same bits again, on purpose (a key that fixes a random path evaluated twice), said with
    # clone: JAX's checker accepts it too.
    return jax.random.normal(key, (3,)), jax.random.normal(jax.random.clone(key), (3,))


ARGS = {"xs": jnp.ones(5), "n": 4, "p": True, "w": jnp.ones(3)}
ONE = {"xs": jnp.ones(1)}


def arguments(name, params):
    given = ONE if name == "q_scan_length_one" else {}
    return [KEY] + [given.get(p, ARGS[p]) for p in params[1:]]


for _name, _f in list(globals().items()):
    if _name[:2] in ("t_", "q_"):
        _f.lower(*arguments(_name, list(_f.__wrapped__.__code__.co_varnames[:_f.__wrapped__.__code__.co_argcount])))
'''
KEYS = {"legacy": "jax.random.PRNGKey(0)", "typed": "jax.random.key(0)"}
LINES = FUNCTIONS.splitlines()


def module_text(kind: str) -> str:
    # KEY is defined after the functions, so both modules keep the same line numbers.
    return FUNCTIONS.replace("\n\nARGS = ", f"\n\nKEY = {KEYS[kind]}\nARGS = ", 1)


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
    result: CheckResult = check_in_process([str(p) for p in modules.values()],
                                           select_rules(["JX401"], None))
    assert result.skipped == [] and result.traced == 2 * len(target_names())
    by_kind: dict[str, dict[str, Finding]] = {kind: {} for kind in KEYS}
    for finding in result.findings:
        kind = "legacy" if finding.path.endswith("jx401_legacy.py") else "typed"
        assert finding.target not in by_kind[kind], f"two findings for {finding.target}"
        by_kind[kind][finding.target] = finding
    return by_kind


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
    return [line.split()[1].split("(")[0] for line in LINES if line.startswith("def t_") or
            line.startswith("def q_")]


def triggers() -> list[str]:
    return [n for n in target_names() if n.startswith("t_")]


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


def test_only_the_triggers_are_reported(found: dict[str, dict[str, Finding]]) -> None:
    assert sorted(found["legacy"]) == sorted(triggers())
    assert sorted(found["typed"]) == sorted(triggers())


def second_call_span(name: str) -> tuple[int, int, int]:
    """(line, start column, end column) of the second consumer: the jax.random call on the
    line marked ``# second`` inside ``name``, the last one on that line."""
    start = next(i for i, line in enumerate(LINES) if line.startswith(f"def {name}("))
    index = next(i for i in range(start, len(LINES)) if LINES[i].endswith("# second"))
    line = LINES[index]
    col = line.rindex("jax.random.")
    depth, end = 0, line.index("(", col)
    for end in range(end, len(line)):
        depth += {"(": 1, ")": -1}.get(line[end], 0)
        if depth == 0:
            break
    return index + 1, col, end + 1


@pytest.mark.parametrize("name", triggers())
def test_points_at_the_second_consumer(found: dict[str, dict[str, Finding]], name: str) -> None:
    from jaxlint.ir import compat

    line, col, end = second_call_span(name)
    legacy = found["legacy"][name]
    assert (legacy.span.start_line, legacy.span.start_col, legacy.span.end_col) == (line, col, end)
    typed = found["typed"][name]
    if compat.JAX_VERSION >= (0, 7, 0):
        assert (typed.span.start_line, typed.span.start_col, typed.span.end_col) == (line, col, end)
    else:
        # Before JAX 0.7 a cached library jaxpr keeps its first caller's traceback; with a typed
        # key there is no random_wrap at the user's call to locate it: the function is named.
        def_line = next(i for i, s in enumerate(LINES, 1) if s.startswith(f"def {name}("))
        assert typed.span.start_line in (line, def_line)
    assert legacy.fix is None and legacy.severity == "error"


def test_messages(found: dict[str, dict[str, Finding]]) -> None:
    twice = found["legacy"]["t_twice"].message
    first_line = next(i for i, s in enumerate(LINES, 1) if "a = jax.random.normal(key, (3,))" in s)
    assert twice.startswith("PRNG key reused: this draw (random_bits)")
    assert f"at line {first_line} already consumed" in twice
    assert "split" in found["legacy"]["t_split_after_draw"].message
    scan = found["legacy"]["t_scan_const"].message
    assert "loop-invariant in this scan body" in scan and "each of its 5 iterations" in scan
    assert "every iteration" in found["typed"]["t_while_const"].message
    assert "while_loop" in found["typed"]["t_while_const"].message
    assert "If the same bits are meant, draw from jax.random.clone(key)" in twice


def test_reused_keys_give_identical_random_arrays(loaded: dict[str, ModuleType]) -> None:
    for module in loaded.values():
        for name in ("t_twice", "t_subkey_twice", "t_row_twice", "q_cloned"):
            a, b = call(module, name)
            assert np.array_equal(a, b) and np.unique(np.asarray(a)).size == 3
        for name in ("t_scan_const", "t_fori_const", "t_while_const", "t_carry_unchanged"):
            draws = np.asarray(call(module, name))
            assert np.unique(draws).size == 1, (name, draws)  # every iteration, the same number
        # The near misses' draws differ.
        for name in ("q_split", "q_fold_in"):
            a, b = call(module, name)
            assert not np.array_equal(a, b)
        for name in ("q_scan_xs", "q_scan_carry_split", "q_fori_fold_in", "q_keys_indexed", "q_vmap"):
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
    assert jax_typed - set(found["typed"]) == {"q_keys_indexed", "q_scan_length_one"}
    # JAX's checker misses every legacy-key reuse: each call re-wraps the raw uint32 bits.
    assert jax_legacy == set()
    assert set(found["legacy"]) == set(triggers())
