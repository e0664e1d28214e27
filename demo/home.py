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
from simulators.hubitat.devices import Device
from simulators.hubitat.hub import Hub
from simulators.robine_wake import create_app as robine_app

HUBITAT_TOKEN = "demo-hubitat-token"
HOMECAST_TOKEN = "hc_demo_token"
ROBINE_PASSWORD = "wake-up"
# Homecast as a real account answers: a two-home capture shaped like the server's get_state
# (slug names, virtual accessories as type "other", raw characteristic names), served by the
# simulator of the Homecast Mac app's community server.
HOMECAST_STATE = DATA_DIR / "homecast_real.json"
# What a person calls the demo hub's devices, by (room, label as generated). The simulator keeps
# what real hubs accumulate (a dimmer never labelled, so shown by its driver's name; twin
# labels; a label repeating its room), which its tests need and a demo home does not. No label
# starts with its room: Home Assistant 2026.6 and later begin a new entity id with the device's
# area (the room), which would then read twice (`light.kitchen_kitchen_color_bulb`); the room
# still finds a device ("kitchen motion sensor"), as the gateway matches an area's words too.
DEMO_LABELS: dict[tuple[str | None, str], str] = {
    ("Basement", "Basement Fan"): "Exhaust Fan",
    ("Basement", "Basement Motion Sensor"): "Stairs Motion Sensor",
    ("Basement", "Basement Outlet"): "Power Strip",
    ("Basement", "Basement Outlet Outlet 1"): "Dehumidifier",
    ("Basement", "Basement Outlet Outlet 2"): "Radio",
    ("Bathroom", "Bathroom Bulb"): "Mirror Light",
    ("Bathroom", "Bathroom Climate Sensor"): "Shower Sensor",
    ("Bathroom", "Bathroom Dimmer"): "Ceiling Light",
    ("Bathroom", "Bathroom Shade"): "Window Shade",
    ("Bathroom", "Lamp"): "Vanity Light",
    ("Front Porch", "Front Porch Smoke Detector"): "CO Detector",
    ("Front Porch", "Front Porch Switch"): "String Lights",
    ("Front Porch", "Lamp"): "Lantern",
    ("Garage", ""): "Workbench Light",
    ("Garage", "Garage Garage Door"): "Overhead Door",
    ("Garage", "Garage Motion Sensor"): "Workbench Motion Sensor",
    ("Guest Bedroom", "Guest Bedroom Bulb"): "Nightstand Lamp",
    ("Guest Bedroom", "Guest Bedroom Color Bulb"): "Reading Lamp",
    ("Guest Bedroom", "Guest Bedroom Motion Sensor"): "Bedside Motion Sensor",
    ("Hallway", "Hallway Dimmer"): "Sconces",
    ("Hallway", "Hallway Door Sensor"): "Closet Door Sensor",
    ("Kitchen", "Kitchen Color Bulb"): "Pendant Light",
    ("Kitchen", "Kitchen Door Sensor"): "Back Door Sensor",
    ("Kitchen", "Kitchen Door Sensor 2"): "Pantry Door Sensor",
    ("Kitchen", "Kitchen Motion Sensor"): "Counter Motion Sensor",
    ("Kitchen", "Kitchen Water Valve"): "Sink Valve",
    ("Living Room", "Living Room Bulb"): "Floor Lamp",
    ("Living Room", "Living Room Color Bulb"): "TV Backlight",
    ("Living Room", "Living Room Leak Sensor"): "Leak Sensor",
    ("Living Room", "Living Room Outlet"): "TV Outlet",
    ("Living Room", "Living Room Water Valve"): "Aquarium Valve",
    ("Master Bedroom", "Master Bedroom Dimmer"): "Wall Dimmer",
    ("Master Bedroom", "Master Bedroom Light Sensor"): "Window Light Sensor",
    ("Master Bedroom", "Master Bedroom Lock"): "Balcony Lock",
    ("Master Bedroom", "Master Bedroom Motion Sensor"): "Doorway Motion Sensor",
    ("Master Bedroom", "Master Bedroom Remote"): "Bedside Remote",
    ("Office", "Office Door Sensor"): "Entry Door Sensor",
    ("Office", "Office Thermostat"): "Thermostat",
    (None, "Fan"): "Attic Fan",
    (None, "Phone"): "Alex's Phone",
}


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


def demo_hubitat() -> web.Application:
    """The demo's Hubitat simulator: 40 devices as a person labelled them, and the custom
    rule engine on, as Hubitat live updates ask."""
    app = hubitat_app(
        devices=40, seed=7, token=HUBITAT_TOKEN, hub_name="Home Hub", custom_rule_engine=True
    )
    relabel(app[HUB], DEMO_LABELS)
    return app


def relabel(hub: Hub, labels: dict[tuple[str | None, str], str]) -> None:
    """Give the hub's devices the labels `labels` names; each must find its device."""
    for (room_name, old), new in labels.items():
        found = [
            device
            for device in hub.devices.values()
            if device.label == old and _room_name(hub, device) == room_name
        ]
        if len(found) != 1:
            raise ValueError(f"demo label {old!r} in {room_name}: {len(found)} devices")
        found[0].label = new


def _room_name(hub: Hub, device: Device) -> str | None:
    room = hub.room_of(device)
    return None if room is None else room.name


@asynccontextmanager
async def demo_home(
    activity_every: float = 20.0, ports: tuple[int, int, int] | None = None
) -> AsyncIterator[DemoHome]:
    """Start the three simulators; they stop when the context ends.

    `ports` (Hubitat, Homecast, Robine Wake) fixes where they listen, so entries a kept demo
    configuration has still reach them; by default free ports.
    """
    hub_at, hc_at, rw_at = ports or (None, None, None)
    hubitat = demo_hubitat()
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
