"""`jaxlint mcp` end to end: the server runs as a real subprocess (`python -m jaxlint mcp`) and the
tests talk to it with the official SDK's own client (stdio_client + ClientSession). What its tools
return is compared with what the command line prints in the same project folder."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator

import pytest

pytest.importorskip("mcp", reason="the MCP server needs the official SDK: pip install -e '.[mcp]'")

import anyio  # noqa: E402  (after the skip: anyio comes with mcp)
from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

from jaxlint.processes import module_command  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "examples" / "founding.py"  # what the README's first command checks
FIXED_LINES = ("    x, y = jax.vmap(blackbox_function, in_axes=(None, 0), out_axes=(None, 0))(x, y)\n"
               "    return x, y\n")
CALL_SECONDS = 300
ENVIRONMENT = {**os.environ, "COLUMNS": "100"}  # explain wraps at the terminal's width: one width for both


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project folder holding a copy of the bundled example (the server may write there)."""
    (tmp_path / "examples").mkdir()
    shutil.copy(EXAMPLE, tmp_path / "examples" / "founding.py")
    return tmp_path


@asynccontextmanager
async def connected(project: Path) -> AsyncIterator[ClientSession]:
    """An initialized session with `jaxlint mcp` started in ``project`` (as the console script starts
    it: the folder is not on jaxlint's own sys.path, which `python -m` would put there)."""
    command = module_command("jaxlint")
    server = StdioServerParameters(command=command[0], args=[*command[1:], "mcp"], cwd=str(project),
                                   env=ENVIRONMENT)
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write, read_timeout_seconds=CALL_SECONDS) as session:
            await session.initialize()
            yield session


def talk(project: Path, conversation: Any) -> Any:
    """Run ``conversation(session)`` against a fresh server; its return value."""
    async def main() -> Any:
        async with connected(project) as session:
            return await conversation(session)

    return anyio.run(main)


def cli(project: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "jaxlint", *args], cwd=project, capture_output=True, text=True,
                          timeout=CALL_SECONDS, env=ENVIRONMENT)


def text_of(result: Any) -> str:
    return "".join(part.text for part in result.content)


def test_initialize_lists_the_tools_and_a_resource_per_rule(project: Path) -> None:
    from jaxlint.rules import rule_infos

    async def conversation(session: ClientSession) -> Any:
        tools = await session.list_tools()
        resources = await session.list_resources()
        page = await session.read_resource("jaxlint://rules/JX101")
        return tools, resources, page

    tools, resources, page = talk(project, conversation)
    assert {tool.name for tool in tools.tools} == {"check", "fix", "explain", "rule"}
    fix = next(tool for tool in tools.tools if tool.name == "fix")
    assert fix.input_schema["properties"]["write"]["default"] is False
    assert sorted(str(r.uri) for r in resources.resources) == \
        sorted(f"jaxlint://rules/{rule.code}" for rule in rule_infos())
    assert page.contents[0].text == (REPO / "rules" / "JX101.md").read_text(encoding="utf-8")


def test_check_returns_the_json_format_with_summary_and_coverage(project: Path) -> None:
    result = talk(project, lambda session: session.call_tool("check", {"paths": ["examples"]}))
    assert not result.is_error, text_of(result)
    answer = result.structured_content
    [finding] = answer["findings"]
    assert (finding["code"], finding["location"], finding["fix"]["applicability"]) == \
        ("JX101", {"row": 13, "column": 12}, "safe")
    assert answer["exit_status"] == 1
    assert answer["summary"].endswith("1 finding, 1 fixable with --fix.")
    assert answer["not_linted"] == []
    assert answer["coverage"] == {"targets": 1, "traced": 1, "jax_functions": 1, "linted": 1, "dropped": []}
    run = cli(project, "check", "--output-format", "json", "examples")
    assert run.returncode == 1, run.stderr
    assert answer["findings"] == json.loads(run.stdout)


