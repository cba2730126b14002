"""Benchmark: `jaxlint server`, time from a save to its diagnostics (run by hand; needs pytest-lsp).

    python bench/bench_server.py [--repeat 10]

The server is started as an editor starts it (stdio); a module with the founding pattern is
opened, then saved `--repeat` times, each time with a changed constant (so the cache cannot
answer and the warm worker imports and traces the module), and once unchanged (the cache
answers). Prints the median and range of each, beside `jaxlint check` of the same file in a
fresh process (cold: JAX imported each time) and ruff's uncached check of it.
"""
from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types
from pytest_lsp import ClientServerConfig, client_capabilities

REPO = Path(__file__).resolve().parent.parent
MODULE = (REPO / "examples" / "founding.py").read_text().replace(
    "print(my_mapped_function.lower(x, y).compile().as_text())", "my_mapped_function(x, y)")


async def diagnostics(client, uri: str) -> list:
    while True:
        params = await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        if params.uri == uri:
            return list(params.diagnostics)


async def measure(path: Path, repeat: int) -> dict[str, list[float]]:
    client = await ClientServerConfig(server_command=[sys.executable, "-m", "jaxlint", "server"]).start()
    # The editor trusts its workspace, the module's folder: the server runs code only in trusted folders.
    await client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("neovim"), root_uri=path.parent.as_uri(),
        initialization_options={"trusted": True}))
    uri = path.as_uri()
    started = time.perf_counter()
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(
        uri=uri, language_id="python", version=1, text=path.read_text())))
    await diagnostics(client, uri)
    times: dict[str, list[float]] = {"open (worker starting)": [time.perf_counter() - started],
                                     "save, changed": [], "save, unchanged": []}
    for i in range(repeat):
        path.write_text(MODULE.replace("x = x + 1", f"x = x + {i + 2}"))
        for name in ("save, changed", "save, unchanged"):
            started = time.perf_counter()
            client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri)))
            found = await diagnostics(client, uri)
            times[name].append(time.perf_counter() - started)
            assert [d.code for d in found] == ["JX101"], found
    await client.shutdown_session()
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=10)
    repeat = parser.parse_args().repeat
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "jaxlint.toml").write_text("")
        path = root / "founding.py"
        path.write_text(MODULE)
        times = asyncio.run(measure(path, repeat))
        cold = []
        for _ in range(min(repeat, 5)):
            started = time.perf_counter()
            subprocess.run([sys.executable, "-m", "jaxlint", "check", "--no-cache", str(path)], cwd=root,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            cold.append(time.perf_counter() - started)
        times["jaxlint check --no-cache (fresh process)"] = cold
        ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
        if Path(ruff).exists():
            times["ruff check --no-cache (the same file)"] = []
            for _ in range(min(repeat, 5)):
                started = time.perf_counter()
                subprocess.run([ruff, "check", "--no-cache", "--select", "E,F,W", "-q", str(path)], cwd=root,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                times["ruff check --no-cache (the same file)"].append(time.perf_counter() - started)
    for name, values in times.items():
        print(f"  {name:<42} median {statistics.median(values):5.2f} s  (min {min(values):.2f}, max {max(values):.2f})")


if __name__ == "__main__":
    main()
