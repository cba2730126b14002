"""The pipeline in the jaxlint process: discover -> scan -> (worker: import, trace, rules) -> fix.
cli/check.py is the ``jaxlint check`` command, which parses the flags and calls it."""
from __future__ import annotations

import ast
import errno
import os
import signal
import time
from dataclasses import replace
from typing import TYPE_CHECKING, Sequence

from jaxlint import scan
from jaxlint.config import DEFAULT_TIMEOUT, Config, load_config, signatures
from jaxlint.engine.cache import ResultCache
from jaxlint.engine.from_store import join_stored, skip_guesses_the_test_run_made
from jaxlint.engine.interrupt import Interrupted, Terminated
from jaxlint.engine.jobs import make_job, run_job
from jaxlint.engine.results import CheckResult, FileAnalysis
from jaxlint.engine.settle import settle, settle_file
from jaxlint.engine.store import unusable_session
from jaxlint.engine.targets import file_targets, recorded_keys
from jaxlint.lazylog import LazyLogger
from jaxlint.model import Finding, Result, Settings, Skipped, Span
from jaxlint.rules.catalog import rule_info
from jaxlint.scan import discover
from jaxlint.scan.index import SourceIndex
from jaxlint.scan.noqa import MAY_HAVE_DIRECTIVES, tokenized
from jaxlint.text import SourceError, SourceFile, read_source, relative

if TYPE_CHECKING:
    from jaxlint.engine.pool import FreshWorkers, WorkerPool
    from jaxlint.rules import Rule, RuleInfo

LOG = LazyLogger(__name__)  # progress for --verbose
IO_ERROR = "E902"  # ruff's code for a path it cannot read


def prepare(path: str, codes: list[str], config: Config, compile_costs: bool = False,
            recorded: frozenset[str] = frozenset(), cache: ResultCache | None = None,
            settings: Settings | None = None) -> FileAnalysis:
    """Read and scan one file; no job for files that never mention jax (no import, no cost).
    ``recorded``: the signatures file's keys with a signature (their JAX functions are targets).
    With ``cache``, a file whose bytes (and the rest of the scan's key) are unchanged is not scanned.
    ``settings``: ``config.settings()``, when the caller made it once for every file."""
    # One file at a time: its AST, scopes and index make no cycles, and a collection the cyclic
    # garbage collector would start meanwhile would only rescan them (a third of the scan stage
    # on a 30,000-line module); between files it runs as usual.
    with scan.gc_paused():
        return _prepare(path, codes, config, compile_costs, recorded, cache, settings or config.settings())


def _prepare(path: str, codes: list[str], config: Config, compile_costs: bool, recorded: frozenset[str],
             cache: ResultCache | None, settings: Settings) -> FileAnalysis:
    try:
        source = read_source(path)
    except SourceError as error:
        # Python could not import it either; worth a finding only if it is JAX code.
        unread = SourceFile(path, "", "utf-8", False)
        if not scan.mentions_jax(error.data.decode("latin-1")):
            return FileAnalysis(unread, [], None)
        return _syntax_error(unread, f"cannot decode the file: {error.message}", 1, 0, codes)
    except OSError as error:  # unreadable, a broken symlink, or deleted since discovery
        why = error.strerror or str(error)
        if os.path.islink(path) and not os.path.exists(path):
            why = f"it is a broken symlink (to {_link_target(path)})"
        return _syntax_error(SourceFile(path, "", "utf-8", False), f"cannot read the file: {why}", 1, 0, codes)
    if not scan.mentions_jax(source.text):
        return FileAnalysis(source, [], None)
    if cache is None:
        return _scan(source, codes, config, compile_costs, recorded)
    own_recorded = []  # without a signatures file, no relative path is made per file
    if recorded:
        prefix = signatures.function_key(path, config.root, "")
        own_recorded = sorted(k for k in recorded if k.startswith(prefix))
    key = cache.scan_key(path, source.digest, codes, settings, compile_costs, own_recorded)
    stored = cache.load_scan(key)
    if stored is not None:
        job = make_job(source, stored["targets"], codes, settings, compile_costs=compile_costs) \
            if stored["job"] else None
        return FileAnalysis(source, stored["targets"], job, stored["result"], stored["findings"],
                            functions=stored["functions"], tokens=stored["tokens"])
    analysis = _scan(source, codes, config, compile_costs, recorded)
    # Suppression comments are read at every settle: the cache keeps the tokenizer's view of them.
    analysis.tokens = tokenized(source.text) if MAY_HAVE_DIRECTIVES.search(source.text) else None
    cache.store_scan(key, path, analysis.targets, analysis.functions, analysis.findings, analysis.job is not None,
                     analysis.result, analysis.tokens)
    return analysis


