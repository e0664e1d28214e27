"""Config, password, reauth, reconfigure and options flows of the Robine Wake backend."""

from __future__ import annotations

from typing import Any
from unittest.mock import patch

from homeassistant.config_entries import SOURCE_USER, ConfigEntryState
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResult, FlowResultType
from homeassistant.helpers import entity_registry as er
import pytest

from custom_components.mcp_gateway.backends.robine_wake import model
from custom_components.mcp_gateway.backends.robine_wake.api import RobineWakeApi
from custom_components.mcp_gateway.backends.robine_wake.config_flow import normalize_url
from custom_components.mcp_gateway.backends.robine_wake.const import KIND as ROBINE_WAKE_KIND
from custom_components.mcp_gateway.core.const import CONF_BACKEND, DOMAIN
from simulators import robine_wake as sim_module
from simulators.robine_wake import DomainError, RobineWake
from tests.registry import device_of

from .conftest import DEVICE_ID, PASSWORD, Sim, SimFactory, make_entry, setup_entry


async def _start(hass: HomeAssistant) -> FlowResult:
    menu = await hass.config_entries.flow.async_init(DOMAIN, context={"source": SOURCE_USER})
    assert menu["type"] is FlowResultType.MENU
    result = await hass.config_entries.flow.async_configure(
        menu["flow_id"], {"next_step_id": ROBINE_WAKE_KIND}
    )
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "robine_wake"
    return result


async def _submit(hass: HomeAssistant, result: FlowResult, data: dict[str, Any]) -> FlowResult:
    return await hass.config_entries.flow.async_configure(result["flow_id"], data)


async def _recovers(hass: HomeAssistant, result: FlowResult, url: str) -> None:
    """The same flow, sent a reachable clock's address after its error, creates the entry."""
    assert result["type"] is FlowResultType.FORM
    result = await _submit(hass, result, {"url": url})
    assert result["type"] is FlowResultType.CREATE_ENTRY
    await hass.async_block_till_done()


def _host_port(sim: Sim) -> str:
    return f"127.0.0.1:{sim.server.port}"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("192.168.1.20", "http://192.168.1.20/mcp"),
        (" clock.local:8080 ", "http://clock.local:8080/mcp"),
        ("http://clock.local/", "http://clock.local/mcp"),
        ("https://clock.local/custom?x=1", "https://clock.local/custom"),
    ],
)
def test_normalize_url(raw: str, expected: str) -> None:
    """Addresses as people type them become the clock's MCP URL."""
    assert normalize_url(raw) == expected


@pytest.mark.parametrize("raw", ["http://", "ftp://clock.local"])
def test_normalize_url_refuses(raw: str) -> None:
    """Addresses without a host or with another scheme are refused."""
    with pytest.raises(ValueError):
        normalize_url(raw)


async def test_a_second_unnamed_clock_is_numbered(
    hass: HomeAssistant, sim: Sim, sim_factory: SimFactory
) -> None:
    """Two clocks that name themselves nothing: "Robine Wake", then "Robine Wake 2"."""
    first = await _submit(hass, await _start(hass), {"url": _host_port(sim)})
    other = await sim_factory()
    second = await _submit(hass, await _start(hass), {"url": _host_port(other)})
    assert (first["title"], second["title"]) == ("Robine Wake", "Robine Wake 2")
    await hass.async_block_till_done()
    assert hass.states.get("switch.robine_wake_2_weekdays") is not None


async def test_user_flow_without_password(hass: HomeAssistant, sim: Sim) -> None:
    """A clock as 50-002 has it (no device id anywhere) is recognised and keyed by its address."""
    result = await _submit(hass, await _start(hass), {"url": _host_port(sim)})
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert result["title"] == "Robine Wake"  # it names itself nothing
    assert result["data"] == {CONF_BACKEND: ROBINE_WAKE_KIND, "url": sim.url}
    assert result["result"].unique_id == f"address:127.0.0.1:{sim.server.port}"
    await hass.async_block_till_done()
    assert result["result"].state is ConfigEntryState.LOADED
    assert hass.states.get("switch.robine_wake_weekdays").state == "on"
    # The same address again is the same clock.
    result = await _submit(hass, await _start(hass), {"url": sim.url})
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "already_configured"


