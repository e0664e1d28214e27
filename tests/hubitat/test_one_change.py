"""One command, one state change: a read from before the device reported never undoes it.

The hub applies a command when the device reports it (here 0.1 s after the hub answered, as a
Z-Wave lock does): a read of the hub in between (set_state's read back, a push read, a poll)
still shows the old value. The entity moves to the target once and stays there.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from homeassistant.const import EVENT_STATE_CHANGED, Platform
from homeassistant.core import Event, HomeAssistant, callback
import pytest
from pytest_homeassistant_custom_component.common import MockUser

from custom_components.mcp_gateway.backends.hubitat import coordinator as coordinator_module
from custom_components.mcp_gateway.backends.hubitat.const import (
    CONF_SCAN_INTERVAL,
    MAX_SCAN_INTERVAL,
)
from custom_components.mcp_gateway.backends.hubitat.runtime import HubitatRuntime
from custom_components.mcp_gateway.gateway.tools.set_state import async_set_state

from .conftest import Sim, SimFactory, entity_id, first, make_entry, setup_entry

# The device's report comes this long after the hub answered the command.
REPORT_AFTER = 0.1


@dataclass(frozen=True)
class _Caller:
    user: MockUser
    client_name: str = "pytest-client"


class _States:
    """Every state change of one entity, in order: its state, or for a thermostat its target
    temperature (its state stays "heat")."""

    def __init__(self, hass: HomeAssistant, entity: str) -> None:
        self.seen: list[Any] = []

        @callback
        def _record(event: Event[Any]) -> None:
            if event.data["entity_id"] == entity and (new := event.data["new_state"]) is not None:
                climate = entity.startswith("climate.")
                self.seen.append(new.attributes.get("temperature") if climate else new.state)

        self.stop = hass.bus.async_listen(EVENT_STATE_CHANGED, _record)


@pytest.fixture
async def slow_sim(sim_factory: SimFactory) -> Sim:
    """A hub whose devices report a command a moment after it answered."""
    return await sim_factory(command_delay=REPORT_AFTER)


@pytest.fixture
async def slow_runtime(hass: HomeAssistant, slow_sim: Sim) -> HubitatRuntime:
    """Polls only when a test says so."""
    return await setup_entry(hass, make_entry(slow_sim, **{CONF_SCAN_INTERVAL: MAX_SCAN_INTERVAL}))


@dataclass(frozen=True)
class Case:
    """A device kind, its entity, its state before, an update, and the changes it must make."""

    kind: str
    key: str  # the entity key's suffix after the device id
    platform: Platform
    before: dict[str, Any]
    update: dict[str, Any]
    service: tuple[str, dict[str, Any]]  # the same update as an HA service call
    wanted: list[Any]


CASES = [
    Case(
        "lock",
        "lock",
        Platform.LOCK,
        {"lock": "unlocked"},
        {"state": "locked"},
        ("lock", {}),
        ["locked"],
    ),
    Case(
        "switch",
        "switch",
        Platform.SWITCH,
        {"switch": "off"},
        {"state": "on"},
        ("turn_on", {}),
        ["on"],
    ),
    Case(
        "dimmer",
        "light",
        Platform.LIGHT,
        {"switch": "off", "level": 20},
        {"state": "on", "brightness_pct": 60},
        ("turn_on", {"brightness_pct": 60}),
        ["on"],
    ),
    Case(
        "shade",
        "shade",
        Platform.COVER,
        {"windowShade": "closed", "position": 0},
        {"state": "open"},
        ("open_cover", {}),
        ["opening", "open"],
    ),
    Case(
        "thermostat",
        "thermostat",
        Platform.CLIMATE,
        {"thermostatMode": "heat", "heatingSetpoint": 66},
        {"temperature": 22},
        ("set_temperature", {"temperature": 22}),
        [22],
    ),
]
IDS = [case.kind for case in CASES]


async def _prepare(hass: HomeAssistant, sim: Sim, runtime: HubitatRuntime, case: Case) -> str:
    device = first(sim, case.kind)
    for name, value in case.before.items():
        # Through another value: the device has activity now, so the next listing shows it.
        sim.hub.set_attribute(device.id, name, "unknown" if isinstance(value, str) else -1)
        sim.hub.set_attribute(device.id, name, value)
    await runtime.coordinator.async_refresh()
    await hass.async_block_till_done()
    return entity_id(hass, sim, f"{device.id}_{case.key}", case.platform)


@pytest.mark.parametrize("case", CASES, ids=IDS)
async def test_set_state_changes_the_entity_once(
    hass: HomeAssistant,
    slow_sim: Sim,
    slow_runtime: HubitatRuntime,
    hass_admin_user: MockUser,
    case: Case,
) -> None:
    """set_state reads back before the device reported: the entity still changes once."""
    entity = await _prepare(hass, slow_sim, slow_runtime, case)
    states = _States(hass, entity)
    result = await async_set_state(
        hass, _Caller(hass_admin_user), {"updates": [{"entity_id": entity, **case.update}]}
    )
    await asyncio.sleep(REPORT_AFTER * 5)
    await slow_runtime.coordinator.async_refresh()
    await hass.async_block_till_done()
    states.stop()
    assert result["results"][0]["status"] in ("done", "in_progress"), result
    assert states.seen == case.wanted


@pytest.fixture
async def held_sim(sim_factory: SimFactory) -> Sim:
    """A hub whose devices report a command only when the test lets them."""
    return await sim_factory(command_delay=None)


@pytest.fixture
async def held_runtime(hass: HomeAssistant, held_sim: Sim) -> HubitatRuntime:
    """Polls only when a test says so."""
    return await setup_entry(hass, make_entry(held_sim, **{CONF_SCAN_INTERVAL: MAX_SCAN_INTERVAL}))


@pytest.mark.parametrize("read", ["poll", "push"])
@pytest.mark.parametrize("case", CASES, ids=IDS)
async def test_a_read_from_before_the_command_does_not_undo_it(  # noqa: PLR0917 - fixtures
    hass: HomeAssistant,
    held_sim: Sim,
    held_runtime: HubitatRuntime,
    monkeypatch: pytest.MonkeyPatch,
    read: str,
    case: Case,
) -> None:
    """A poll (or a push's read) asks the hub, the command goes out, then the read's answer
    arrives with the old value; then the device reports: one change in all."""
    entity = await _prepare(hass, held_sim, held_runtime, case)
    coordinator = held_runtime.coordinator
    device_id = str(first(held_sim, case.kind).id)
    listing = coordinator.api.list_devices
    answered, release = asyncio.Event(), asyncio.Event()
    listed: list[bool] = []

    async def held_listing(**kwargs: Any) -> Any:
        page = await listing(**kwargs)
        listed.append(any(device.id == device_id for device in page.devices))
        answered.set()
        await release.wait()
        return page

    states = _States(hass, entity)
    monkeypatch.setattr(coordinator.api, "list_devices", held_listing)
    reader = coordinator.async_refresh if read == "poll" else coordinator.async_read_changes
    racing = asyncio.get_running_loop().create_task(reader())
    await answered.wait()
    monkeypatch.setattr(coordinator.api, "list_devices", listing)
    service, data = case.service
    await hass.services.async_call(
        case.platform, service, {"entity_id": entity, **data}, blocking=True
    )
    release.set()
    await racing
    await hass.async_block_till_done()
    assert listed == [True]  # the racing read did carry the old value
    # The device reports; the hub's push (or the next poll) reads it.
    assert held_sim.hub.apply_pending()
    await (coordinator.async_refresh() if read == "poll" else coordinator.async_read_changes())
    await hass.async_block_till_done()
    states.stop()
    assert states.seen == case.wanted
    assert not held_runtime.awaits_report(case.platform, f"{device_id}_{case.key}")


async def test_a_command_the_device_never_reports_is_corrected_once(
    hass: HomeAssistant,
    held_sim: Sim,
    held_runtime: HubitatRuntime,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Reads within the report window keep the expected value; after it, the hub's corrects
    it: two changes, both real (the command, then the news that it did not happen)."""
    monkeypatch.setattr(coordinator_module, "REPORT_WINDOW", timedelta(seconds=0.3))
    entity = await _prepare(hass, held_sim, held_runtime, CASES[0])
    device_id = str(first(held_sim, "lock").id)
    states = _States(hass, entity)
    await hass.services.async_call("lock", "lock", {"entity_id": entity}, blocking=True)
    await held_runtime.coordinator.async_read_changes()
    await hass.async_block_till_done()
    assert hass.states.get(entity).state == "locked"  # type: ignore[union-attr]
    assert held_runtime.awaits_report(Platform.LOCK, f"{device_id}_lock")
    await asyncio.sleep(0.35)
    await held_runtime.coordinator.async_read_changes()
    await hass.async_block_till_done()
    states.stop()
    assert states.seen == ["locked", "unlocked"]
    assert not held_runtime.awaits_report(Platform.LOCK, f"{device_id}_lock")
