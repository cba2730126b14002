"""JX301 large-closure-constant and JX302 missing-donation, end to end on real jaxprs.

The modules are analyzed in the test process (helpers.check_in_process); neither rule has a fix
--fix would apply (JX302's is display-only), so no test here needs the worker.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from helpers import check_in_process, write

from jaxlint.config.selection import select_rules
from jaxlint.engine.results import CheckResult
from jaxlint.model import Finding

TRIGGERS = '''\
import functools

import jax
import jax.numpy as jnp
import numpy as np

TABLE = np.ones((512, 1024), np.float32)  # 2 MiB
JTABLE = jnp.ones((1024, 512), jnp.float32)


@jax.jit
def numpy_constant(x):
    y = x * 2.0
    return y @ TABLE


@jax.jit
def jnp_constant(x):
    return JTABLE @ x


def project(x):
    return x @ TABLE


@jax.jit
def through_inner_jit(x):
    return jax.jit(project)(x) + 1.0


def in_scan_body(x):
    def body(carry, _):
        carry = jnp.tanh(carry @ TABLE[:, :512])
        return carry, None
    return jax.lax.scan(body, x, None, length=3)[0]


@jax.jit
def step(state, batch):
    return state * 0.9 + batch.sum(), batch.sum()


@functools.partial(jax.jit, static_argnums=(2,))
def update(params, opt, n):
    return {k: v - 1.0 for k, v in params.items()}, opt + n


@functools.partial(jax.jit, donate_argnums=(1,))
def half_donated(a, b):
    return a + 1.0, b + 1.0


def _advance(pos, dt):
    return pos + dt


advance = jax.jit(_advance)


@jax.jit
def kw_step(state, batch):
    return state + batch.mean()


x = jnp.ones((4, 512), jnp.float32)
numpy_constant(x)
jnp_constant(jnp.ones((512, 4), jnp.float32))
through_inner_jit(x)
in_scan_body(x)

state = jnp.zeros((1024, 512), jnp.float32)  # 2 MiB
for batch in (jnp.ones((3,)), jnp.ones((3,))):
    state, loss = step(state, batch)

params = {"w": jnp.zeros((512, 512)), "v": jnp.zeros((512, 512))}  # 1 MiB each
opt = jnp.zeros((1024, 512))
params, opt = update(params, opt, 2)

a, b = jnp.zeros((1024, 512)), jnp.zeros((1024, 512))
a, b = half_donated(a, b)

pos = jnp.zeros((1024, 512))
pos = advance(pos, 0.1)

big_batch = jnp.ones((512, 1024))
state = kw_step(state=state, batch=big_batch)
'''

# The bare decorator in a module that does not import functools: the display-only edit adds it.
NO_FUNCTOOLS = '''\
import jax
import jax.numpy as jnp


@jax.jit
def step(state):
    return state * 0.5


state = jnp.ones((1024, 512), jnp.float32)
state = step(state)
'''

QUIET = '''\
import functools

import jax
import jax.numpy as jnp
import numpy as np

SMALL = np.ones((64, 64), np.float32)  # 16 KiB
LARGE = np.ones((512, 1024), np.float32)  # 2 MiB, but passed as an argument


@jax.jit
def small_constant(x):
    return x @ SMALL


@jax.jit
def large_argument(x, table):
    return x @ table


@jax.jit
def created_inside(x):
    return x @ jnp.ones((512, 1024), jnp.float32)  # a broadcast, not a constant


@functools.partial(jax.jit, donate_argnums=0)
def donated(state):
    return state + 1.0


@functools.partial(jax.jit, donate_argnames=("state",))
def donated_by_name(state):
    return state + 1.0


@jax.jit
def reduced(state):
    return state.sum(axis=0)  # the output does not repeat the input


@jax.jit
def small_state(state):
    return state + 1.0


@jax.jit
def not_rebound(state):
    return state + 1.0


@jax.jit
def passed_through(state, x):
    return state, x + 1.0  # jit forwards an unchanged input: no second buffer


def not_jitted(state):
    return jax.lax.fori_loop(0, 2, lambda i, s: s + 1.0, state)


@jax.jit
def inner(state):
    return state + 1.0


@jax.jit
def outer(state):
    for _ in range(2):
        state = inner(state)  # inlined into outer: donating inner's argument does nothing
    return state.sum()


x = jnp.ones((4, 512), jnp.float32)
small_constant(jnp.ones((4, 64)))
large_argument(x, LARGE)
created_inside(x)
state = jnp.zeros((1024, 512), jnp.float32)
state = donated(state)
state = donated_by_name(state)
total = reduced(state)
tiny = jnp.zeros((8, 8))
tiny = small_state(tiny)
new_state = not_rebound(state)
state, y = passed_through(state, jnp.ones((3,)))
state = not_jitted(state)
total = outer(state)
'''


def run(path: Path, fix: bool = False) -> CheckResult:
    return check_in_process([str(path)], select_rules(["JX301", "JX302"], None), fix=fix)


def position(text: str, snippet: str) -> tuple[int, int]:
    """(1-based line, 0-based column) of the first ``snippet`` in ``text``."""
    index = text.index(snippet)
    return text.count("\n", 0, index) + 1, index - (text.rfind("\n", 0, index) + 1)


def by_target(findings: list[Finding], code: str) -> dict[str, list[Finding]]:
    found: dict[str, list[Finding]] = {}
    for finding in findings:
        if finding.code == code:
            found.setdefault(finding.target, []).append(finding)
    return found


@pytest.fixture(scope="module")
def triggers(tmp_path_factory: pytest.TempPathFactory) -> CheckResult:
    result = run(write(tmp_path_factory.mktemp("triggers"), "jx30x_triggers", TRIGGERS))
    assert result.skipped == [] and result.traced == 9
    assert not [f for f in result.findings if f.code.startswith("JX9")]
    return result


# ---------------------------------------------------------------------------------------------
# JX301


def test_closure_constants_point_at_their_first_use(triggers: CheckResult) -> None:
    found = by_target(triggers.findings, "JX301")
    assert set(found) == {"numpy_constant", "jnp_constant", "through_inner_jit", "in_scan_body"}
    # A constant of a nested jit points into the helper; one in a scan body at the body's use.
    expected = {"numpy_constant": "y @ TABLE", "jnp_constant": "JTABLE @ x", "through_inner_jit": "x @ TABLE",
                "in_scan_body": "carry @ TABLE"}
    for target, snippet in expected.items():
        [finding] = found[target]
        line, col = position(TRIGGERS, snippet)
        assert (finding.span.start_line, finding.span.start_col) == (line, col), target
        assert finding.fix is None


def test_closure_constant_message_and_cost(triggers: CheckResult) -> None:
    [finding] = by_target(triggers.findings, "JX301")["numpy_constant"]
    assert finding.message.startswith("float32[512,1024] (2.0 MiB) is captured by the traced function "
                                      "as a constant instead of being passed as an argument")
    assert "2097152 bytes are embedded in the compiled program" in finding.message
    assert finding.cost.basis == "shapes" and finding.cost.bytes == 2097152 and finding.cost.flops == 0


# ---------------------------------------------------------------------------------------------
# JX302


def test_missing_donation_findings(triggers: CheckResult) -> None:
    found = by_target(triggers.findings, "JX302")
    assert {t: len(f) for t, f in found.items()} == {"step": 1, "update": 1, "half_donated": 1, "advance": 1,
                                                       "kw_step": 1}
    [step] = found["step"]
    assert (step.span.start_line, step.span.start_col) == position(TRIGGERS, "step(state, batch):\n")
    line = position(TRIGGERS, "state, loss = step(state, batch)")[0]
    assert step.message.startswith(f"argument 'state' (float32[1024,512], 2.0 MiB, rebound by the call on line "
                                   f"{line}) is replaced by an output of the same shape and dtype, but not "
                                   "donated; add donate_argnums=(0,)")
    assert "add donate_argnums=(0,)" in step.message and "2097152 bytes of extra device memory" in step.message
    assert step.cost.bytes == 2097152 and step.cost.basis == "shapes"
    assert step.fix.applicability == "display-only"
    [edit] = step.fix.edits
    assert edit.content == "functools.partial(jax.jit, donate_argnums=(0,))"
    assert (edit.span.start_line, edit.span.start_col) == position(TRIGGERS, "jax.jit\ndef step")


def test_pytree_parameter_totals_its_leaves(triggers: CheckResult) -> None:
    [update] = by_target(triggers.findings, "JX302")["update"]
    assert update.message.startswith("arguments 'params' (2 of its 2 arrays, 2.0 MiB, rebound by the call on "
                                     "line 77) and 'opt' (float32[1024,512], 2.0 MiB, rebound by the call on "
                                     "line 77) are replaced")
    assert "add donate_argnums=(0, 1) " in update.message and "4194304 bytes of extra" in update.message
    assert update.cost.bytes == 4194304
    [edit] = update.fix.edits
    assert edit.content == ", donate_argnums=(0, 1)"
    line, col = position(TRIGGERS, "static_argnums=(2,))")
    assert (edit.span.start_line, edit.span.start_col) == (line, col + len("static_argnums=(2,)"))


def test_partly_donated_jit_bound_and_keywords(triggers: CheckResult) -> None:
    found = by_target(triggers.findings, "JX302")
    [half] = found["half_donated"]
    assert half.message.startswith("argument 'a' ")
    assert [e.content for e in half.fix.edits] == ["(0, 1)"]
    [bound] = found["advance"]
    line, col = position(TRIGGERS, "jax.jit(_advance)")
    assert (bound.span.start_line, bound.span.start_col, bound.span.end_col) == (line, col, col + 17)
    assert [e.content for e in bound.fix.edits] == [", donate_argnums=(0,)"]
    [keyword] = found["kw_step"]  # keyword arguments flatten sorted by name: batch, then state
    assert keyword.message.startswith("argument 'state' (float32[1024,512], 2.0 MiB, rebound")


def test_display_only_fix_adds_the_import_and_is_never_applied(tmp_path: Path) -> None:
    path = write(tmp_path, "jx302_no_functools", NO_FUNCTOOLS)
    result = run(path, fix=True)
    assert path.read_text(encoding="utf-8") == NO_FUNCTOOLS
    assert result.fixed == [] and result.fix_rejected == []
    [finding] = result.findings
    assert finding.code == "JX302"
    assert [(e.span.start_line, e.span.start_col, e.content) for e in finding.fix.edits] == [
        (1, 0, "import functools\n"), (5, 1, "functools.partial(jax.jit, donate_argnums=(0,))")]


def test_near_misses_are_quiet(tmp_path: Path) -> None:
    result = run(write(tmp_path, "jx30x_quiet", QUIET))
    assert result.skipped == [] and result.traced == 12
    assert result.findings == [], [f.message for f in result.findings]
