"""The package's layout holds: no import cycle anywhere, and each folder imports only what its
place in the pipeline allows (a rule never reaches into the cli, config, engine or worker).

The import graph is read from the source with ``ast``: every ``import`` counts, at module level
or inside a function (a lazy import still ties the two modules); type-only imports under
``if TYPE_CHECKING:`` count for cycles, not for what a folder may import. Importing ``a.b.c``
also runs ``a/b/__init__.py``: that edge counts too.
"""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "jaxlint"


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _type_only(tree: ast.Module) -> set[int]:
    """ids of the nodes under ``if TYPE_CHECKING:``."""
    hidden: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            hidden |= {id(n) for statement in node.body for n in ast.walk(statement)}
    return hidden


def _packages_of(name: str) -> set[str]:
    parts = name.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts))}


def import_graph(type_only: bool = False) -> dict[str, set[str]]:
    """Module -> the package's modules it imports; ``type_only``: with the imports under
    ``if TYPE_CHECKING:`` (no run-time edge, but a cycle of names all the same)."""
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text())
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        hidden = set() if type_only else _type_only(tree)
        imported: set[str] = set()
        for node in ast.walk(tree):
            if id(node) in hidden:
                continue
            if isinstance(node, ast.Import):
                imported |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(parts + ([node.module] if node.module else []))
                imported |= {f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names}
        edges = set(imported)
        for target in imported:
            # ``import a.b.c`` runs a/__init__ and a/b/__init__ first (already running when they
            # are the importing module's own packages)
            parts = target.split(".")
            edges |= {".".join(parts[:i]) for i in range(1, len(parts))} - _packages_of(name)
        graph[name] = {e for e in edges if e in modules and e != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in sorted(graph[node]):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_package_has_no_import_cycle() -> None:
    assert cycles(import_graph()) == []


def test_the_package_has_no_import_cycle_through_type_only_imports() -> None:
    """A type-only import is still a dependency: two modules that name each other's types are
    one module in two files (and a lazy or type-only edge turns into a real one easily)."""
    assert cycles(import_graph(type_only=True)) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


# Folder -> folders it must never import. The parent's stages never import the worker's JAX
# code; rules see only their context; plain data imports nothing of the pipeline.
FORBIDDEN = {
    "jaxlint.rules": ("jaxlint.cli", "jaxlint.config", "jaxlint.engine", "jaxlint.worker", "jaxlint.report",
                      "jaxlint.explain", "jaxlint.ir.build", "jaxlint.jaxapi"),
    "jaxlint.ir": ("jaxlint.cli", "jaxlint.config", "jaxlint.engine", "jaxlint.worker", "jaxlint.rules",
                   "jaxlint.report", "jaxlint.explain", "jaxlint.scan"),
    "jaxlint.scan": ("jaxlint.cli", "jaxlint.engine", "jaxlint.worker", "jaxlint.rules", "jaxlint.report",
                     "jaxlint.explain", "jaxlint.ir", "jaxlint.jaxapi"),
    "jaxlint.config": ("jaxlint.cli", "jaxlint.engine", "jaxlint.worker", "jaxlint.report", "jaxlint.explain",
                       "jaxlint.ir", "jaxlint.jaxapi"),
    "jaxlint.engine": ("jaxlint.cli", "jaxlint.worker", "jaxlint.report", "jaxlint.explain", "jaxlint.ir",
                       "jaxlint.jaxapi"),
    "jaxlint.fixes": ("jaxlint.cli", "jaxlint.config", "jaxlint.engine", "jaxlint.worker", "jaxlint.rules",
                      "jaxlint.report", "jaxlint.explain", "jaxlint.ir", "jaxlint.jaxapi"),
    "jaxlint.worker": ("jaxlint.cli", "jaxlint.engine", "jaxlint.report", "jaxlint.explain"),
    # The analysis core the drivers share (the worker, jaxlint.lint, pytest --jaxlint) is no driver.
    "jaxlint.analysis": ("jaxlint.cli", "jaxlint.config", "jaxlint.engine", "jaxlint.worker", "jaxlint.report",
                         "jaxlint.explain", "jaxlint.drivers", "jaxlint.pytest_plugin", "jaxlint.server",
                         "jaxlint.api"),
    # The in-process drivers take the analysis core from jaxlint.analysis, not from the worker's module;
    # the pytest plugin is hooks over them, and they know nothing of it.
    "jaxlint.drivers": ("jaxlint.cli", "jaxlint.explain", "jaxlint.worker.analyze", "jaxlint.pytest_plugin"),
    "jaxlint.pytest_plugin": ("jaxlint.cli", "jaxlint.explain", "jaxlint.worker.analyze"),
    "jaxlint.api": ("jaxlint.cli", "jaxlint.explain", "jaxlint.worker.analyze"),
    # The editor server is a parent like the cli: the worker's code runs in the worker only.
    "jaxlint.server": ("jaxlint.cli", "jaxlint.worker", "jaxlint.explain", "jaxlint.ir", "jaxlint.jaxapi"),
    # The MCP server runs the command line as a subprocess: the pipeline never runs in its process.
    "jaxlint.mcp_server": ("jaxlint.engine", "jaxlint.worker", "jaxlint.explain", "jaxlint.ir", "jaxlint.jaxapi",
                           "jaxlint.analysis", "jaxlint.server", "jaxlint.drivers", "jaxlint.pytest_plugin", "jaxlint.api"),
    # JAX's API answers the IR and the drivers; it knows nothing of what asks it.
    "jaxlint.jaxapi": ("jaxlint.cli", "jaxlint.config", "jaxlint.engine", "jaxlint.worker", "jaxlint.rules",
                       "jaxlint.report", "jaxlint.explain", "jaxlint.scan", "jaxlint.drivers", "jaxlint.pytest_plugin",
                       "jaxlint.server", "jaxlint.api", "jaxlint.analysis"),
    "jaxlint.model": ("jaxlint.",),
    "jaxlint.text": ("jaxlint.cli", "jaxlint.config", "jaxlint.engine", "jaxlint.worker", "jaxlint.rules",
                     "jaxlint.report", "jaxlint.explain", "jaxlint.ir", "jaxlint.jaxapi", "jaxlint.scan",
                     "jaxlint.fixes"),
}


def test_each_folder_imports_only_what_its_stage_allows() -> None:
    wrong = []
    for module, imported in import_graph().items():
        for folder, forbidden in FORBIDDEN.items():
            if module == folder or module.startswith(folder + "."):
                wrong += [f"{module} -> {target}" for target in sorted(imported)
                          if any(target == f or target.startswith(f if f.endswith(".") else f + ".") for f in forbidden)
                          and target != "jaxlint.model"]
    assert wrong == []


# Rules ask about source through the source index (``ctx.index``) only. What ``jaxlint.fixes`` and
# ``jaxlint.scan.index`` offer that takes the source text (a ``source`` parameter) and builds no
# fix (no Fix or Edit in its return annotation) is a text-keyed query: a rule must not use it.
# Fix builders (``-> Fix``, ``-> Edit``) and plain questions about a node stay allowed.
QUERY_HOMES = ("jaxlint.fixes", "jaxlint.scan.index")


def _functions(module: str) -> dict[str, ast.FunctionDef]:
    path = _modules().get(module)
    if path is None:
        return {}
    tree = ast.parse(path.read_text())
    return {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}


def _text_keyed_query(function: ast.FunctionDef) -> bool:
    parameters = [a.arg for a in (*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs)]
    returns = ast.unparse(function.returns) if function.returns is not None else ""
    return "source" in parameters and "Fix" not in returns and "Edit" not in returns


def rule_source_queries() -> list[str]:
    """``rule module -> module.name`` for each text-keyed query helper a rule module uses."""
    modules = _modules()
    found = []
    for name, path in sorted(modules.items()):
        if not name.startswith("jaxlint.rules"):
            continue
        tree = ast.parse(path.read_text())
        used: set[tuple[str, str]] = set()
        aliases: dict[str, str] = {}  # local name -> a module of QUERY_HOMES
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    if f"{node.module}.{alias.name}" in modules:
                        aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
                    else:
                        used.add((node.module, alias.name))
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        aliases[alias.asname] = alias.name
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
                used.add((aliases[node.value.id], node.attr))
        for module, attribute in sorted(used):
            if module.startswith(QUERY_HOMES):
                function = _functions(module).get(attribute)
                if function is not None and _text_keyed_query(function):
                    found.append(f"{name} -> {module}.{attribute}")
    return found


def test_rules_ask_about_source_through_the_index_only() -> None:
    assert rule_source_queries() == []


def test_the_query_check_sees_a_text_keyed_helper() -> None:
    helper = ast.parse("def node_text(source: str, node: ast.AST) -> str: ...").body[0]
    builder = ast.parse("def guard_edit(source: str, where: ast.Call) -> Edit: ...").body[0]
    assert _text_keyed_query(helper) and not _text_keyed_query(builder)  # type: ignore[arg-type]


# What a primitive is belongs to the primitive table (ir/primitives.py): a module asks it
# (``primitives.LOOPS``) instead of spelling the loop primitives again. The two modules another
# change of issue 44 holds still spell them; they take LOOPS when it lands.
LOOP_NAMES = {"scan", "while"}
SPELLED_ELSEWHERE_FOR_NOW: set[str] = set()


def loop_name_lists(tree: ast.AST) -> list[int]:
    """Lines of the tuples, lists, sets and call arguments made of exactly the loop primitives' names."""
    found = []
    for node in ast.walk(tree):
        groups = [node.elts] if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else \
            [node.args] if isinstance(node, ast.Call) else []
        for group in groups:
            names = [e.value for e in group if isinstance(e, ast.Constant) and isinstance(e.value, str)]
            if len(names) == len(group) and set(names) == LOOP_NAMES:
                found.append(node.lineno)
    return found


def test_the_loop_primitives_are_named_in_the_primitive_table_only() -> None:
    spelled = [f"{name}:{line}" for name, path in sorted(_modules().items())
               if name != "jaxlint.ir.primitives" and name not in SPELLED_ELSEWHERE_FOR_NOW
               for line in loop_name_lists(ast.parse(path.read_text()))]
    assert spelled == []


def test_the_loop_name_check_sees_each_spelling() -> None:
    tree = ast.parse('a = ("scan", "while")\nb = {"while", "scan"}\nops_here("scan", "while")\nc = ("scan", "cond")\n')
    assert loop_name_lists(tree) == [1, 2, 3]


# One splitter of bracketed text at its top-level separators: jaxlint.text.split_outside_brackets
# (and top_level_items). A function elsewhere that counts bracket depth and compares a char with
# "," is another one. config/globs.py counts braces to translate a glob's {a,b} alternation, not
# to split; config/flags.py is held by another change of issue 44.
SPLITTER_HOME = "jaxlint.text"
SPLITTING_ELSEWHERE_FOR_NOW = {"jaxlint.config.flags", "jaxlint.config.globs"}


def comma_splitters(tree: ast.AST) -> list[str]:
    """Functions that keep a ``depth`` and compare a char with ``","``."""
    found = []
    for function in ast.walk(tree):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        names = {n.id for n in ast.walk(function) if isinstance(n, ast.Name)}
        commas = any(isinstance(n, ast.Compare) and any(isinstance(c, ast.Constant) and c.value == ","
                                                        for c in [n.left, *n.comparators])
                     for n in ast.walk(function))
        if commas and any("depth" in name for name in names):
            found.append(function.name)
    return found


def test_one_bracket_aware_splitter() -> None:
    found = [f"{name}.{function}" for name, path in sorted(_modules().items())
             if name != SPLITTER_HOME and name not in SPLITTING_ELSEWHERE_FOR_NOW
             for function in comma_splitters(ast.parse(path.read_text()))]
    assert found == []


def test_the_splitter_check_sees_a_splitter() -> None:
    tree = ast.parse("def split(text):\n    depth = 0\n    for ch in text:\n"
                     "        depth += ch in '(['\n        if ch == ',' and depth == 0:\n            pass\n")
    assert comma_splitters(tree) == ["split"]


# Every difference between JAX versions lives in jaxlint/jaxapi/: elsewhere no module compares
# JAX_VERSION or reads jax.__version__ (a rule reads a JAX-free fact of the program instead).
VERSION_HOME = "jaxlint.jaxapi"


def version_branches(tree: ast.AST) -> list[int]:
    """Lines that name ``JAX_VERSION`` or read ``jax.__version__``."""
    return sorted(node.lineno for node in ast.walk(tree)
               if (isinstance(node, ast.Name) and node.id == "JAX_VERSION")
               or (isinstance(node, ast.alias) and node.name == "JAX_VERSION")
               or (isinstance(node, ast.Attribute) and node.attr == "__version__" and ast.unparse(node.value) == "jax"))


def test_version_branches_live_in_jaxapi_only() -> None:
    found = [f"{name}:{line}" for name, path in sorted(_modules().items())
             if name != VERSION_HOME and not name.startswith(VERSION_HOME + ".")
             for line in version_branches(ast.parse(path.read_text()))]
    assert found == []


def test_the_version_check_sees_a_branch() -> None:
    tree = ast.parse("from jaxlint.jaxapi.version import JAX_VERSION\nif JAX_VERSION < (0, 7):\n    pass\n"
                     "import jax\nv = jax.__version__\n")
    assert version_branches(tree) == [1, 2, 5]


def test_the_log_parsers_import_no_jax() -> None:
    """The run-time watcher reads JAX's log records with jaxapi/logs.py before the project's code
    imported JAX: importing it must not import JAX."""
    code = ("import sys, jaxlint.jaxapi.logs as logs\n"
            "assert logs.parse_compile('Compiling f with global shapes and types (). Argument mapping: (a, (b, c)).')"
            " == ('f', ('a', '(b, c)')), logs.parse_compile('')\n"
            "print(sorted(m for m in sys.modules if m == 'jax' or m.startswith('jax.')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


# Two modules may share a basename only for a reason, said in both docstrings: each names the other
# module's path (``engine/check.py``). ``__init__.py`` and ``__main__.py`` are names Python gives;
# a rule is one file per code under rules/ and is named by its code.
def repeated_basenames(package: Path) -> list[str]:
    """``path -> other path`` for each module whose basename repeats and whose docstring does not
    name the other module's path (relative to ``package``; a top-level one as ``jaxlint/name.py``)."""
    by_name: dict[str, list[Path]] = {}
    for path in sorted(package.rglob("*.py")):
        relative = path.relative_to(package)
        if path.name not in ("__init__.py", "__main__.py") and relative.parts[0] != "rules":
            by_name.setdefault(path.name, []).append(relative)
    unexplained = []
    for paths in by_name.values():
        for path in paths:
            docstring = ast.get_docstring(ast.parse((package / path).read_text())) or ""
            for other in paths:
                named = f"{package.name}/{other.as_posix()}" if len(other.parts) == 1 else other.as_posix()
                if other != path and named not in docstring:
                    unexplained.append(f"{path.as_posix()} -> {other.as_posix()}")
    return unexplained


def test_a_repeated_basename_is_explained_in_both_docstrings() -> None:
    assert repeated_basenames(PACKAGE) == []


def test_the_basename_check_sees_an_unexplained_repeat(tmp_path: Path) -> None:
    package = tmp_path / "jaxlint"
    for folder, docstring in [("cli", "The check command; engine/check.py is the pipeline."), ("engine", "Checks.")]:
        (package / folder).mkdir(parents=True)
        (package / folder / "check.py").write_text(f'"""{docstring}"""\n')
    (package / "text.py").write_text('"""Text."""\n')
    (package / "explain").mkdir()
    (package / "explain" / "text.py").write_text('"""The terminal; jaxlint/text.py is source text."""\n')
    assert repeated_basenames(package) == ["engine/check.py -> cli/check.py", "text.py -> explain/text.py"]