async def test_user_flow_with_a_device_id(hass: HomeAssistant, sim_factory: SimFactory) -> None:
    """A clock that names itself (beyond the spec) keeps today's unique id: its own."""
    sim = await sim_factory(device_id=DEVICE_ID)
    result = await _submit(hass, await _start(hass), {"url": _host_port(sim)})
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert result["title"] == "Bedroom clock"
    assert result["result"].unique_id == DEVICE_ID


async def test_user_flow_asks_the_password_on_401(
    hass: HomeAssistant, sim_factory: SimFactory
) -> None:
    """A 401 asks for the password; wrong ones and outages are errors, the right one creates."""
    sim = await sim_factory(password=PASSWORD)
    result = await _submit(hass, await _start(hass), {"url": sim.url})
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "robine_wake_password"
    assert result["description_placeholders"] == {
        "url": sim.url,
        "scheme": "HTTP Basic, user admin",
    }
    result = await _submit(hass, result, {"password": "guess"})
    assert result["errors"] == {"base": "invalid_auth"}
    sim.faults.offline = True
    result = await _submit(hass, result, {"password": PASSWORD})
    assert result["errors"] == {"base": "cannot_connect"}
    sim.faults.offline = False
    result = await _submit(hass, result, {"password": PASSWORD})
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert result["data"] == {
        CONF_BACKEND: ROBINE_WAKE_KIND,
        "url": sim.url,
        "password": PASSWORD,
        "auth_scheme": "basic",
    }


async def test_user_flow_with_a_bearer_token(hass: HomeAssistant, sim_factory: SimFactory) -> None:
    """The 401 asks for Bearer: the secret goes out as a token, and the entry remembers that."""
    sim = await sim_factory(password=PASSWORD, auth_scheme="bearer")
    result = await _submit(hass, await _start(hass), {"url": sim.url})
    assert result["step_id"] == "robine_wake_password"
    assert result["description_placeholders"] == {"url": sim.url, "scheme": "Bearer token"}
    result = await _submit(hass, result, {"password": "guess"})
    assert result["errors"] == {"base": "invalid_auth"}
    result = await _submit(hass, result, {"password": PASSWORD})
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert result["data"]["auth_scheme"] == "bearer"
    await hass.async_block_till_done()
    entry = result["result"]
    assert entry.state is ConfigEntryState.LOADED
    assert hass.states.get("switch.robine_wake_weekdays").state == "on"


@pytest.mark.parametrize("scheme", ["digest", "negotiate"])
async def test_user_flow_refuses_an_unknown_scheme(
    hass: HomeAssistant, sim_factory: SimFactory, scheme: str
) -> None:
    """A scheme we cannot send is a translated error on the address form, not a password step."""
    sim = await sim_factory(password=PASSWORD, auth_scheme=scheme)
    result = await _submit(hass, await _start(hass), {"url": sim.url})
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "robine_wake"
    assert result["errors"] == {"base": "unsupported_auth"}
    sim.device.password = None
    await _recovers(hass, result, sim.url)


async def test_user_flow_without_a_challenge(hass: HomeAssistant, sim: Sim) -> None:
    """A 401 that names no scheme at all: nothing to answer it with."""
    original = sim_module._challenge
    sim.device.password = PASSWORD
    with patch.object(sim_module, "_challenge", lambda device: ""):
        result = await _submit(hass, await _start(hass), {"url": sim.url})
    assert original(sim.device) == 'Basic realm="Robine Wake"'
    assert result["errors"] == {"base": "unsupported_auth"}
    result = await _submit(hass, result, {"url": sim.url})
    assert result["step_id"] == "robine_wake_password"
    result = await _submit(hass, result, {"password": PASSWORD})
    assert result["type"] is FlowResultType.CREATE_ENTRY


async def test_invalid_url(hass: HomeAssistant, sim: Sim) -> None:
    """An address that is no URL is refused on its field; a real one then works."""
    result = await _submit(hass, await _start(hass), {"url": "http://"})
    assert result["errors"] == {"url": "invalid_url"}
    await _recovers(hass, result, sim.url)


async def test_nothing_listening(hass: HomeAssistant, sim_factory: SimFactory) -> None:
    """Nothing answers at the address: cannot_connect, then another clock's address works."""
    gone = await sim_factory()
    url = gone.url
    await gone.server.close()
    result = await _submit(hass, await _start(hass), {"url": url})
    assert result["errors"] == {"base": "cannot_connect"}
    await _recovers(hass, result, (await sim_factory()).url)