def test_a_check_imports_nothing_of_jaxlints_own_from_the_project_folder(project: Path, tmp_path_factory: Any) -> None:
    """The server runs jaxlint in the project folder: `python -m jaxlint` would put the folder first
    on jaxlint's own sys.path, and a `typing.py` or `json.py` there would run in jaxlint's process."""
    ran = tmp_path_factory.mktemp("marker") / "RAN"
    for name in ("typing", "dataclasses", "json", "runpy"):
        (project / f"{name}.py").write_text(f"open({str(ran)!r}, 'a').write({name!r})\n")
    result = talk(project, lambda session: session.call_tool("check", {"paths": ["examples"]}))
    assert not result.is_error, text_of(result)
    assert [f["code"] for f in result.structured_content["findings"]] == ["JX101"]
    assert not ran.exists()


def test_check_names_what_it_did_not_lint(project: Path) -> None:
    (project / "untraced.py").write_text("import jax\n\n\n@jax.jit\ndef step(state, batch):\n"
                                         "    return state.params * state + batch.mean()\n")  # an object and an array
    result = talk(project, lambda session: session.call_tool(
        "check", {"paths": ["untraced.py"], "select": ["JX1"]}))
    assert not result.is_error, text_of(result)
    [untraced] = result.structured_content["not_linted"]
    assert (untraced["target"], untraced["line"]) == ("step", 5)
    assert untraced["hint"].startswith("# jaxlint: args ")
    assert result.structured_content["coverage"]["linted"] == 0


@pytest.mark.slow  # three verifications of the fix, each in fresh workers
def test_fix_shows_the_diff_check_diff_prints_and_writes_only_when_asked(project: Path) -> None:
    original = (project / "examples" / "founding.py").read_text()

    async def conversation(session: ClientSession) -> Any:
        shown = await session.call_tool("fix", {"paths": ["examples/founding.py"]})
        unchanged = (project / "examples" / "founding.py").read_text()
        written = await session.call_tool("fix", {"paths": ["examples/founding.py"], "write": True})
        return shown, unchanged, written

    expected_diff = cli(project, "check", "--diff", "examples/founding.py").stdout
    shown, unchanged, written = talk(project, conversation)
    assert not shown.is_error, text_of(shown)
    assert shown.structured_content["diff"] == expected_diff
    assert "+" + FIXED_LINES.splitlines()[0] in expected_diff.splitlines()
    assert shown.structured_content["written"] is False and unchanged == original
    assert not written.is_error, text_of(written)
    assert written.structured_content["diff"] == expected_diff and written.structured_content["written"] is True
    assert written.structured_content["fixed"]["findings"] == []
    assert written.structured_content["fixed"]["exit_status"] == 0
    assert (project / "examples" / "founding.py").read_text() == original.replace(
        "    x, y = jax.vmap(blackbox_function, in_axes=(None, 0))(x, y)\n    return x[0], y\n", FIXED_LINES)


@pytest.mark.slow  # four explains, each importing JAX and compiling
def test_explain_and_rule_print_what_the_command_line_prints(project: Path) -> None:
    function = "examples/founding.py::my_mapped_function"

    async def conversation(session: ClientSession) -> Any:
        return [await session.call_tool("explain", {"function": function}),
                await session.call_tool("explain", {"function": function, "full": True}),
                await session.call_tool("rule", {"rule": "JX101"}),
                await session.call_tool("rule", {"rule": "vmap-unbatched-output"})]

    explained, full, by_code, by_name = talk(project, conversation)
    assert not explained.is_error, text_of(explained)
    assert text_of(explained) == cli(project, "explain", function).stdout
    assert text_of(full) == cli(project, "explain", "--full", function).stdout
    assert "1. Source -> jaxpr" in text_of(full)
    page = cli(project, "rule", "JX101").stdout
    assert page.startswith("vmap-unbatched-output (JX101)")
    assert text_of(by_code) == page and text_of(by_name) == page


