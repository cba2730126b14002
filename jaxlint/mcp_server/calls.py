"""What a tool call runs: ``python -m jaxlint ARGS`` in the project folder, with the same Python
(but without that folder on jaxlint's own sys.path: processes.module_command), and what it
printed. The server checks the paths it is given (they must exist inside the project: a fix is
never written outside it) and turns every other refusal of the command line (exit 2: a
configuration error, an unknown rule selector, a bad target, no such function) into a tool error
carrying jaxlint's own message."""
from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass

import anyio
import anyio.to_thread
from anyio.abc import ByteReceiveStream, Process
from mcp.server.mcpserver.exceptions import ToolError

from jaxlint.processes import module_command

STOP_GRACE_SECONDS = 10.0  # SIGTERM first: jaxlint stops its workers before it exits (143)


@dataclass(frozen=True)
class Ran:
    """A finished ``jaxlint`` command: its exit status, stdout, stderr and, when asked for, what it
    wrote to the side channel (``--coverage-report``'s JSON)."""

    status: int
    stdout: str
    stderr: str
    side: str = ""


class Project:
    """The folder the server serves: the commands run there and every path must lie inside it."""

    def __init__(self, root: str) -> None:
        self.root = os.path.realpath(root)

    def path(self, given: str) -> str:
        """``given`` (relative to the project folder, or absolute) as the command line gets it;
        a tool error when it does not exist or leads outside the project (through ``..`` or a
        symbolic link)."""
        if not given.strip():
            raise ToolError("an empty path was given")
        full = os.path.realpath(os.path.join(self.root, given))
        if not os.path.exists(full):
            raise ToolError(f"no such file or folder: {given} (paths are relative to the project folder {self.root})")
        if full != self.root and not full.startswith(self.root + os.sep):
            raise ToolError(f"{given} is outside the project folder {self.root}")
        return os.path.join(".", given) if given.startswith("-") else given  # never read as a flag

    def function(self, given: str) -> str:
        """``PATH::FUNCTION`` with its path checked as ``path`` checks one."""
        path, separator, name = given.partition("::")
        if not separator or not name:
            raise ToolError(f"expected PATH::FUNCTION (e.g. examples/founding.py::my_mapped_function), got {given!r}")
        return f"{self.path(path)}::{name}"


async def run_jaxlint(project: Project, argv: list[str], coverage: bool = False) -> Ran:
    """Run ``jaxlint ARGV`` in the project folder; with ``coverage``, ``check``'s coverage report is
    written to a pipe (``--coverage-report /dev/fd/N``: no file). A cancelled call stops the
    command (SIGTERM, then SIGKILL) with its workers."""
    read_end = write_end = None
    if coverage:
        read_end, write_end = os.pipe()
        argv = [argv[0], f"--coverage-report=/dev/fd/{write_end}", *argv[1:]]
    try:
        process = await anyio.open_process([*module_command("jaxlint"), *argv], cwd=project.root,
                                           stdin=subprocess.DEVNULL, pass_fds=() if write_end is None else (write_end,))
    except BaseException:
        if read_end is not None:
            os.close(read_end)
        raise
    finally:
        if write_end is not None:
            os.close(write_end)  # the child holds its own copy: the pipe ends when it exits
    stdout: list[bytes] = []
    stderr: list[bytes] = []
    side: list[bytes] = []
    try:
        async with anyio.create_task_group() as group:
            assert process.stdout is not None and process.stderr is not None
            group.start_soon(_collect, process.stdout, stdout)
            group.start_soon(_collect, process.stderr, stderr)
            if read_end is not None:
                group.start_soon(_read_pipe, read_end, side)
                read_end = None  # _read_pipe closes it
        status = await process.wait()
    finally:
        with anyio.CancelScope(shield=True):
            await _stop(process)
        if read_end is not None:
            os.close(read_end)
    return Ran(status, *(b"".join(chunks).decode("utf-8", "replace") for chunks in (stdout, stderr, side)))


async def _collect(stream: ByteReceiveStream, chunks: list[bytes]) -> None:
    async for chunk in stream:
        chunks.append(chunk)


async def _read_pipe(read_end: int, chunks: list[bytes]) -> None:
    def read_all() -> bytes:
        with open(read_end, "rb") as pipe:
            return pipe.read()

    # Left to finish on its own when the call is cancelled: it ends once the command has exited.
    chunks.append(await anyio.to_thread.run_sync(read_all, abandon_on_cancel=True))


async def _stop(process: Process) -> None:
    if process.returncode is None:
        process.terminate()
        with anyio.move_on_after(STOP_GRACE_SECONDS):
            await process.wait()
        if process.returncode is None:
            process.kill()
            await process.wait()
    await process.aclose()


def refused(ran: Ran) -> ToolError:
    """The tool error for a command that exited with neither 0 nor 1: jaxlint's message."""
    said = ran.stderr.strip() or ran.stdout.strip() or "no message"
    return ToolError(f"jaxlint exited with status {ran.status}: {said}")