async def test_server_errors_are_cannot_connect(hass: HomeAssistant, sim: Sim) -> None:
    """HTTP 5xx from the clock is cannot_connect; once it answers, the entry is made."""
    sim.faults.error_rate = 1.0
    result = await _submit(hass, await _start(hass), {"url": sim.url})
    assert result["errors"] == {"base": "cannot_connect"}
    sim.faults.error_rate = 0.0
    await _recovers(hass, result, sim.url)


@pytest.mark.parametrize("fault", ["wrong_path", "malformed"])
async def test_not_an_mcp_server(hass: HomeAssistant, sim: Sim, fault: str) -> None:
    """A wrong path or a reply that is not MCP: not_an_mcp_server, then the right one works."""
    url = sim.url
    if fault == "wrong_path":
        url = url.replace("/mcp", "/api")
    else:
        sim.faults.malformed = True
    result = await _submit(hass, await _start(hass), {"url": url})
    assert result["errors"] == {"base": "not_an_mcp_server"}
    sim.faults.malformed = False
    await _recovers(hass, result, sim.url)


async def test_timeout(hass: HomeAssistant, sim: Sim) -> None:
    """A clock that never answers times out; once it answers, the entry is made."""
    sim.faults.hang = True
    with patch.object(model, "REQUEST_TIMEOUT", 0.2):
        result = await _submit(hass, await _start(hass), {"url": sim.url})
    assert result["errors"] == {"base": "timeout"}
    sim.faults.hang = False
    await _recovers(hass, result, sim.url)


async def test_rate_limited(hass: HomeAssistant, sim_factory: SimFactory) -> None:
    """The clock's 429 is rate_limited; once it lets requests through, the entry is made."""
    sim = await sim_factory(rate_limit=1)
    result = await _submit(hass, await _start(hass), {"url": sim.url})
    assert result["errors"] == {"base": "rate_limited"}
    sim.device.rate_limiter.per_minute = None
    await _recovers(hass, result, sim.url)


async def test_get_state_fails(hass: HomeAssistant, sim: Sim) -> None:
    """get_state refusing to answer: not_robine_wake; a normal answer then creates the entry."""
    with patch.object(RobineWake, "state", side_effect=DomainError("validation_failed", "no")):
        result = await _submit(hass, await _start(hass), {"url": sim.url})
    assert result["errors"] == {"base": "not_robine_wake"}
    await _recovers(hass, result, sim.url)


async def test_not_the_spec_tools(hass: HomeAssistant, sim: Sim) -> None:
    """An MCP server without 50-002's tools (say, another server's get_state) is no clock."""
    others = tuple(tool for tool in sim_module.TOOLS if tool["name"] != "snooze_session")
    with patch.object(sim_module, "TOOLS", others):
        result = await _submit(hass, await _start(hass), {"url": sim.url})
    assert result["errors"] == {"base": "not_robine_wake"}
    await _recovers(hass, result, sim.url)


async def test_identity_from_server_info(hass: HomeAssistant, sim_factory: SimFactory) -> None:
    """A clock whose get_state has no `device`: serverInfo.device names it."""
    sim = await sim_factory(device_id=DEVICE_ID)
    original = RobineWake.state

    def without_device(self: RobineWake) -> dict[str, Any]:
        state = original(self)
        del state["device"]
        return state

    with patch.object(RobineWake, "state", without_device):
        result = await _submit(hass, await _start(hass), {"url": sim.url})
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert result["result"].unique_id == DEVICE_ID


async def test_unexpected_error(hass: HomeAssistant, sim: Sim) -> None:
    """An error of our own is `unknown` on the form; the next try creates the entry."""
    with patch.object(RobineWakeApi, "identity", side_effect=RuntimeError("boom")):
        result = await _submit(hass, await _start(hass), {"url": sim.url})
    assert result["errors"] == {"base": "unknown"}
    await _recovers(hass, result, sim.url)


async def test_same_clock_again_follows_its_new_address(
    hass: HomeAssistant, sim_factory: SimFactory
) -> None:
    """The same clock at a new address updates its entry instead of adding one."""
    sim = await sim_factory(device_id=DEVICE_ID)
    entry = make_entry(sim)
    entry.add_to_hass(hass)
    hass.config_entries.async_update_entry(entry, data={**entry.data, "url": "http://old/mcp"})
    result = await _submit(hass, await _start(hass), {"url": sim.url})
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "already_configured"
    assert entry.data["url"] == sim.url


# --- reauth ----------------------------------------------------------------------------------


