"""Every padded buffer JX312's layout reading finds in real code, below the rule's size floor.

    python bench/padding_survey.py FLOOR_MIB REPORT.json -- PYTEST_ARGS...

Runs pytest in this process with ``--jaxlint --jaxlint-target tpu-v5e`` (the plugin traces and
compiles the programs the tests called in this process), JX312's floor of 64 MiB lowered to
FLOOR_MIB (its 8x ratio kept), and writes the findings' report: on the six libraries' test slices,
whose arrays are small, the rule at its real floor reports nothing, and this lists what it read.
Run it in a library's folder, as bench/six_libraries.py runs its slice (PYTHONPATH=the worktree,
JAX_PLATFORMS=cpu, ``-p jaxlint.pytest_plugin.hooks`` when jaxlint is not installed).
"""
from __future__ import annotations

import sys

import pytest

from jaxlint.ir import padding


def main() -> int:
    floor, report, rest = float(sys.argv[1]), sys.argv[2], sys.argv[sys.argv.index("--") + 1:]
    padding.EXTRA = int(floor * 2**20)
    return int(pytest.main(["-p", "no:cacheprovider", "-q", "--color=no", "--jaxlint", "--jaxlint-exit-zero",
                            "--jaxlint-target", "tpu-v5e", "--jaxlint-report", report, *rest]))


if __name__ == "__main__":
    sys.exit(main())
