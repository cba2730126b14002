"""The configuration flags of ``jaxlint check`` (ruff's names), their layer over the configuration
files, and ``--show-settings`` / ``--show-files``. Importing this module does not import the rules."""
from __future__ import annotations

import argparse
import json
import os
import sys
from typing import TYPE_CHECKING, Any, Callable, TextIO

if TYPE_CHECKING:
    from jaxlint.config import Config, Layer


def _comma_list(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def add_compile_arguments(group: Any, devices_type: Callable[[str], int], devices_default: str,
                          target_default: str) -> None:
    """``--devices`` and ``--target``, which ``check`` and ``explain`` share; each says its own default
    (explain reads the configuration for both). The chips named are chips.py's."""
    from jaxlint.chips import GENERATIONS

    group.add_argument("--devices", type=devices_type, default=None, metavar="N",
                       help="start the workers with N CPU devices, for modules that build a mesh at import "
                            f"(default: {devices_default})")
    chips = ", ".join(["cpu", *(f"tpu-{generation}" for generation in GENERATIONS)])
    group.add_argument("--target", default=None, metavar="TARGET",
                       help=f"compile for this chip: {chips}, or a TPU slice such as tpu-v5e:2x4 (default: "
                            f"{target_default}; a TPU needs libtpu, jaxlint's tpu extra; no TPU is used)")


def add_arguments(check: argparse.ArgumentParser) -> None:
    """Flags matching the configuration keys; a flag left out (None) keeps the configured value."""
    group = check.add_argument_group("configuration")
    group.add_argument("--config", action="append", default=[], metavar="CONFIG_OPTION",
                       help="a configuration file (jaxlint.toml or pyproject.toml) used instead of the "
                            "one found, or a `KEY = VALUE` TOML line overriding one setting")
    group.add_argument("--isolated", action="store_true", help="ignore all configuration files")
    group.add_argument("--extend-select", type=_comma_list, default=None, metavar="SELECTORS",
                       help="rules to enable on top of the selected ones")
    group.add_argument("--per-file-ignores", action="append", default=None, metavar="GLOB:CODES",
                       help='replace the configured per-file-ignores, e.g. "tests/*:JX101,JX202"')
    group.add_argument("--extend-per-file-ignores", action="append", default=None, metavar="GLOB:CODES",
                       help="per-file-ignores added to the configured ones")
    group.add_argument("--exclude", type=_comma_list, default=None, metavar="GLOBS",
                       help="replace the excluded files and folders (default: .git, .venv, venv, build, ...)")
    group.add_argument("--extend-exclude", type=_comma_list, default=None, metavar="GLOBS",
                       help="files and folders to exclude on top of the excluded ones")
    group.add_argument("--force-exclude", dest="force_exclude", action="store_true", default=None,
                       help="apply exclude even to paths named on the command line (pre-commit)")
    group.add_argument("--no-force-exclude", dest="force_exclude", action="store_false")
    group.add_argument("--respect-gitignore", dest="respect_gitignore", action="store_true", default=None,
                       help="skip files git ignores (the default)")
    group.add_argument("--no-respect-gitignore", dest="respect_gitignore", action="store_false")
    group.add_argument("--infer-arguments", dest="infer_arguments", action="store_true", default=None,
                       help="trace JAX functions no hint, example or record describes with guessed arguments "
                            "(the default)")
    group.add_argument("--no-infer-arguments", dest="infer_arguments", action="store_false",
                       help="trace only the functions a hint, example, record or import-time call describes")
    group.add_argument("--rerun-tests", dest="rerun_tests", action="store_true", default=None,
                       help="for each module changed since `pytest --jaxlint` stored what it linted, run the tests "
                            "that reached it again (with the plugin) and report the fresh results")
    group.add_argument("--no-rerun-tests", dest="rerun_tests", action="store_false")
    group.add_argument("--rerun-timeout", dest="rerun_timeout", type=float, default=None, metavar="SECONDS",
                       help="seconds per changed module for the tests --rerun-tests runs (default 300)")
    add_compile_arguments(group, int, devices_default="the product of a module's literal mesh shape, if any",
                          target_default="cpu")
    group.add_argument("--cache-dir", default=None, metavar="DIR",
                       help="the result cache's folder (default: .jaxlint_cache in the project root; "
                            "JAXLINT_CACHE_DIR)")
    group.add_argument("-n", "--no-cache", action="store_true", default=None,
                       help="analyze every module again, neither reading nor writing the cache (JAXLINT_NO_CACHE=1)")
    group.add_argument("--show-settings", action="store_true", help="print the resolved settings and exit")
    group.add_argument("--show-files", action="store_true", help="print the files that would be checked and exit")


def _per_file_flag(values: list[str] | None, flag: str, base: str) -> list[Any] | None:
    """``GLOB:CODES`` items, comma-separated or repeated; codes after a comma stay with their glob
    (``"tests/*:JX101,JX202"``)."""
    from jaxlint.config.globs import PatternError, PerFileIgnore
    from jaxlint.config.keys import ConfigError
    from jaxlint.config.selection import check_selector

    if values is None:
        return None
    merged: dict[str, list[str]] = {}
    for value in values:
        glob = None
        for item in _split_outside_braces(value):
            head, colon, code = item.rpartition(":")
            if colon and head.strip():
                glob = head.strip()
            elif colon or glob is None:
                raise ConfigError(f"{flag} {value!r}: expected GLOB:CODES, e.g. \"tests/*:JX101\"")
            else:
                code = item
            merged.setdefault(glob, []).append(code.strip())
    entries = [PerFileIgnore.parse(glob, codes, base) for glob, codes in merged.items()]
    for entry in entries:
        try:
            entry.pattern.check()
            for selector in entry.selectors:
                check_selector(selector)
        except (ValueError, PatternError) as error:
            raise ConfigError(f"{flag} {entry.glob!r}: {error}") from None
    return entries


def _split_outside_braces(text: str) -> list[str]:
    items, depth, current = [], 0, ""
    for char in text:
        depth += {"{": 1, "}": -1}.get(char, 0)
        if char == "," and depth <= 0:
            items.append(current)
            current = ""
        else:
            current += char
    return [item for item in items + [current] if item.strip()]


def _flag_layer(args: argparse.Namespace) -> Layer:
    """The flags as a configuration layer, checked as the keys are (paths relative to the cwd)."""
    from jaxlint.config.keys import KEYS, Layer, _Key

    cwd = os.getcwd()
    layer = Layer("command line", cwd)
    raw = {"select": args.select, "extend-select": args.extend_select, "ignore": args.ignore,
           "exclude": args.exclude, "extend-exclude": args.extend_exclude,
           "force-exclude": args.force_exclude, "respect-gitignore": args.respect_gitignore,
           "infer-arguments": args.infer_arguments,
           "rerun-tests": getattr(args, "rerun_tests", None),
           "rerun-timeout": getattr(args, "rerun_timeout", None),
           "timeout": args.timeout, "jobs": args.jobs, "devices": getattr(args, "devices", None),
           "target": getattr(args, "target", None),
           # ruff's order: the flag, else the environment variable, else the configuration
           "cache-dir": getattr(args, "cache_dir", None) or os.environ.get("JAXLINT_CACHE_DIR") or None}
    for key, value in raw.items():
        if value is not None:
            setattr(layer, key.replace("-", "_"), KEYS[key](value, _Key(layer, f"--{key}")))
    layer.per_file_ignores = _per_file_flag(args.per_file_ignores, "--per-file-ignores", cwd)
    layer.extend_per_file_ignores = _per_file_flag(args.extend_per_file_ignores, "--extend-per-file-ignores", cwd)
    return layer


def resolve(args: argparse.Namespace) -> Config:
    """The settings of ``jaxlint check``: configuration files, ``--config`` and the flags.
    Raises ConfigError."""
    from jaxlint.config import ConfigError, load_config
    from jaxlint.config.keys import parse_snippet

    files = [value for value in args.config if os.path.isfile(value) or "=" not in value]
    if len(files) > 1:
        raise ConfigError(f"--config: one configuration file at most, got {', '.join(files)}")
    if files and args.isolated:
        raise ConfigError("--config FILE and --isolated are exclusive (--isolated ignores all files)")
    snippets = [parse_snippet(value, os.getcwd()) for value in args.config if value not in files]
    return load_config(args.paths, files[0] if files else None, args.isolated, snippets + [_flag_layer(args)])


def show_settings(config: Config, out: TextIO = sys.stdout) -> None:
    """Every key with its resolved value, as TOML one could paste into a jaxlint.toml."""
    from jaxlint.config.selection import codes_matching
    from jaxlint.rules import rule_infos

    # A layer that sets select replaces the selection of the layers before it (ruff).
    selecting = [i for i, layer in enumerate(config.layers) if layer.select is not None]
    later = config.layers[selecting[-1] if selecting else 0:]
    values: dict[str, Any] = {
        "examples": [_shown_path(e, config.root) for e in config.examples],
        "select": config.layers[selecting[-1]].select if selecting else ["ALL"],
        "extend-select": [s for layer in later for s in layer.extend_select or []],
        "ignore": [s for layer in later for s in layer.ignore or []],
        # extend-per-file-ignores are merged in: one table of what applies
        "per-file-ignores": {e.glob: list(e.selectors) for e in config.per_file_ignores},
        "exclude": [p.pattern for p in config.exclude],
        "extend-exclude": [p.pattern for p in config.extend_exclude],
        "force-exclude": config.force_exclude,
        "respect-gitignore": config.respect_gitignore,
        "infer-arguments": config.infer_arguments,
        "rerun-tests": config.rerun_tests,
        "rerun-timeout": config.rerun_timeout,
        "timeout": config.timeout,
        "jobs": config.jobs,
        "devices": config.devices,
        "target": config.target,
        "output-format": config.output_format,
        "cache-dir": _shown_path(config.cache_dir, config.root),
    }
    out.write(f"# Settings file: {config.path or 'none (defaults)'}\n")
    out.write(f"# Project root: {config.root}\n")
    for layer in config.layers[1 if config.path else 0:]:
        if any(v is not None for k, v in vars(layer).items() if k not in ("source", "base")):
            out.write(f"# Overridden by: {layer.source}\n")
    for key, value in values.items():
        if value is None:
            default = {"jobs": "one per core, at most 4",
                       "devices": "a module's literal mesh shape, else JAX's"}.get(key, "full")
            out.write(f"# {key}: not set (default: {default})\n")
        else:
            out.write(f"{key} = {_toml(value)}\n")
    for entry in config.per_file_ignores:  # what each glob turns off, relative to what
        out.write(f"# per-file-ignores {entry.glob!r}, relative to {entry.pattern.base}: "
                  f"{', '.join(sorted(codes_matching(entry.selectors)))}\n")
    rules = config.rules()
    out.write(f"# enabled rules ({len(rules)}): {', '.join(r.code for r in rules)}\n")
    by_code = {r.code: r for r in rule_infos()}
    for code, options in config.options().items():
        rule = by_code[code]
        out.write(f"\n[rules.{code}]  # {rule.name}\n")
        for name, value in options.items():
            out.write(f"{name} = {_toml(value)}  # {rule.options[name].description}\n")


def _shown_path(path: str, root: str) -> str:
    rel = os.path.relpath(path, root)
    return path if rel.startswith("..") else rel.replace(os.sep, "/")


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {_toml(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e16:
        return f"{value:.1f}"
    return json.dumps(value)


def show_files(paths: list[str], config: Config, out: TextIO = sys.stdout) -> list[str]:
    """The files ``check`` would read, relative to the current directory, sorted; returns the
    paths given that do not exist (ruff leaves them out of the listing too)."""
    from jaxlint.scan.discover import discover

    shown = []
    missing: list[str] = []
    for path in discover(paths, config, missing=missing):
        rel = os.path.relpath(path)
        shown.append(path if rel.startswith("..") else rel)
    for path in sorted(shown):
        out.write(path + "\n")
    return missing


def show(args: argparse.Namespace, config: Config) -> int:
    """--show-settings, --show-files (both: settings first); exit code 0. A missing path is left
    out of the file listing, with a warning, as check goes on past one."""
    if args.show_settings:
        show_settings(config)
    if args.show_files:
        for path in show_files(args.paths, config):
            print(f"jaxlint: warning: no such file or folder: {path}", file=sys.stderr)
    return 0
