"""MCP Gateway: MCP backends as Home Assistant entities, and one MCP endpoint inside HA."""

from __future__ import annotations

from homeassistant.const import CONF_SCAN_INTERVAL, Platform
from homeassistant.core import HomeAssistant
from homeassistant.helpers import config_validation as cv, issue_registry as ir
from homeassistant.helpers.device_registry import DeviceEntry
from homeassistant.helpers.typing import ConfigType

from .core.availability import async_track_unreachable
from .core.const import CONF_BACKEND, DOMAIN
from .core.settings import KIND_GATEWAY
from .framework.base import McpGatewayConfigEntry
from .gateway import async_setup_gateway
from .registry import runtime_class
from .services import async_setup_services

CONFIG_SCHEMA = cv.config_entry_only_config_schema(DOMAIN)

# Option keys of entries made before 1.2: Hubitat's and Robine Wake's poll intervals.
_OLD_POLL_INTERVAL_KEYS = ("hubitat_poll_interval", "poll_interval")


async def async_setup(hass: HomeAssistant, config: ConfigType) -> bool:
    """Register the gateway endpoint and the integration's actions once."""
    await async_setup_gateway(hass)
    async_setup_services(hass)
    return True


async def async_migrate_entry(hass: HomeAssistant, entry: McpGatewayConfigEntry) -> bool:
    """1.1 → 1.2: every backend's poll interval is stored under HA's CONF_SCAN_INTERVAL."""
    if entry.version > 1:
        return False  # written by a newer version of the integration
    if entry.minor_version < 2:
        options = dict(entry.options)
        for old in _OLD_POLL_INTERVAL_KEYS:
            if old in options:
                options.setdefault(CONF_SCAN_INTERVAL, options.pop(old))
        hass.config_entries.async_update_entry(entry, options=options, minor_version=2)
    return True


async def async_setup_entry(hass: HomeAssistant, entry: McpGatewayConfigEntry) -> bool:
    """Connect to one backend and publish its entities."""
    if entry.data[CONF_BACKEND] == KIND_GATEWAY:
        # The gateway's settings entry: read live by the gateway, nothing to run.
        return True
    runtime = runtime_class(entry.data[CONF_BACKEND]).from_entry(hass, entry)
    await runtime.async_setup()
    entry.runtime_data = runtime
    runtime.publisher.async_refresh()
    await runtime.publisher.async_derived()
    coordinators = {id(spec.coordinator): spec.coordinator for spec in runtime.publisher.specs}
    entry.async_on_unload(async_track_unreachable(hass, entry, coordinators.values()))
    await hass.config_entries.async_forward_entry_setups(entry, runtime.platforms)
    entry.async_on_unload(entry.add_update_listener(_async_options_updated))
    return True


async def async_unload_entry(hass: HomeAssistant, entry: McpGatewayConfigEntry) -> bool:
    """Unload the platforms, then let the backend release what it holds."""
    if entry.data[CONF_BACKEND] == KIND_GATEWAY:
        return True
    runtime = entry.runtime_data
    platforms: tuple[Platform, ...] = runtime.platforms
    runtime.publisher.async_stop()
    if unloaded := await hass.config_entries.async_unload_platforms(entry, platforms):
        await runtime.async_shutdown()
    return unloaded


async def async_remove_entry(hass: HomeAssistant, entry: McpGatewayConfigEntry) -> None:
    """Let the backend delete what the entry made on it (Hubitat's live-update rules), and
    delete the entry's repairs: they would otherwise outlive it, naming a device no longer
    there."""
    if entry.data[CONF_BACKEND] != KIND_GATEWAY:
        await runtime_class(entry.data[CONF_BACKEND]).async_remove_entry(hass, entry)
    registry = ir.async_get(hass)
    # Every repair of an entry ends with its entry id (availability, push, password, limits).
    suffix = f"_{entry.entry_id}"
    for domain, issue_id in list(registry.issues):
        if domain == DOMAIN and issue_id.endswith(suffix):
            ir.async_delete_issue(hass, DOMAIN, issue_id)


async def async_remove_config_entry_device(
    hass: HomeAssistant, entry: McpGatewayConfigEntry, device: DeviceEntry
) -> bool:
    """Let a user delete a device only once the backend no longer has it."""
    return not entry.runtime_data.publisher.has_device(set(device.identifiers))


async def _async_options_updated(hass: HomeAssistant, entry: McpGatewayConfigEntry) -> None:
    """Options change polling and entity mapping: reload to apply them."""
    await hass.config_entries.async_reload(entry.entry_id)
