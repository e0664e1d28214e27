"""What a person meets in the demo: its options listed, the simulators' logins printed, device
names a person gives, and the phone approval path (mobile_app) loaded."""

from __future__ import annotations

from collections import Counter
import json
from pathlib import Path
import re
import subprocess

from homeassistant import components
from homeassistant.const import MAJOR_VERSION
import pytest

from demo.__main__ import DEMO_YAML, arguments, simulator_logins
from demo.home import DEMO_LABELS, DemoHome, demo_hubitat, relabel
from simulators.hubitat import HUB, create_app as hubitat_app

REPO = Path(__file__).resolve().parent.parent


def test_help_lists_every_option() -> None:
    """`scripts/demo --help` listed only --fresh; it answers without setting anything up."""
    shown = subprocess.run(
        [REPO / "scripts" / "demo", "--help"], capture_output=True, text=True, check=True
    ).stdout
    python_options = {o for a in arguments()._actions for o in a.option_strings}
    for option in {*python_options, "--ha", "--fresh", "--help", "MCP_GATEWAY_DEMO_PORT"}:
        assert re.search(rf"(^|\s){re.escape(option)}\b", shown), option


def test_simulator_logins_are_printed() -> None:
    """What the forms ask for a second entry by hand: every address, token and password."""
    home = DemoHome(
        hubitat_url="http://127.0.0.1:8124/apps/api/1/mcp?access_token=hub-token",
        homecast_url="http://127.0.0.1:8125/mcp",
        homecast_token="hc_token",
        robine_url="http://127.0.0.1:8126/mcp",
        robine_password="secret",
    )
    shown = simulator_logins(home)
    for value in (home.hubitat_url, home.homecast_url, "hc_token", home.robine_url, "secret"):
        assert value in shown


def _labels(app: object) -> list[str]:
    hub = app[HUB]  # type: ignore[index]
    return [d.label for d in hub.devices.values() if d.selected]


def _unnatural(labels: list[str]) -> list[str]:
    twins = [label for label, count in Counter(labels).items() if count > 1]
    return twins + [
        label
        for label in labels
        if not label  # shown by its driver's name
        or label.startswith("Generic ")
        or re.search(r"\b(\w+) \1\b", label)  # "Garage Garage Door"
    ]


def test_demo_hub_devices_have_names_a_person_gives() -> None:
    assert _unnatural(_labels(demo_hubitat())) == []
    # None starts with its room, which HA 2026 puts before the device's name in entity ids.
    hub = demo_hubitat()[HUB]
    rooms = {
        device.label: hub.room_of(device) for device in hub.devices.values() if device.selected
    }
    leading = [
        label
        for label, room in rooms.items()
        if room is not None and label.casefold().startswith(room.name.casefold())
    ]
    assert leading == []
    # The simulator's own hub keeps what real hubs accumulate; the demo relabels that only.
    plain = _labels(hubitat_app(devices=40, seed=7, token="t", hub_name="Home Hub"))
    assert {"", "Lamp", "Garage Garage Door"} <= set(_unnatural(plain))


def test_a_label_that_finds_no_device_is_an_error() -> None:
    hub = hubitat_app(devices=40, seed=7, token="t")[HUB]
    with pytest.raises(ValueError, match="Nothing"):
        relabel(hub, {("Attic", "Nothing"): "Something"})
    assert len(DEMO_LABELS) == len(set(DEMO_LABELS.values()))


def test_demo_loads_mobile_app_with_its_requirements() -> None:
    """default_config's mobile_app, so a phone can approve; the demo runs HA with --skip-pip,
    so the target's lock holds the package core's mobile_app pins."""
    assert re.search(r"^mobile_app:$", DEMO_YAML, re.M)
    manifest = Path(components.__path__[0]) / "mobile_app" / "manifest.json"
    pins = json.loads(manifest.read_text())["requirements"]
    lock = REPO / "locks" / ("min-demo.txt" if MAJOR_VERSION == 2025 else "current.txt")
    locked = lock.read_text().lower()
    for pin in pins:
        assert re.search(rf"^{re.escape(pin.lower())}\s", locked, re.M), (pin, lock.name)
