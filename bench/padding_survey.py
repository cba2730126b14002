"""What JX312 and JX709 looked at in real code, beyond their findings (run by hand).

    python bench/padding_survey.py FLOOR_MIB REPORT.json -- PYTEST_ARGS...

Runs pytest in this process with ``--jaxlint --jaxlint-target tpu-v5e`` (the plugin traces and
compiles the programs the tests called in this process), JX312's floor of 64 MiB lowered to
FLOOR_MIB (its 8x ratio kept), writes the findings' report, and prints what the two rules saw:
the programs compiled for the TPU, the buffers read and how many were padded 8x or more (at any
size), the programs holding a solve or a factorization, the float32 products at default precision
followed from there and the solves they reached. On the six libraries' test slices, whose arrays
are small, neither rule reports at its real settings; this says whether that is for lack of
anything to report or for lack of looking.

Run it in a library's folder, as bench/six_libraries.py runs its slice (PYTHONPATH=the worktree,
JAX_PLATFORMS=cpu, ``-p jaxlint.pytest_plugin.hooks`` when jaxlint is not installed).
"""
from __future__ import annotations

import json
import sys
from collections import Counter
from typing import Any

import pytest

from jaxlint.ir import padding
from jaxlint.rules import jx709_bf16_matmul_before_solve as jx709

SEEN: Counter[str] = Counter()
PROGRAMS: set[int] = set()


def _count_buffers() -> None:
    read = padding.buffers

    def counted(module: Any, skip: str = "") -> list[padding.Padded]:
        found = read(module, skip)
        SEEN["programs compiled for the TPU (JX312)"] += 1
        SEEN["buffers read"] += len(found)
        padded = [b for b in found if b.ratio >= padding.RATIO]
        SEEN["buffers padded 8x or more, any size"] += len(padded)
        SEEN["bytes the largest of them adds"] = max([SEEN["bytes the largest of them adds"],
                                                      *(b.extra for b in padded)])
        return found

    padding.buffers = counted


def _count_products() -> None:
    follow = jx709.reaches_solve
    check = jx709.Bf16MatmulBeforeSolve.check_program.__func__  # type: ignore[attr-defined]

    def counted_follow(start: Any) -> Any:
        solve = follow(start)
        SEEN["float32 products at default precision followed (JX709)"] += 1
        if solve is not None:
            SEEN[f"  reaching {solve.primitive}"] += 1
        return solve

    def counted_check(cls: Any, ctx: Any) -> Any:
        if ctx.program.target.is_tpu and id(ctx.program) not in PROGRAMS:
            PROGRAMS.add(id(ctx.program))
            SEEN["programs linted on the TPU target (JX709)"] += 1
            if any(op.primitive in jx709.SOLVES for op in ctx.program.walk()):
                SEEN["  holding a solve or a factorization"] += 1
        yield from check(cls, ctx)

    jx709.reaches_solve = counted_follow
    jx709.Bf16MatmulBeforeSolve.check_program = classmethod(counted_check)  # type: ignore[method-assign]


def main() -> int:
    floor, report, rest = float(sys.argv[1]), sys.argv[2], sys.argv[sys.argv.index("--") + 1:]
    padding.EXTRA = int(floor * 2**20)
    _count_buffers()
    _count_products()
    status = int(pytest.main(["-p", "no:cacheprovider", "-q", "--color=no", "--jaxlint", "--jaxlint-exit-zero",
                              "--jaxlint-target", "tpu-v5e", "--jaxlint-report", report, *rest]))
    print("survey:", json.dumps(dict(SEEN), indent=1))
    return status


if __name__ == "__main__":
    sys.exit(main())
