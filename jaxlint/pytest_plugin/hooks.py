"""The ``pytest11`` entry point: the ``--jaxlint`` options. Without ``--jaxlint`` nothing else of
jaxlint is imported and nothing in the run changes."""
from __future__ import annotations

from typing import Any

import pytest

SESSION = "jaxlint-session"  # the name the registered JaxlintSession goes by


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("jaxlint", "jaxlint: lint the JAX functions the tests call")
    group.addoption("--jaxlint", action="store_true", default=False,
                    help="trace the project's functions the tests call with arrays and report jaxlint's "
                         "findings at the end (exit status 1 on findings when the tests passed)")
    group.addoption("--jaxlint-report", metavar="PATH", default=None,
                    help="also write the findings to PATH as `jaxlint check --output-format json` does")
    group.addoption("--jaxlint-output-format", metavar="FORMAT", default=None,
                    help="format of the findings in the terminal (as `jaxlint check --output-format`); "
                         "default: the configuration's output-format, else full")
    group.addoption("--jaxlint-coverage-report", metavar="PATH", default=None,
                    help="write which JAX functions the tests ran were linted, and why the others were not, "
                         "as JSON to PATH")
    group.addoption("--jaxlint-watch-all", action="store_true", default=False,
                    help="watch every test, also a parametrized test's later runs after three in a row called "
                         "nothing new (slower)")
    group.addoption("--jaxlint-no-cache", action="store_true", default=False,
                    help="do not write what was linted to the result cache for `jaxlint check` to report "
                         "(as JAXLINT_NO_CACHE=1)")
    group.addoption("--jaxlint-cache-dir", metavar="PATH", default=None,
                    help="the result cache folder to write to (as `jaxlint check --cache-dir`; default: "
                         "JAXLINT_CACHE_DIR, else the configuration's cache-dir, else .jaxlint_cache)")
    group.addoption("--jaxlint-target", metavar="TARGET", default=None,
                    help="compile for this chip (as `jaxlint check --target`: cpu, tpu-v5e, tpu-v5e:2x4, ...); "
                         "default: the configuration's target, else cpu")
    group.addoption("--jaxlint-exit-zero", action="store_true", default=False,
                    help="report the findings without changing the exit status")


@pytest.hookimpl(trylast=True)
def pytest_load_initial_conftests(early_config: Any, parser: Any, args: list[str]) -> None:
    """Before conftest.py files import the project (pytest imports them in its own ``trylast``
    implementation, registered before this plugin, so called after it), and after other plugins
    installed their import hooks (jaxtyping's), which jaxlint's finder then goes ahead of."""
    if getattr(early_config.known_args_namespace, "jaxlint", False):
        _register(early_config, early=True)


@pytest.hookimpl(trylast=True)
def pytest_configure(config: Any) -> None:
    # Loaded after the early hooks (``-p`` in a conftest.py): watched the slower way.
    if config.getoption("jaxlint") and not config.pluginmanager.has_plugin(SESSION):
        _register(config, early=False)


def _register(config: Any, early: bool) -> None:
    from jaxlint.pytest_plugin.session import JaxlintSession

    config.pluginmanager.register(JaxlintSession(config, early), SESSION)