def _link_target(path: str) -> str:
    try:
        return os.readlink(path)
    except OSError:  # replaced meanwhile
        return "a missing file"


def _scan(source: SourceFile, codes: list[str], config: Config, compile_costs: bool,
          recorded: frozenset[str]) -> FileAnalysis:
    """What ``prepare`` does after reading a file that mentions jax."""
    path = source.path
    index = SourceIndex(path, source.text)  # one parse for the scan and the source rules
    try:
        targets, functions, index = file_targets(path, source.text, config, recorded, index.tree)
    except scan.ScanSyntaxError as error:
        return _syntax_error(source, f"syntax error: {error.message}", error.line, error.column, codes)
    except Exception as error:  # a scanner bug must not lose the other files
        return _syntax_error(source, *_scan_failure(path, source.text, error), codes)
    # A package's __main__.py is its program: importing it would run it (train, write files).
    entry_point = os.path.basename(path) == "__main__.py"
    # With examples files, a module of plain JAX functions is imported too: the examples file
    # may register one of them (or a closure they return), which the scan cannot see.
    if (targets or (config.examples and functions)) and not entry_point:
        return FileAnalysis(source, targets, make_job(source, targets, codes, config.settings(),
                                                      compile_costs=compile_costs), functions=functions)
    # Nothing to import: the source rules run here (in the worker, they run after the import).
    # Imported here: a run whose scans all come from the cache loads no rule module.
    from jaxlint.rules import all_rules
    from jaxlint.rules.base import SourceContext
    from jaxlint.rules.runner import run_source_rules

    analysis = FileAnalysis(source, targets, None, functions=functions)
    context = SourceContext(path, source.text, index, config.settings())
    analysis.findings = run_source_rules(all_rules(), context, set(codes))
    if entry_point and targets:
        why = ("not imported: a __main__.py is a program's entry point, whose top-level code would run; "
               "move the function into a module it imports")
        analysis.result = Result(path, skipped=[Skipped(t.qualname, "not-traceable", why, t.name_span.start_line)
                                                for t in targets])
    return analysis