async def test_reauth(hass: HomeAssistant, sim: Sim) -> None:
    """Reauth checks the new password against the same clock and stores it."""
    entry = make_entry(sim)
    await setup_entry(hass, entry)
    sim.device.password = PASSWORD
    result = await entry.start_reauth_flow(hass)
    assert result["step_id"] == "robine_wake_reauth_confirm"
    assert result["description_placeholders"] == {"name": "Bedroom clock"}
    result = await _submit(hass, result, {"password": "guess"})
    assert result["errors"] == {"base": "invalid_auth"}
    sim.faults.offline = True
    result = await _submit(hass, result, {"password": PASSWORD})
    assert result["errors"] == {"base": "cannot_connect"}
    sim.faults.offline = False
    result = await _submit(hass, result, {"password": PASSWORD})
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "reauth_successful"
    assert entry.data["password"] == PASSWORD
    await hass.async_block_till_done()
    assert entry.state is ConfigEntryState.LOADED


async def test_reauth_follows_a_changed_scheme(
    hass: HomeAssistant, sim_factory: SimFactory
) -> None:
    """A clock that moved from Basic to Bearer: reauth sends the secret the way the 401 asks."""
    sim = await sim_factory(password=PASSWORD, auth_scheme="bearer")
    entry = make_entry(sim, password=PASSWORD)  # stored before the scheme was: Basic
    entry.add_to_hass(hass)
    result = await entry.start_reauth_flow(hass)
    result = await _submit(hass, result, {"password": "guess"})
    assert result["errors"] == {"base": "invalid_auth"}
    result = await _submit(hass, result, {"password": PASSWORD})
    assert result["reason"] == "reauth_successful"
    assert entry.data["auth_scheme"] == "bearer"
    await hass.async_block_till_done()
    assert entry.state is ConfigEntryState.LOADED


async def test_reauth_when_the_clock_dropped_its_password(hass: HomeAssistant, sim: Sim) -> None:
    """Reauth of a clock that no longer asks for a password drops the stored one."""
    entry = make_entry(sim, password="old")
    entry.add_to_hass(hass)
    result = await entry.start_reauth_flow(hass)
    result = await _submit(hass, result, {})
    assert result["reason"] == "reauth_successful"
    assert "password" not in entry.data


async def test_reauth_other_clock(hass: HomeAssistant, sim_factory: SimFactory) -> None:
    """Reauth that reaches another clock aborts with unique_id_mismatch."""
    sim = await sim_factory(device_id=DEVICE_ID)
    entry = make_entry(sim)
    entry.add_to_hass(hass)
    sim.device.device_id = "rw-somebody-else"
    result = await entry.start_reauth_flow(hass)
    result = await _submit(hass, result, {"password": PASSWORD})
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "unique_id_mismatch"


async def test_reauth_when_the_clock_stops_naming_itself(
    hass: HomeAssistant, sim_factory: SimFactory
) -> None:
    """A clock that no longer reports its id (device.id is beyond the spec) cannot be compared:
    the entry keeps its id and takes the password."""
    sim = await sim_factory(device_id=DEVICE_ID)
    entry = make_entry(sim, password="old")
    entry.add_to_hass(hass)
    sim.device.device_id = None
    sim.device.password = PASSWORD
    result = await entry.start_reauth_flow(hass)
    result = await _submit(hass, result, {"password": PASSWORD})
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "reauth_successful"
    assert entry.unique_id == DEVICE_ID
    assert entry.data["password"] == PASSWORD


# --- reconfigure -----------------------------------------------------------------------------


async def test_reconfigure_to_a_new_address(hass: HomeAssistant, sim_factory: SimFactory) -> None:
    """Reconfigure to a new address checks it and stores it."""
    old = await sim_factory()
    entry = make_entry(old)
    entry.add_to_hass(hass)
    new = await sim_factory(password=PASSWORD)  # same clock id, new address, now with password
    result = await entry.start_reconfigure_flow(hass)
    assert result["step_id"] == "robine_wake_reconfigure"
    result = await _submit(hass, result, {"url": "http://"})
    assert result["errors"] == {"url": "invalid_url"}
    result = await _submit(hass, result, {"url": new.url})
    assert result["errors"] == {"base": "invalid_auth"}
    new.faults.offline = True
    result = await _submit(hass, result, {"url": new.url, "password": PASSWORD})
    assert result["errors"] == {"base": "cannot_connect"}
    new.faults.offline = False
    result = await _submit(hass, result, {"url": new.url, "password": PASSWORD})
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "reconfigure_successful"
    assert entry.data["url"] == new.url
    assert entry.data["password"] == PASSWORD
    await hass.async_block_till_done()
    assert entry.state is ConfigEntryState.LOADED


