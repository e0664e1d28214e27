"""One believable home across the three simulated backends, served on loopback."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
import socket

from aiohttp import web

from simulators import DATA_DIR
from simulators.homecast import create_app as homecast_app
from simulators.hubitat import HUB, create_app as hubitat_app, mcp_path
from simulators.robine_wake import create_app as robine_app

HUBITAT_TOKEN = "demo-hubitat-token"
HOMECAST_TOKEN = "hc_demo_token"
ROBINE_PASSWORD = "wake-up"
# Homecast as a real account answers: a two-home capture shaped like the server's get_state
# (slug names, virtual accessories as type "other", raw characteristic names), served by the
# simulator of the Homecast Mac app's community server.
HOMECAST_STATE = DATA_DIR / "homecast_real.json"


def free_port() -> int:
    """A free TCP port on loopback."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass(frozen=True)
class DemoHome:
    """Where each simulated backend listens and how to log in to it."""

    hubitat_url: str
    homecast_url: str
    homecast_token: str
    robine_url: str
    robine_password: str


async def _serve(app: web.Application, port: int | None) -> tuple[web.AppRunner, int]:
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    port = port or free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    return runner, port


@asynccontextmanager
async def demo_home(
    activity_every: float = 20.0, ports: tuple[int, int, int] | None = None
) -> AsyncIterator[DemoHome]:
    """Start the three simulators; they stop when the context ends.

    `ports` (Hubitat, Homecast, Robine Wake) fixes where they listen, so entries a kept demo
    configuration has still reach them; by default free ports.
    """
    hub_at, hc_at, rw_at = ports or (None, None, None)
    # The owner has switched on the app's custom rule engine, as Hubitat live updates ask.
    hubitat = hubitat_app(
        devices=40, seed=7, token=HUBITAT_TOKEN, hub_name="Home Hub", custom_rule_engine=True
    )
    homecast = homecast_app(state_file=HOMECAST_STATE, community=True, token=HOMECAST_TOKEN)
    robine = robine_app(password=ROBINE_PASSWORD, device_name="Bedroom Robine Wake")
    runners: list[web.AppRunner] = []
    activity: asyncio.Task[None] | None = None
    try:
        hub_runner, hub_port = await _serve(hubitat, hub_at)
        runners.append(hub_runner)
        hc_runner, hc_port = await _serve(homecast, hc_at)
        runners.append(hc_runner)
        rw_runner, rw_port = await _serve(robine, rw_at)
        runners.append(rw_runner)

        async def _liven_up() -> None:
            # A house where nothing ever changes looks broken: now and then a sensor trips.
            while True:
                await asyncio.sleep(activity_every)
                hubitat[HUB].random_activity(1)

        activity = asyncio.create_task(_liven_up())
        yield DemoHome(
            hubitat_url=f"http://127.0.0.1:{hub_port}{mcp_path()}?access_token={HUBITAT_TOKEN}",
            homecast_url=f"http://127.0.0.1:{hc_port}/mcp",
            homecast_token=HOMECAST_TOKEN,
            robine_url=f"http://127.0.0.1:{rw_port}/mcp",
            robine_password=ROBINE_PASSWORD,
        )
    finally:
        if activity is not None:
            activity.cancel()
        for runner in reversed(runners):
            await runner.cleanup()