def _scan_failure(path: str, text: str, error: Exception) -> tuple[str, int, int]:
    """Message and position when the scanner fails: Python's own syntax error if there is one."""
    try:
        compile(text, path, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as syntax:
        return f"syntax error: {syntax.msg}", syntax.lineno or 1, max((syntax.offset or 1) - 1, 0)
    except (ValueError, RecursionError, MemoryError):
        pass
    return f"jaxlint could not scan the file ({type(error).__name__}: {error})", 1, 0


def _syntax_error(source: SourceFile, message: str, line: int, column: int,
                  codes: list[str]) -> FileAnalysis:
    analysis = FileAnalysis(source, [], None)
    syntax_error = rule_info("JX900")
    if syntax_error.code in codes:
        analysis.findings.append(syntax_error.finding(source.path, Span(line, column, line, column), message))
    return analysis


def missing_path(given: str) -> Finding:
    """ruff's E902 (io-error) for a path given that does not exist, in ruff's words, at 1:1: a
    finding like the others, so every output format reports it and the other paths are still
    checked. Not a rule: only an ignore (``--ignore E902``) turns it off."""
    message = f"{os.strerror(errno.ENOENT)} (os error {errno.ENOENT})"
    return Finding(code=IO_ERROR, name="io-error", message=message, severity="error",
                   path=os.path.abspath(given), span=Span(1, 0, 1, 0))


def default_jobs() -> int:
    """Workers to run at once: one per core, at most 4 (each holds its own JAX, ~250 MiB)."""
    return max(1, min(os.cpu_count() or 1, 4))


def check(paths: list[str], rules: Sequence[RuleInfo | type[Rule]], fix: bool = False, diff: bool = False,
          timeout: float = DEFAULT_TIMEOUT, jobs: int | None = None, cost: str = "shapes",
          unsafe_fixes: bool = False, config: Config | None = None,
          ignore_noqa: bool = False, cache: ResultCache | None = None,
          pool: WorkerPool | None = None, run_code: bool = True) -> CheckResult:
    """Check every Python file under ``paths``; ``timeout`` is the limit per module, in seconds.

    Only files that mention jax and have targets are imported, each in a worker process
    (``jobs`` of them at once); a tree without such files never starts one
    (``CheckResult.workers_started == 0``). With ``cache``, a module whose entry is up to date is
    not imported at all, and what was analyzed is stored. ``pool``: a worker the caller keeps warm
    (the editor server), the only lane, left running afterwards. ``run_code=False`` (the editor
    server in a folder the user does not trust): no module is imported and no fix verified; a
    module has what needs no import (syntax errors, the source rules of a file with no target) and
    what the cache and the test-run store already hold for it.
    """
    if not run_code and (fix or diff or cost == "compiled"):
        raise ValueError("fixes are verified, and costs compiled, by running the module")
    codes = [r.code for r in rules]
    config = config or load_config(paths)  # the CLI passes the one it resolved (flags included)
    compile_costs = cost == "compiled"
    result = _scanned(paths, codes, config, compile_costs, cache)
    pending = [a for a in result.files if a.job is not None]
    to_run = pending if cache is None else _load_cached(pending, codes, config, cache, result)
    if not run_code:
        pending, to_run = _withhold(pending), []
    pools = _lanes(pool, to_run, jobs, timeout, fix or diff or compile_costs)
    fresh = _fresh_workers(timeout, pending if (fix or diff) and pool is None else [])
    try:
        if to_run:
            # Modules that ask for the same CPU devices one after another: a lane's worker is
            # replaced only when the count changes.
            _run_all(sorted(to_run, key=lambda a: a.job.devices or 0), pools, codes, cache)
        _take_results(pending, result.timings)
        _settle_all(result, pending, codes, config, ignore_noqa, cache)
        result.timings["worker-start"] = sum(lane.jax_import for lane in pools)
        result.workers_started = sum(lane.started for lane in pools)
        if fix or diff or compile_costs:  # --cost compiled alone verifies the fixes too (writing nothing)
            _fix_all(result, fresh, codes, fix, unsafe_fixes)
    except (KeyboardInterrupt, Terminated) as error:
        for lane in pools:
            lane.kill()
        fresh.kill()
        done = sum(1 for analysis in pending if analysis.result is not None)
        raise Interrupted(error, done, len(pending), len({f.path for f in result.fixed})) from None
    finally:
        for own in pools:
            if own is not pool:
                own.close()
        fresh.close()
    if cache is not None:
        cache.save_index()
        if cache.stored:
            cache.prune()
    return result


def _scanned(paths: list[str], codes: list[str], config: Config, compile_costs: bool,
             cache: ResultCache | None) -> CheckResult:
    """The files found and scanned (each a FileAnalysis, with its job if it has targets), the
    missing paths and empty folders, with the timings of both stages."""
    timings = {"discover": 0.0, "scan": 0.0, "worker-start": 0.0, "import": 0.0, "trace": 0.0,
               "rules": 0.0, "fix": 0.0}
    started = time.perf_counter()
    empty: list[str] = []
    missing: list[str] = []
    files = discover.discover(paths, config, empty, missing)
    timings["discover"] = time.perf_counter() - started
    LOG.debug("discovered %d Python file%s in %.0f ms", len(files), "s" * (len(files) != 1),
              timings["discover"] * 1000)
    started = time.perf_counter()
    recorded = recorded_keys(config)
    settings = config.settings()
    if cache is not None:
        cache.open_index(paths, codes, settings, compile_costs)
    analyses = [prepare(path, codes, config, compile_costs, recorded, cache, settings) for path in files]
    timings["scan"] = time.perf_counter() - started
    LOG.debug("scanned in %.0f ms: %d of %d files to import and trace (the others have no target)",
              timings["scan"] * 1000, sum(a.job is not None for a in analyses), len(analyses))
    reported = [given for given in missing if config.reports_io_errors(given)]
    return CheckResult(analyses, timings, config=config, empty_paths=empty,
                       io_errors=[missing_path(given) for given in reported],
                       ignored_missing=[given for given in missing if given not in reported])


def _load_cached(pending: list[FileAnalysis], codes: list[str], config: Config, cache: ResultCache,
                 result: CheckResult) -> list[FileAnalysis]:
    """Each pending module's result from the cache where its entry is current; the modules left to run."""
    started = time.perf_counter()
    if config.infer_arguments:
        skip_guesses_the_test_run_made(pending, codes, config, cache)
    for analysis in pending:
        analysis.result = cache.load(analysis.job)  # type: ignore[arg-type]
    to_run = [a for a in pending if a.result is None]
    result.cached = len(pending) - len(to_run)
    LOG.debug("result cache %s: %d of %d modules up to date (%.0f ms)", cache.folder, result.cached,
              len(pending), (time.perf_counter() - started) * 1000)
    return to_run


def _lanes(pool: WorkerPool | None, to_run: list[FileAnalysis], jobs: int | None, timeout: float,
           fixing: bool) -> list[WorkerPool]:
    """The caller's warm pool, else one pool per lane (none for a run the cache answers)."""
    if pool is not None:
        return [pool]
    if not (to_run or fixing):
        return []
    from jaxlint.engine.pool import WorkerPool  # subprocess, threads: not for a run the cache answers

    return [WorkerPool(timeout) for _ in range(max(1, min(jobs or default_jobs(), len(to_run))))]


def _take_results(pending: list[FileAnalysis], timings: dict[str, float]) -> None:
    """Each module's findings in its own file (other files': _route_to_helper_files), and its timings."""
    for analysis in pending:
        found = analysis.result.findings
        for index, finding in enumerate(found):
            if _same_file(finding.path, analysis.source.path):
                if finding.path != analysis.source.path:  # the same file by another path (a link)
                    found[index] = replace(finding, path=analysis.source.path)
                analysis.findings.append(found[index])
        for stage, seconds in analysis.result.timings.items():
            timings[stage] = timings.get(stage, 0.0) + seconds


def _settle_all(result: CheckResult, pending: list[FileAnalysis], codes: list[str], config: Config,
                ignore_noqa: bool, cache: ResultCache | None) -> None:
    """Helpers' findings routed to their files, the test-run store joined, then every file settled
    (before fixing: ignored and suppressed findings are not fixed)."""
    analyses = result.files
    result.unchecked_findings = _route_to_helper_files(pending, analyses, codes, ignore_noqa, config)
    if cache is not None:  # what `pytest --jaxlint` linted, where still current (engine/store.py)
        join_stored(analyses, codes, config, cache)
        if not any(analysis.stored for analysis in analyses):
            result.unusable_test_run = unusable_session(cache, config, codes)
    result.ignore_noqa = ignore_noqa
    for analysis in analyses:
        settle_file(analysis, codes, config, ignore_noqa)


def _fix_all(result: CheckResult, fresh: FreshWorkers, codes: list[str], write: bool, unsafe_fixes: bool) -> None:
    from jaxlint.engine.fixer import fix_files

    started = time.perf_counter()
    fix_files(result, fresh, codes, write=write, unsafe_fixes=unsafe_fixes)
    LOG.debug("fixes verified in %.0f ms: %d accepted, %d rejected", (time.perf_counter() - started) * 1000,
              len(result.fixed), len(result.fix_rejected))
    result.timings["fix"] = time.perf_counter() - started


def _fresh_workers(timeout: float, fixing: list[FileAnalysis]) -> FreshWorkers:
    """For --fix and --diff: the fix verifier's first two fresh workers (the original's values,
    the fixed text), started now so their JAX imports overlap the check's; none when no module
    is traced, and none for a caller's warm pool (the editor server: it fixes nothing)."""
    from jaxlint.engine.pool import FreshWorkers

    return FreshWorkers(timeout, 2 if fixing else 0, fixing[0].job.devices if fixing else None)


def _withhold(pending: list[FileAnalysis]) -> list[FileAnalysis]:
    """The analyses whose results came from the cache; the others lose their job (not imported)."""
    for analysis in pending:
        if analysis.result is None:
            analysis.job = None
    return [a for a in pending if a.result is not None]


def _run_all(pending: list[FileAnalysis], pools: list[WorkerPool], codes: list[str],
             cache: ResultCache | None = None) -> None:
    """Each pool takes the next module until none is left; worker I/O releases the GIL. Each
    result goes into ``cache`` as it comes, before the findings are taken from it."""
    import threading  # a run the cache answers runs no lane

    queue = iter(pending)
    lock = threading.Lock()
    errors: list[BaseException] = []

    def lane(pool: WorkerPool) -> None:
        if threading.current_thread() is not threading.main_thread():
            _leave_signals_to_the_main_thread()
        while not errors:
            with lock:
                analysis = next(queue, None)
            if analysis is None:
                return
            started = time.perf_counter()
            try:
                result = run_job(pool, analysis.job, codes)
                if errors:  # interrupted meanwhile: the "crash" may be the interrupt's kill; not cached
                    return
                analysis.result = result
                if cache is not None:
                    cache.store(analysis.job, analysis.result, analysis.source.digest)
            except (KeyboardInterrupt, Terminated):  # the main thread's lane: stop every lane now
                raise
            except BaseException as error:  # an internal error: stop and report it
                errors.append(error)
            else:
                LOG.debug("%s: %.0f ms (%s)", relative(analysis.source.path), (time.perf_counter() - started) * 1000,
                          ", ".join(f"{stage} {seconds * 1000:.0f} ms"
                                    for stage, seconds in analysis.result.timings.items()) or "not analyzed")

    threads = [threading.Thread(target=lane, args=(pool,)) for pool in pools[1:]]
    for thread in threads:
        thread.start()
    try:
        lane(pools[0])
        for thread in threads:
            thread.join()
    except BaseException as error:  # Ctrl-C or SIGTERM, which only the main thread receives
        errors.append(error)  # the other lanes take no further module
        while any(thread.is_alive() for thread in threads):
            for pool in pools:  # again while a lane finishes: it may have started a worker since
                pool.kill()
            for thread in threads:
                thread.join(0.05)
        raise
    if errors:
        raise errors[0]


def _leave_signals_to_the_main_thread() -> None:
    """Block SIGINT and SIGTERM in this thread. POSIX lets the kernel give a process's signal to
    any thread that does not block it (Linux prefers the main thread, but not always); a lane
    waiting on its worker would take it and retry its wait, and the main thread, where Python
    raises KeyboardInterrupt, would learn of it only when its own module ended."""
    if hasattr(signal, "pthread_sigmask"):  # POSIX
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})


