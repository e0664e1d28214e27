"""OAuth entries at run time: tokens refreshed before use, failures lead to reauth."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from freezegun.api import FrozenDateTimeFactory
from homeassistant.config_entries import ConfigEntry, ConfigEntryState
from homeassistant.const import ATTR_ENTITY_ID, STATE_UNAVAILABLE
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError
import pytest
from pytest_homeassistant_custom_component.common import async_fire_time_changed
from pytest_homeassistant_custom_component.typing import ClientSessionGenerator

from custom_components.mcp_gateway.backends.homecast.const import CONF_OAUTH_CLIENT
from custom_components.mcp_gateway.core.const import DOMAIN

from .conftest import Sim, device_of, entity_id
from .test_config_flow import _oauth_entry

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
pytestmark = pytest.mark.usefixtures("current_request_with_host")


async def _poll(hass: HomeAssistant, freezer: FrozenDateTimeFactory, seconds: float) -> None:
    freezer.tick(timedelta(seconds=seconds))
    async_fire_time_changed(hass)
    await hass.async_block_till_done(wait_background_tasks=True)


@pytest.fixture
async def entry(
    hass: HomeAssistant,
    sim: Sim,
    hass_client_no_auth: ClientSessionGenerator,
    freezer: FrozenDateTimeFactory,
) -> ConfigEntry:
    """An OAuth entry for the simulator's account, made through the flow at NOW."""
    freezer.move_to(NOW)
    return await _oauth_entry(hass, sim, hass_client_no_auth)


def _reauth_flows(hass: HomeAssistant) -> list[str]:
    return [
        flow["context"]["source"]
        for flow in hass.config_entries.flow.async_progress_by_handler(DOMAIN)
    ]


async def test_token_refreshed_before_use(
    hass: HomeAssistant, sim: Sim, entry: ConfigEntry, freezer: FrozenDateTimeFactory
) -> None:
    """An hour later the access token has expired: it is refreshed before the next poll."""
    assert entry.state is ConfigEntryState.LOADED
    first = dict(entry.data["token"])
    lamp = entity_id(hass, entry, sim, device_of(sim, "light"), "light")

    await _poll(hass, freezer, 3600)
    token = entry.data["token"]
    assert token["access_token"] != first["access_token"]
    assert token["refresh_token"] != first["refresh_token"]  # rotated
    assert sim.state.grant_for(token["access_token"]) is not None
    assert sim.state.grant_for(first["access_token"]) is None  # the old one expired
    assert hass.states.get(lamp).state != STATE_UNAVAILABLE
    assert _reauth_flows(hass) == []

    # The refreshed token is what writes use.
    switch = device_of(sim, "switch")
    await hass.services.async_call(
        "switch",
        "turn_off",
        {ATTR_ENTITY_ID: entity_id(hass, entry, sim, switch, "switch")},
        blocking=True,
    )
    assert switch.values["on"] is False


async def test_failed_refresh_starts_reauth(
    hass: HomeAssistant, sim: Sim, entry: ConfigEntry, freezer: FrozenDateTimeFactory
) -> None:
    """The user removed the app: the refresh is refused, HA asks to re-authenticate."""
    lamp = entity_id(hass, entry, sim, device_of(sim, "light"), "light")
    sim.state.revoke_client(entry.data[CONF_OAUTH_CLIENT]["client_id"])
    await _poll(hass, freezer, 3600)
    assert _reauth_flows(hass) == ["reauth"]
    assert hass.states.get(lamp).state == STATE_UNAVAILABLE


async def test_revoked_access_token_starts_reauth(
    hass: HomeAssistant, sim: Sim, entry: ConfigEntry, freezer: FrozenDateTimeFactory
) -> None:
    """A still-fresh token that the server refuses (401) also leads to reauth."""
    sim.state.revoke_token(entry.data["token"]["access_token"])
    await _poll(hass, freezer, 30)
    assert _reauth_flows(hass) == ["reauth"]


async def test_refresh_failure_during_action(
    hass: HomeAssistant, sim: Sim, entry: ConfigEntry, freezer: FrozenDateTimeFactory
) -> None:
    """A write that needs a refresh the server refuses: clear error plus reauth."""
    switch = entity_id(hass, entry, sim, device_of(sim, "switch"), "switch")
    sim.state.revoke_refresh_token(entry.data["token"]["refresh_token"])
    freezer.tick(timedelta(seconds=3590))  # within the refresh margin, before the next poll
    with pytest.raises(HomeAssistantError):
        await hass.services.async_call(
            "switch", "turn_off", {ATTR_ENTITY_ID: switch}, blocking=True
        )
    await hass.async_block_till_done()
    assert _reauth_flows(hass) == ["reauth"]


async def test_token_server_down_is_not_an_auth_failure(
    hass: HomeAssistant, sim: Sim, entry: ConfigEntry, freezer: FrozenDateTimeFactory
) -> None:
    """A 5xx from the token endpoint is an outage (retry later), not a reason to log in again."""
    lamp = entity_id(hass, entry, sim, device_of(sim, "light"), "light")
    sim.faults.update({"error_rate": 1.0})
    await _poll(hass, freezer, 3600)
    assert _reauth_flows(hass) == []
    assert hass.states.get(lamp).state == STATE_UNAVAILABLE
    sim.faults.reset()
    await _poll(hass, freezer, 30)
    assert hass.states.get(lamp).state != STATE_UNAVAILABLE


async def test_oauth_entry_survives_restart(hass: HomeAssistant, entry: ConfigEntry) -> None:
    """The registered client is kept in the entry: a reload rebuilds the implementation."""
    await hass.config_entries.async_reload(entry.entry_id)
    await hass.async_block_till_done()
    assert entry.state is ConfigEntryState.LOADED