def test_bad_arguments_are_tool_errors_and_the_server_stays_alive(project: Path, tmp_path_factory: Any) -> None:
    outside = tmp_path_factory.mktemp("outside") / "elsewhere.py"
    outside.write_text(EXAMPLE.read_text())
    (project / "link.py").symlink_to(outside)

    async def conversation(session: ClientSession) -> Any:
        calls = [("check", {"paths": ["missing.py"]}), ("check", {"paths": ["../"]}),
                 ("fix", {"paths": ["link.py"], "write": True}),
                 ("check", {"paths": ["examples"], "select": ["JX999"]}),
                 ("check", {"paths": ["examples"], "target": "tpu-v9"}),
                 ("explain", {"function": "examples/founding.py::nothing_here"}),
                 ("explain", {"function": "examples/founding.py"}),
                 ("rule", {"rule": "JX999"}), ("check", {"paths": "not a list"}),
                 ("check", {"paths": ["examples"], "select": ["JX1"]})]
        return [await session.call_tool(name, arguments) for name, arguments in calls]

    *refused, fine = talk(project, conversation)
    messages = [text_of(result) for result in refused]
    assert all(result.is_error for result in refused), messages
    assert "no such file or folder: missing.py" in messages[0]
    assert "outside the project folder" in messages[1] and "outside the project folder" in messages[2]
    assert "unknown rule selector `JX999`" in messages[3]
    assert "unknown target 'tpu-v9'" in messages[4]
    assert "no function 'nothing_here'" in messages[5]
    assert "PATH::FUNCTION" in messages[6]
    assert "unknown rule 'JX999'" in messages[7]
    assert outside.read_text() == EXAMPLE.read_text()  # nothing written outside the project
    assert not fine.is_error and [f["code"] for f in fine.structured_content["findings"]] == ["JX101"]


def test_a_missing_project_folder_is_a_usage_error(tmp_path: Path) -> None:
    run = cli(tmp_path, "mcp", "--project", "no-such-folder")
    assert run.returncode == 2
    assert "no such folder: no-such-folder" in run.stderr


def jaxlint_processes_in(folder: Path) -> list[str]:
    """The command lines of the processes working in ``folder`` other than the MCP server."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and os.path.realpath(entry / "cwd") == os.path.realpath(folder):
                command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
                if command and not command.endswith(" mcp"):  # the server (module_command("jaxlint") mcp)
                    found.append(command)
        except OSError:  # gone meanwhile, or not ours to read
            continue
    return found


@pytest.mark.slow  # waits for the call to time out, then for the check to stop
@pytest.mark.skipif(not Path("/proc/self/cwd").exists(), reason="reads the processes' folders from /proc")
def test_a_cancelled_call_stops_its_check_and_the_server_goes_on(project: Path) -> None:
    (project / "sleepy.py").write_text("import time\n\nimport jax\n\ntime.sleep(300)\n\n\n@jax.jit\n"
                                       "def f(x):\n    return x + 1\n\n\nf.lower(1.0)\n")

    seen: set[str] = set()  # the processes the call started: the check and its worker

    async def conversation(session: ClientSession) -> Any:
        async def watch() -> None:
            while True:
                seen.update(jaxlint_processes_in(project))
                await anyio.sleep(0.2)

        async with anyio.create_task_group() as group:
            group.start_soon(watch)
            with pytest.raises(Exception, match="[Tt]imed out|[Tt]imeout"):
                await session.call_tool("check", {"paths": ["sleepy.py"]}, read_timeout_seconds=8)
            group.cancel_scope.cancel()
        left = jaxlint_processes_in(project)
        for _ in range(150):  # the check gets SIGTERM, stops its worker and exits
            if not left:
                break
            await anyio.sleep(0.2)
            left = jaxlint_processes_in(project)
        return left, await session.call_tool("rule", {"rule": "JX101"})

    left, after = talk(project, conversation)
    # The check the call started: module_command("jaxlint") (python -c "...run_module('jaxlint', ...)") check ...
    assert any("run_module('jaxlint'," in command and " check " in command for command in seen), seen
    assert left == []
    assert not after.is_error and text_of(after).startswith("vmap-unbatched-output (JX101)")
