"""BackendCoordinator: every backend's poll failures become translated HA errors, once."""

from __future__ import annotations

from datetime import timedelta
import logging

from homeassistant.config_entries import ConfigEntryState
from homeassistant.const import CONF_URL
from homeassistant.core import HomeAssistant
from homeassistant.helpers import translation
from homeassistant.helpers.update_coordinator import UpdateFailed
from homeassistant.loader import async_get_integration
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.mcp_gateway.backends.hubitat.const import KIND as HUBITAT_KIND
from custom_components.mcp_gateway.core.const import CONF_BACKEND, DOMAIN
from custom_components.mcp_gateway.framework.coordinator import BackendCoordinator
from custom_components.mcp_gateway.mcp.errors import McpAuthError, McpConnectionError, McpError


class _Coordinator(BackendCoordinator[int]):
    """Raises what it is given, else answers 1."""

    def __init__(self, hass: HomeAssistant, entry: MockConfigEntry) -> None:
        super().__init__(
            hass,
            logging.getLogger(__name__),
            entry,  # type: ignore[arg-type]
            name="test",
            update_interval=timedelta(seconds=30),
        )
        self.fail: McpError | None = None
        self.auth_failures: list[McpAuthError] = []

    async def _async_fetch(self) -> int:
        if self.fail is not None:
            raise self.fail
        return 1

    def _on_auth_failed(self, err: McpAuthError) -> None:
        self.auth_failures.append(err)


async def test_mcp_errors_become_translated_update_failures(hass: HomeAssistant) -> None:
    """A failed poll is UpdateFailed with the update_failed key naming the entry."""
    await translation.async_load_integrations(hass, {DOMAIN})
    hass.config.components.add(DOMAIN)  # cached translations are those of loaded components
    entry = MockConfigEntry(domain=DOMAIN, title="Kitchen hub")
    entry.add_to_hass(hass)
    coordinator = _Coordinator(hass, entry)
    await coordinator.async_refresh()
    assert coordinator.latency_ms is not None
    coordinator.fail = McpConnectionError("connection refused")
    await coordinator.async_refresh()
    err = coordinator.last_exception
    assert isinstance(err, UpdateFailed)
    assert err.translation_domain == DOMAIN
    assert err.translation_key == "update_failed"
    assert err.translation_placeholders == {"title": "Kitchen hub", "error": "connection refused"}
    assert str(err) == "Could not read Kitchen hub: connection refused"
    assert isinstance(err.__cause__, McpConnectionError)


async def test_auth_error_starts_reauth_with_translated_reason(hass: HomeAssistant) -> None:
    """A refused credential: the hook runs, then reauthentication with the auth_failed key."""
    # HA 2026.x starts reauth only for a domain whose flow handler is loaded, as it is
    # once the integration is set up; this test sets up only a coordinator.
    await (await async_get_integration(hass, DOMAIN)).async_get_platform("config_flow")
    entry = MockConfigEntry(
        domain=DOMAIN, title="Kitchen hub", data={CONF_BACKEND: HUBITAT_KIND, CONF_URL: "x"}
    )
    entry.add_to_hass(hass)
    coordinator = _Coordinator(hass, entry)
    refused = McpAuthError("401", status=401)
    coordinator.fail = refused
    await coordinator.async_refresh()
    await hass.async_block_till_done()
    assert coordinator.auth_failures == [refused]
    assert not coordinator.last_update_success
    assert entry.state is ConfigEntryState.NOT_LOADED
    flows = hass.config_entries.flow.async_progress_by_handler(DOMAIN)
    assert [flow["context"]["source"] for flow in flows] == ["reauth"]