async def test_reconfigure_follows_a_clock_identified_by_address(
    hass: HomeAssistant, sim_factory: SimFactory, entity_registry: er.EntityRegistry
) -> None:
    """No device id to compare: the entry, its entities and device move to the new address."""
    old = await sim_factory()
    entry = make_entry(old)
    await setup_entry(hass, entry)
    weekdays = "switch.bedroom_clock_weekdays"
    assert hass.states.get(weekdays).state == "on"
    alarm_id = old.alarm_id("Weekdays")
    new = await sim_factory()
    new.device.remove_alarm(new.alarm_id("Weekdays"))
    new.device.alarms[alarm_id] = old.device.alarms[alarm_id]  # the same clock, moved
    result = await entry.start_reconfigure_flow(hass)
    result = await _submit(hass, result, {"url": new.url})
    assert result["reason"] == "reconfigure_successful"
    await hass.async_block_till_done()
    new_uid = f"address:127.0.0.1:{new.server.port}"
    assert entry.unique_id == new_uid
    assert entry.data["url"] == new.url
    assert entity_registry.async_get(weekdays).unique_id == f"{new_uid}_alarm_{alarm_id}_enabled"
    assert hass.states.get(weekdays).state == "on"
    device = device_of(hass, (DOMAIN, f"{new_uid}_clock"))
    assert device is not None
    assert {e.entity_id for e in er.async_entries_for_device(entity_registry, device.id)} >= {
        weekdays
    }


async def test_reconfigure_onto_an_address_another_entry_has(
    hass: HomeAssistant, sim_factory: SimFactory
) -> None:
    """Reconfigure onto another entry's address aborts."""
    first, second = await sim_factory(), await sim_factory()
    entry = make_entry(first)
    entry.add_to_hass(hass)
    make_entry(second).add_to_hass(hass)
    result = await entry.start_reconfigure_flow(hass)
    result = await _submit(hass, result, {"url": second.url})
    assert result["reason"] == "already_configured"
    assert entry.data["url"] == first.url


async def test_reconfigure_keeps_the_password(hass: HomeAssistant, sim_factory: SimFactory) -> None:
    """Reconfigure keeps the stored password."""
    sim = await sim_factory(password=PASSWORD)
    entry = make_entry(sim, password=PASSWORD)
    entry.add_to_hass(hass)
    result = await entry.start_reconfigure_flow(hass)
    result = await _submit(hass, result, {"url": _host_port(sim)})
    assert result["reason"] == "reconfigure_successful"
    assert entry.data["password"] == PASSWORD


async def test_reconfigure_to_another_clock(hass: HomeAssistant, sim_factory: SimFactory) -> None:
    """Reconfigure that reaches another clock aborts with unique_id_mismatch."""
    sim = await sim_factory(device_id=DEVICE_ID)
    entry = make_entry(sim)
    entry.add_to_hass(hass)
    other = await sim_factory(device_id="rw-other")
    result = await entry.start_reconfigure_flow(hass)
    result = await _submit(hass, result, {"url": other.url})
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "unique_id_mismatch"
    assert entry.data["url"] == sim.url


# --- options ---------------------------------------------------------------------------------


async def test_options_change_the_poll_interval(hass: HomeAssistant, sim: Sim) -> None:
    """The options change the poll interval, which the coordinator then uses."""
    entry = make_entry(sim)
    await setup_entry(hass, entry)
    assert entry.runtime_data.coordinator.update_interval.total_seconds() == 5
    result = await hass.config_entries.options.async_init(entry.entry_id)
    assert result["type"] is FlowResultType.FORM
    # The clock's own form, whose help text speaks of the clock alone.
    assert result["step_id"] == "robine_wake"
    schema = {str(key): key for key in result["data_schema"].schema}
    assert schema["scan_interval"].default() == 5
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], {"scan_interval": 30, "gateway_exposed": True}
    )
    assert result["type"] is FlowResultType.CREATE_ENTRY
    await hass.async_block_till_done()
    assert entry.options["scan_interval"] == 30
    assert entry.runtime_data.coordinator.update_interval.total_seconds() == 30
