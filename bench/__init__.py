"""Benchmarks (run as `python -m bench.<name>`), and what more than one of them needs."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
import contextlib
import os
from pathlib import Path
import sys

from demo.ha import REPO, free_port, wait_for_port


def load() -> str:
    """The machine's load averages (1, 5, 15 min) and CPU count."""
    return f"{Path('/proc/loadavg').read_text().split(' ', 3)[:3]} on {os.cpu_count()} CPUs"


@contextlib.asynccontextmanager
async def hubitat_simulator(
    *flags: str, seconds: float = 10, pause: float = 0.05
) -> AsyncIterator[int]:
    """The Hubitat simulator in its own process (as a real hub is: its work and memory are not
    the measured process's) on a free loopback port, with these command-line flags (see
    `python -m simulators.hubitat --help`); yields the port once it accepts connections
    (waiting at most `seconds`: a large hub takes a while to generate), and stops it after."""
    port = free_port()
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "simulators.hubitat",
        "--port",
        str(port),
        *flags,
        cwd=REPO,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        await wait_for_port(port, seconds=seconds, pause=pause)
        yield port
    finally:
        process.terminate()
        await process.wait()
