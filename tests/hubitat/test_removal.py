"""Removing a Hubitat entry leaves none of its repairs behind, and no other entry's."""

from __future__ import annotations

from homeassistant.core import HomeAssistant
from homeassistant.helpers import issue_registry as ir

from custom_components.mcp_gateway.backends.hubitat.const import CONF_PUSH
from custom_components.mcp_gateway.backends.hubitat.push import MODE_POLLING, REASON_NO_CALLS
from custom_components.mcp_gateway.core.const import DOMAIN

from .conftest import SimFactory, make_entry, setup_entry


def _ours(hass: HomeAssistant) -> set[str]:
    return {issue_id for domain, issue_id in ir.async_get(hass).issues if domain == DOMAIN}


async def test_removed_entry_takes_its_repairs_along(
    hass: HomeAssistant, ha_url: str, sim_factory: SimFactory
) -> None:
    """The hub's "does not reach Home Assistant" repair goes with its deleted entry."""
    removed = await setup_entry(hass, make_entry(await sim_factory(), **{CONF_PUSH: True}))
    kept = await setup_entry(hass, make_entry(await sim_factory(), **{CONF_PUSH: True}))
    for runtime in (removed, kept):
        runtime.push._set_mode(MODE_POLLING, REASON_NO_CALLS)  # what a silent hub leads to
    issues = _ours(hass)
    assert f"hubitat_push_{removed.entry.entry_id}" in issues
    assert f"hubitat_push_{kept.entry.entry_id}" in issues

    assert await hass.config_entries.async_remove(removed.entry.entry_id)
    await hass.async_block_till_done()
    assert _ours(hass) == {i for i in issues if not i.endswith(removed.entry.entry_id)}
    assert f"hubitat_push_{kept.entry.entry_id}" in _ours(hass)
