"""The configuration keys: each read from TOML and checked, errors naming the file, the key and
what was expected (with the closest key, code or option when there is one)."""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Callable

from jaxlint.config.globs import PathPattern, PatternError, PerFileIgnore
from jaxlint.config.selection import check_option, check_selector, describe, did_you_mean, rule_named

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

# The names of check's output formats, the one list the flag, JAXLINT_OUTPUT_FORMAT and the
# `output-format` key accept (jaxlint.report maps each to its writer; config sits below report, so
# the names live here); an alias is a format's earlier name, still accepted everywhere.
OUTPUT_FORMATS = ("full", "concise", "json", "json-lines", "sarif", "github", "junit", "gitlab")
OUTPUT_FORMAT_ALIASES = {"text": "full"}


def output_format_named(name: Any) -> str | None:
    """The output format ``name`` names (an alias resolved); None when it names none."""
    if not isinstance(name, str):
        return None
    name = OUTPUT_FORMAT_ALIASES.get(name, name)
    return name if name in OUTPUT_FORMATS else None


class ConfigError(Exception):
    """An unreadable or invalid configuration: exit code 2."""


@dataclass
class Layer:
    """The keys one source sets: a configuration file, a ``--config`` snippet or the flags.
    None: not set here."""

    source: str  # the file, or "--config" / "command line": named in errors and --show-settings
    base: str  # the folder relative paths and globs are relative to
    examples: list[str] | None = None
    select: list[str] | None = None
    extend_select: list[str] | None = None
    ignore: list[str] | None = None
    per_file_ignores: list[PerFileIgnore] | None = None
    extend_per_file_ignores: list[PerFileIgnore] | None = None
    exclude: list[PathPattern] | None = None
    extend_exclude: list[PathPattern] | None = None
    force_exclude: bool | None = None
    respect_gitignore: bool | None = None
    infer_arguments: bool | None = None
    rerun_tests: bool | None = None
    rerun_timeout: float | None = None
    timeout: float | None = None
    jobs: int | None = None
    devices: int | None = None
    target: str | None = None  # the compile target's name (jaxlint.chips)
    output_format: str | None = None
    cache_dir: str | None = None  # absolute
    rules: dict[str, dict[str, Any]] | None = None  # code -> option -> value


def read_toml(path: str) -> dict[str, Any]:
    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: invalid TOML: {error}") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"{path}: cannot read the file: {error}") from None


@dataclass
class _Key:
    layer: Layer
    name: str  # as the user wrote it, with its table: tool.jaxlint.timeout

    def fail(self, expected: str, value: Any) -> ConfigError:
        return self.error(f"expected {expected}, got {describe(value)}")

    def error(self, message: str) -> ConfigError:
        # A flag names itself (`--select`); a file key needs its file.
        where = "" if self.name.startswith("--") else f"{self.layer.source}: "
        return ConfigError(f"{where}`{self.name}`: {message}")


def _strings(value: Any, key: _Key, what: str = "strings") -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise key.fail(f"an array of {what}", value)
    return value


def _selectors(value: Any, key: _Key) -> list[str]:
    selectors = _strings(value, key, "rule codes, prefixes or names")
    for selector in selectors:
        try:
            check_selector(selector)
        except ValueError as error:
            raise key.error(str(error)) from None
    return selectors


def _patterns(value: Any, key: _Key) -> list[PathPattern]:
    patterns = [PathPattern(p, key.layer.base) for p in _strings(value, key, "glob patterns")]
    for pattern in patterns:
        try:
            pattern.check()
        except PatternError as error:
            raise key.error(str(error)) from None
    return patterns


def _per_file_ignores(value: Any, key: _Key) -> list[PerFileIgnore]:
    if not isinstance(value, dict):
        raise key.fail('a table of glob = [codes], e.g. {"tests/*" = ["JX101"]}', value)
    entries = []
    for glob, selectors in value.items():
        entry_key = _Key(key.layer, f'{key.name}."{glob}"')
        entry = PerFileIgnore.parse(glob, _selectors(selectors, entry_key), key.layer.base)
        try:
            entry.pattern.check()
        except PatternError as error:
            raise entry_key.error(str(error)) from None
        entries.append(entry)
    return entries