def _route_to_helper_files(pending: list[FileAnalysis], analyses: list[FileAnalysis], codes: list[str],
                           ignore_noqa: bool, config: Config) -> int:
    """Findings a module's traces made in helpers of other files, and the helpers they reached,
    go to those files' analyses, after the file's own findings (its own finding at a place wins
    when they are settled); a file that is not being checked gets nothing (as ruff reports only
    the files it is given): returns how many findings such files hold, after their
    per-file-ignores and suppressions, for the summary to say."""
    by_path: dict[str, FileAnalysis] = {}  # real path -> analysis, made when a finding needs it (a
    # realpath per file, an lstat per component of each path: a tenth of a warm run's syscalls)
    unchecked: dict[str, list[Finding]] = {}
    for analysis in pending:
        result = analysis.result
        for index, finding in enumerate(result.findings):
            if _same_file(finding.path, analysis.source.path):
                continue  # the file's own
            other = _by_real_path(by_path, analyses).get(os.path.realpath(finding.path))
            if other is not None:
                # One object in both lists: the fixer carries a routed finding the file still reports.
                result.findings[index] = moved = replace(finding, path=other.source.path)
                other.findings.append(moved)
                other.routed.append(moved)
            else:
                LOG.debug("%s: finding in a file not checked, not reported: %s:%d %s", relative(analysis.source.path),
                          relative(finding.path), finding.span.start_line, finding.code)
                unchecked.setdefault(finding.path, []).append(finding)
        for path, lines in result.linted_elsewhere.items():
            other = _by_real_path(by_path, analyses).get(os.path.realpath(path))
            if other is not None:
                other.linted_through_callers.update(lines)
    return sum(len(settle(path, "" if ignore_noqa else _text(path), findings, codes, config, ignore_noqa=ignore_noqa))
               for path, findings in unchecked.items())


def _by_real_path(by_path: dict[str, FileAnalysis], analyses: list[FileAnalysis]) -> dict[str, FileAnalysis]:
    if not by_path:
        by_path.update((os.path.realpath(a.source.path), a) for a in analyses)
    return by_path


def _same_file(path: str, other: str) -> bool:
    return path == other or os.path.realpath(path) == os.path.realpath(other)


def _text(path: str) -> str:
    """A file's text for its suppression comments; none when it cannot be read."""
    try:
        return read_source(path).text
    except (SourceError, OSError):
        return ""
