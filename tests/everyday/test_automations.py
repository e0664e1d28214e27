""" "When the Hubitat kitchen motion sensor turns on, turn on Rob's Flat kitchen desk lamp":
an automation across two backends, built by the assistant, approved by the owner under
Settings → Repairs (signed in, not the AI app's token), then run by Home Assistant when the
hub reports motion."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient
from homeassistant.auth.models import User
from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component
import pytest

from custom_components.mcp_gateway.backends.hubitat.const import KIND as HUBITAT
from custom_components.mcp_gateway.core.const import CONF_BACKEND, DOMAIN
from tests.approvals import open_approvals
from tests.hubitat.sim import entity_id
from tests.registry import in_room

from .assistant import ROBS_FLAT, Home
from .test_homes import accessory, device_shows, twins

# Its device's name, as the approval and the explanation name it: without the room where
# HA begins entity ids with the area.
ROBS_LAMP = f"Rob's Flat {in_room('Kitchen', 'Kitchen Desk Lamp')}"


@pytest.fixture(autouse=True)
async def automations_ready(hass: HomeAssistant, tmp_path: Path) -> None:
    """HA's automations in this test's own config folder, and Repairs, set up before the
    assistant connects (HA's HTTP routes are fixed once a client has started)."""
    hass.config.config_dir = str(tmp_path)
    (tmp_path / "configuration.yaml").write_text("automation: !include automations.yaml\n")
    (tmp_path / "automations.yaml").write_text("[]\n")
    for component in ("http", "repairs", "automation"):
        assert await async_setup_component(hass, component, {})


async def _motion(hass: HomeAssistant, hub: Any, device_id: int) -> None:
    """Motion on the hub, as Home Assistant learns it: no motion, then motion, each read by
    the hub's next poll."""
    entry = next(
        e for e in hass.config_entries.async_entries(DOMAIN) if e.data.get(CONF_BACKEND) == HUBITAT
    )
    for value in ("inactive", "active"):
        hub.set_attribute(device_id, "motion", value)
        await entry.runtime_data.coordinator.async_refresh()
        await hass.async_block_till_done()


async def _approve_in_repairs(hass: HomeAssistant, browser: TestClient) -> str:
    """The owner opens the approval under Settings → Repairs and approves it."""
    [pending] = await open_approvals(hass)
    response = await browser.post(
        "/api/repairs/issues/fix",
        json={"handler": DOMAIN, "issue_id": f"approval_{pending.id}"},
    )
    flow = await response.json()
    shown: str = flow["description_placeholders"]["summary"]
    response = await browser.post(
        f"/api/repairs/issues/fix/{flow['flow_id']}", json={"next_step_id": "approve"}
    )
    assert (await response.json())["reason"] == "approved"
    return shown


async def test_kitchen_motion_turns_on_the_desk_lamp_at_robs_flat(
    home: Home,
    hass_client: Callable[..., Awaitable[TestClient]],
    hass_admin_user: User,
    tmp_path: Path,
) -> None:
    hass = home.hass
    refresh = await hass.auth.async_create_refresh_token(
        hass_admin_user, "http://homeassistant.local:8123/"
    )
    browser = await hass_client(hass.auth.async_create_access_token(refresh))
    hub = home.sims.hubitat.hub
    sensor = next(d for d in hub.find(kind="motion") if d.display == "Kitchen Motion Sensor")
    motion = entity_id(hass, home.sims.hubitat, f"{sensor.id}_motion", "binary_sensor")
    lamp = twins(hass, "light", "kitchen desk lamp")[ROBS_FLAT]

    found, _ = await home.assistant.call("search_tools", {"query": "create an automation"})
    assert found["results"][0]["tool"] == "automations", found
    config = {
        "alias": "Kitchen motion lights the desk lamp",
        "triggers": [{"trigger": "state", "entity_id": motion, "to": "on"}],
        "actions": [{"action": "light.turn_on", "target": {"entity_id": lamp}}],
    }
    call = asyncio.get_running_loop().create_task(
        home.assistant.call("automations", {"action": "save", "config": config})
    )
    shown = await _approve_in_repairs(hass, browser)
    # Nothing was saved before the approval; what the owner read names both backends.
    assert shown.startswith(
        "Create the automation 'Kitchen motion lights the desk lamp': When Kitchen Motion "
        f"Sensor (Hubitat) turns on, turn on {ROBS_LAMP} (Homecast)"
    ), shown
    saved, is_error = await call
    assert not is_error, saved
    written = (tmp_path / "automations.yaml").read_text()
    assert f"```yaml\n{written}```" in shown
    assert hass.states.get(saved["entity_id"]).state == "on"

    await hass.services.async_call("light", "turn_off", {"entity_id": lamp}, blocking=True)
    assert await device_shows(
        lambda: accessory(home, ROBS_FLAT, "kitchen_desk_lamp").values["on"] is False
    )
    # Motion on the hub: the hub's report reaches HA (its next poll), the automation runs.
    await _motion(hass, hub, sensor.id)
    assert hass.states.get(motion).state == "on"
    assert await device_shows(
        lambda: accessory(home, ROBS_FLAT, "kitchen_desk_lamp").values["on"] is True, 3.0
    )
    assert saved["summary"].startswith("When Kitchen Motion Sensor (Hubitat) turns on")


async def test_why_did_the_kitchen_automation_not_run_then_delete_it(
    home: Home,
    hass_client: Callable[..., Awaitable[TestClient]],
    hass_admin_user: User,
    tmp_path: Path,
) -> None:
    """ "Why didn't my kitchen automation run?" then "delete it": two calls, the second
    approved by the owner in Repairs."""
    hass = home.hass
    refresh = await hass.auth.async_create_refresh_token(
        hass_admin_user, "http://homeassistant.local:8123/"
    )
    browser = await hass_client(hass.auth.async_create_access_token(refresh))
    hub = home.sims.hubitat.hub
    sensor = next(d for d in hub.find(kind="motion") if d.display == "Kitchen Motion Sensor")
    motion = entity_id(hass, home.sims.hubitat, f"{sensor.id}_motion", "binary_sensor")
    lamp = twins(hass, "light", "kitchen desk lamp")[ROBS_FLAT]
    # Written in Settings → Automations by a person: only while the lamp is unavailable.
    (tmp_path / "automations.yaml").write_text(
        "- id: '1700000000000'\n"
        "  alias: Kitchen lamp\n"
        "  triggers:\n"
        f"  - trigger: state\n    entity_id: {motion}\n    to: 'on'\n"
        "  conditions:\n"
        f"  - condition: state\n    entity_id: {lamp}\n    state: unavailable\n"
        "  actions:\n"
        f"  - action: light.turn_on\n    target:\n      entity_id: {lamp}\n"
    )
    await hass.services.async_call("automation", "reload", blocking=True)
    await _motion(hass, hub, sensor.id)

    why, is_error = await home.assistant.call(
        "automations", {"action": "explain", "automation": "kitchen lamp"}
    )
    assert not is_error, why
    [run] = why["runs"]
    assert run["outcome"].startswith("triggered, but a condition was false")
    assert run["false_conditions"] == [f"condition/0: {ROBS_LAMP} (Homecast) is unavailable"]
    call = asyncio.get_running_loop().create_task(
        home.assistant.call("automations", {"action": "delete", "automation": "Kitchen lamp"})
    )
    shown = await _approve_in_repairs(hass, browser)
    assert shown.startswith("Delete the automation 'Kitchen lamp': When Kitchen Motion Sensor")
    deleted, is_error = await call
    assert not is_error, deleted
    assert deleted["deleted"] == "1700000000000"
    assert (tmp_path / "automations.yaml").read_text() == "[]\n"
    await hass.async_block_till_done()
    assert hass.states.get("automation.kitchen_lamp") is None