def _boolean(value: Any, key: _Key) -> bool:
    if not isinstance(value, bool):
        raise key.fail("true or false", value)
    return value


def _timeout(value: Any, key: _Key) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise key.fail("a positive number of seconds", value)
    return float(value)


def _jobs(value: Any, key: _Key) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise key.fail("a whole number of at least 1", value)
    return value


def _devices(value: Any, key: _Key) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise key.fail("a whole number of CPU devices, at least 1", value)
    return value


def _target(value: Any, key: _Key) -> str:
    from jaxlint.chips import TargetError, parse_target

    if not isinstance(value, str):
        raise key.fail('a target name such as "cpu", "tpu-v5e" or "tpu-v5e:2x4"', value)
    try:
        return parse_target(value).name
    except TargetError as error:
        raise key.error(str(error)) from None


def _cache_dir(value: Any, key: _Key) -> str:
    if not isinstance(value, str) or not value.strip():
        raise key.fail("a folder path", value)
    return os.path.normpath(os.path.join(key.layer.base, os.path.expanduser(value)))


def _output_format(value: Any, key: _Key) -> str:
    named = output_format_named(value)
    if named is None:
        hint = did_you_mean(value, list(OUTPUT_FORMATS)) if isinstance(value, str) else "."
        raise key.error(f"expected one of {', '.join(OUTPUT_FORMATS)}, got {describe(value)}{hint}")
    return named


def _rules(value: Any, key: _Key) -> dict[str, dict[str, Any]]:
    if not isinstance(value, dict):
        raise key.fail("a table of rule tables, e.g. [tool.jaxlint.rules.JX202]", value)
    resolved: dict[str, dict[str, Any]] = {}
    for name, options in value.items():
        rule_key = _Key(key.layer, f"{key.name}.{name}")
        try:
            rule = rule_named(name)
        except ValueError as error:
            raise rule_key.error(str(error)) from None
        if not isinstance(options, dict):
            raise rule_key.fail("a table of the rule's options, e.g. min-equations = 200", options)
        for option, setting in options.items():
            try:
                resolved.setdefault(rule.code, {})[option] = check_option(rule, option, setting)
            except ValueError as error:
                raise _Key(key.layer, f"{rule_key.name}.{option}").error(str(error)) from None
    return resolved


KEYS: dict[str, Callable[[Any, _Key], Any]] = {
    "examples": lambda value, key: _strings(value, key, "paths"),
    "select": _selectors,
    "extend-select": _selectors,
    "ignore": _selectors,
    "per-file-ignores": _per_file_ignores,
    "extend-per-file-ignores": _per_file_ignores,
    "exclude": _patterns,
    "extend-exclude": _patterns,
    "force-exclude": _boolean,
    "respect-gitignore": _boolean,
    "infer-arguments": _boolean,
    "rerun-tests": _boolean,
    "rerun-timeout": _timeout,
    "timeout": _timeout,
    "jobs": _jobs,
    "devices": _devices,
    "target": _target,
    "output-format": _output_format,
    "cache-dir": _cache_dir,
    "rules": _rules,
}


def parse_table(table: dict[str, Any], source: str, base: str, prefix: str) -> Layer:
    """A Layer of the keys in ``table``; ``prefix`` names the table in messages (``tool.jaxlint.``)."""
    layer = Layer(source, base)
    if not isinstance(table, dict):
        raise ConfigError(f"{source}: `{prefix.rstrip('.')}`: expected a table, got {describe(table)}")
    for name, value in table.items():
        if name not in KEYS:
            raise ConfigError(f"{source}: unknown key `{prefix}{name}`{did_you_mean(name, list(KEYS))} "
                              f"The keys are: {', '.join(KEYS)}.")
        setattr(layer, name.replace("-", "_"), KEYS[name](value, _Key(layer, prefix + name)))
    return layer


def parse_snippet(text: str, base: str) -> Layer:
    """``--config 'KEY = VALUE'`` (a line of TOML, as in a jaxlint.toml), as ruff accepts it."""
    try:
        table = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"--config {text!r}: neither a file nor a valid `KEY = VALUE` TOML "
                          f"snippet ({error})") from None
    return parse_table(table, f"--config {text!r}", base, "")
