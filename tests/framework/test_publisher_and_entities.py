"""The generic entity framework: publishing, removal, availability, error translation, events.

A small in-memory backend stands in for the real ones, so these tests pin the framework's own
behaviour independently of any backend's wire format.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, ClassVar, Self
from unittest.mock import patch

from freezegun.api import FrozenDateTimeFactory
from homeassistant.config_entries import ConfigEntryState
from homeassistant.const import STATE_OFF, STATE_ON, STATE_UNAVAILABLE, Platform
from homeassistant.core import Event, HomeAssistant
from homeassistant.exceptions import HomeAssistantError, ServiceValidationError
from homeassistant.helpers import (
    entity_registry as er,
    issue_registry as ir,
)
from homeassistant.helpers.entity import EntityDescription
from homeassistant.helpers.entity_platform import async_get_platforms
from homeassistant.helpers.update_coordinator import UpdateFailed
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry, async_fire_time_changed

from custom_components.mcp_gateway.core.const import DOMAIN
from custom_components.mcp_gateway.framework.entity import DeviceSpec, EntitySpec
from custom_components.mcp_gateway.mcp.errors import (
    McpAuthError,
    McpConnectionError,
    McpToolError,
)
from custom_components.mcp_gateway.platforms.binary_sensor import GatewayBinarySensorDescription
from custom_components.mcp_gateway.platforms.event import EventOccurrence, GatewayEventDescription
from custom_components.mcp_gateway.platforms.switch import GatewaySwitchDescription
from tests.registry import device_of as registry_device
from tests.simulation import FakeClient, InMemoryRuntime, setup_in_memory

HUB = DeviceSpec(key="hub", name="Fake hub", manufacturer="Test")


@dataclass
class Plug:
    """A native object of the fake backend."""

    id: str
    name: str
    on: bool = False
    reachable: bool = True
    presses: list[str] = field(default_factory=list)


async def _set_plug(runtime: FakeRuntime, plug: Plug, on: bool) -> None:
    if runtime.fail_with is not None:
        raise runtime.fail_with
    plug.on = on  # optimistic, as real backends do


SWITCH = GatewaySwitchDescription(key="power", name=None, is_on_fn=lambda p: p.on, set_fn=_set_plug)
REACHABLE = GatewayBinarySensorDescription(
    key="reachable",
    translation_key="reachable",
    is_on_fn=lambda p: p.reachable,
)
PRESSES = GatewayEventDescription(
    key="button",
    translation_key="button",
    event_types=["pushed"],
    events_fn=lambda p: [EventOccurrence(marker, "pushed", {"n": marker}) for marker in p.presses],
)


class FakeRuntime(InMemoryRuntime):
    """An in-memory backend with plugs, polled by a coordinator."""

    kind = "fake"
    platforms = (Platform.SWITCH, Platform.BINARY_SENSOR, Platform.EVENT)
    # Each plug's entities; variants of this backend change only these.
    descriptions: ClassVar[tuple[tuple[Platform, EntityDescription], ...]] = (
        (Platform.SWITCH, SWITCH),
        (Platform.BINARY_SENSOR, REACHABLE),
        (Platform.EVENT, PRESSES),
    )
    plugs: dict[str, Plug]
    fail_with: Exception | None = None
    poll_error: Exception | None = None

    @classmethod
    def from_entry(cls, hass: HomeAssistant, entry: Any) -> Self:
        runtime = cls(hass, entry, FakeClient())  # type: ignore[arg-type]
        runtime.plugs = {"1": Plug("1", "Lamp"), "2": Plug("2", "Kettle")}
        return runtime

    async def _poll(self) -> dict[str, Plug]:
        if self.poll_error is not None:
            raise self.poll_error
        return dict(self.plugs)

    def _specs(self) -> list[EntitySpec]:
        specs = []
        for plug_id in self.coordinator.data:
            device = DeviceSpec(
                key=f"plug_{plug_id}",
                name=self.plugs.get(plug_id, Plug(plug_id, "?")).name,
                via=HUB,
            )
            for platform, description in self.descriptions:
                name = self.plugs[plug_id].name if platform is Platform.SWITCH else None
                specs.append(self.item_spec(platform, description, device, plug_id, name))
        return specs

    def diagnostics(self) -> dict[str, Any]:
        return {"plugs": len(self.plugs)}


@pytest.fixture
async def entry(hass: HomeAssistant) -> MockConfigEntry:
    """A loaded entry of the fake backend."""
    return await setup_in_memory(hass, FakeRuntime, unique_id="fake-1")


async def _poll(hass: HomeAssistant, entry: MockConfigEntry) -> None:
    await entry.runtime_data.coordinator.async_refresh()
    await hass.async_block_till_done()


async def test_entities_and_devices_follow_the_backend(
    hass: HomeAssistant, entry: MockConfigEntry
) -> None:
    """Entities get stable unique ids; new plugs appear and gone ones leave, without a reload."""
    entities = er.async_get(hass)
    lamp = entities.async_get_entity_id("switch", DOMAIN, "fake-1_1_power")
    assert lamp is not None
    assert hass.states.get(lamp).state == STATE_OFF
    lamp_device = registry_device(hass, (DOMAIN, "fake-1_plug_1"))
    assert lamp_device is not None
    hub = registry_device(hass, (DOMAIN, "fake-1_hub"))
    assert hub is not None
    assert lamp_device.via_device_id == hub.id

    runtime: FakeRuntime = entry.runtime_data
    assert {spec.key for spec in runtime.publisher.device_specs("plug_2")} == {
        "2_power",
        "2_reachable",
        "2_button",
    }
    runtime.plugs["3"] = Plug("3", "Fan")
    del runtime.plugs["2"]
    await _poll(hass, entry)

    # The per-device index follows the backend too (gateway calls look devices up in it).
    assert runtime.publisher.device_specs("plug_2") == []
    assert len(runtime.publisher.device_specs("plug_3")) == 3

    assert entities.async_get_entity_id("switch", DOMAIN, "fake-1_3_power") is not None
    assert entities.async_get_entity_id("switch", DOMAIN, "fake-1_2_power") is None
    assert registry_device(hass, (DOMAIN, "fake-1_plug_2")) is None
    assert registry_device(hass, (DOMAIN, "fake-1_plug_3")) is not None


async def test_a_devices_entities_share_one_device_info(
    hass: HomeAssistant, entry: MockConfigEntry
) -> None:
    """Entities of one device hold the same DeviceInfo (two objects per device, not per
    entity, for every full garbage collection to walk); other devices have their own."""
    infos: dict[str, list[Any]] = {}
    for platform in async_get_platforms(hass, DOMAIN):
        for entity in platform.entities.values():
            assert entity.device_info is not None
            (identifier,) = entity.device_info["identifiers"]
            infos.setdefault(identifier[1], []).append(entity.device_info)
    assert sorted(infos) == ["fake-1_plug_1", "fake-1_plug_2"]
    for shared in infos.values():
        assert len(shared) == 3
        assert all(info is shared[0] for info in shared)
    assert infos["fake-1_plug_1"][0] is not infos["fake-1_plug_2"][0]
    assert infos["fake-1_plug_1"][0]["name"] == "Lamp"


async def test_action_applies_optimistically_and_translates_errors(
    hass: HomeAssistant, entry: MockConfigEntry
) -> None:
    """A successful write shows at once; each failure kind becomes the HA error a user sees."""
    lamp = er.async_get(hass).async_get_entity_id("switch", DOMAIN, "fake-1_1_power")
    await hass.services.async_call("switch", "turn_on", {"entity_id": lamp}, blocking=True)
    assert hass.states.get(lamp).state == STATE_ON

    runtime: FakeRuntime = entry.runtime_data
    cases: list[tuple[Exception, type[Exception], str]] = [
        (ValueError("bad level"), ServiceValidationError, "invalid_value"),
        (McpConnectionError("down"), HomeAssistantError, "communication_error"),
        (McpConnectionError("cut", may_have_run=True), HomeAssistantError, "outcome_unknown"),
        (McpToolError("refused"), HomeAssistantError, "command_failed"),
    ]
    for error, expected, key in cases:
        runtime.fail_with = error
        with pytest.raises(expected) as caught:
            await hass.services.async_call("switch", "turn_off", {"entity_id": lamp}, blocking=True)
        assert caught.value.translation_key == key
    assert hass.states.get(lamp).state == STATE_ON  # nothing changed on failure


async def test_auth_error_on_action_starts_reauth(
    hass: HomeAssistant, entry: MockConfigEntry
) -> None:
    """A 401 during an action asks the user to re-authenticate."""
    lamp = er.async_get(hass).async_get_entity_id("switch", DOMAIN, "fake-1_1_power")
    entry.runtime_data.fail_with = McpAuthError("no", status=401)
    with (
        patch.object(entry, "async_start_reauth") as start_reauth,
        pytest.raises(HomeAssistantError),
    ):
        await hass.services.async_call("switch", "turn_on", {"entity_id": lamp}, blocking=True)
    start_reauth.assert_called_once()


async def test_unavailable_while_polls_fail_and_back(
    hass: HomeAssistant, entry: MockConfigEntry
) -> None:
    """A failing poll makes entities unavailable; the next good poll brings them back."""
    lamp = er.async_get(hass).async_get_entity_id("switch", DOMAIN, "fake-1_1_power")
    runtime: FakeRuntime = entry.runtime_data
    runtime.poll_error = UpdateFailed("unreachable")
    await _poll(hass, entry)
    assert hass.states.get(lamp).state == STATE_UNAVAILABLE
    runtime.poll_error = None
    await _poll(hass, entry)
    assert hass.states.get(lamp).state == STATE_OFF


async def test_event_fires_new_occurrences_once(
    hass: HomeAssistant, entry: MockConfigEntry
) -> None:
    """Presses before start are not replayed; each new press fires exactly once."""
    runtime: FakeRuntime = entry.runtime_data
    event_id = er.async_get(hass).async_get_entity_id("event", DOMAIN, "fake-1_1_button")
    assert event_id is not None
    fired: list[Event] = []
    hass.bus.async_listen(
        "state_changed", lambda e: fired.append(e) if e.data["entity_id"] == event_id else None
    )

    runtime.plugs["1"].presses.append("a")
    await _poll(hass, entry)
    runtime.plugs["1"].presses.append("b")
    await _poll(hass, entry)
    await _poll(hass, entry)  # nothing new: nothing fires

    assert [e.data["new_state"].attributes["n"] for e in fired] == ["a", "b"]
    assert hass.states.get(event_id).attributes["event_type"] == "pushed"


async def test_unload_releases_the_client(hass: HomeAssistant, entry: MockConfigEntry) -> None:
    """Unloading removes the entities from the state machine and closes the client."""
    client = entry.runtime_data.client
    assert await hass.config_entries.async_unload(entry.entry_id)
    await hass.async_block_till_done()
    assert client.closed
    assert entry.state is ConfigEntryState.NOT_LOADED


async def test_repair_issue_when_unreachable_for_long(
    hass: HomeAssistant, entry: MockConfigEntry, freezer: FrozenDateTimeFactory
) -> None:
    """Half an hour of failed polls raises a repair issue; the first good poll withdraws it."""
    issues = ir.async_get(hass)
    issue = (DOMAIN, f"backend_unreachable_{entry.entry_id}")
    runtime: FakeRuntime = entry.runtime_data
    runtime.poll_error = UpdateFailed("unreachable")
    await _poll(hass, entry)
    freezer.tick(timedelta(minutes=29))
    async_fire_time_changed(hass)
    await _poll(hass, entry)
    assert issues.async_get_issue(*issue) is None
    freezer.tick(timedelta(minutes=2))
    async_fire_time_changed(hass)
    await hass.async_block_till_done()
    created = issues.async_get_issue(*issue)
    assert created is not None
    assert created.translation_placeholders == {"title": entry.title, "minutes": "30"}

    runtime.poll_error = None
    await _poll(hass, entry)
    assert issues.async_get_issue(*issue) is None


async def test_renamed_native_object_renames_its_entity(
    hass: HomeAssistant, entry: MockConfigEntry
) -> None:
    """A label changed at the backend shows as the entity's new name after the next poll."""
    lamp = er.async_get(hass).async_get_entity_id("switch", DOMAIN, "fake-1_1_power")
    # Named after its device alone: "Lamp Lamp" would repeat the device's name.
    assert hass.states.get(lamp).attributes["friendly_name"] == "Lamp"
    entry.runtime_data.plugs["1"].name = "Reading lamp"
    await _poll(hass, entry)
    # The device follows the backend too (HA keeps a name the user set in the registry).
    assert hass.states.get(lamp).attributes["friendly_name"] == "Reading lamp"
