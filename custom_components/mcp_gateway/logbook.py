"""Describe the gateway's write events for HA's logbook."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from homeassistant.components.logbook.const import (
    LOGBOOK_ENTRY_ENTITY_ID,
    LOGBOOK_ENTRY_MESSAGE,
    LOGBOOK_ENTRY_NAME,
)
from homeassistant.components.logbook.models import LazyEventPartialState
from homeassistant.core import HomeAssistant, callback

from .const import DOMAIN
from .gateway.policy import (
    ATTR_BACKEND,
    ATTR_CLIENT_NAME,
    ATTR_SUCCESS,
    ATTR_SUMMARY,
    ATTR_TOOL,
    ATTR_USER_NAME,
    EVENT_GATEWAY_WRITE,
)


@callback
def async_describe_events(
    hass: HomeAssistant,
    async_describe_event: Callable[
        [str, str, Callable[[LazyEventPartialState], dict[str, Any]]], None
    ],
) -> None:
    """Describe gateway writes: who, through which AI client, did what."""

    @callback
    def describe_write(event: LazyEventPartialState) -> dict[str, Any]:
        data = event.data
        target = data.get(ATTR_BACKEND) or data.get(ATTR_TOOL)
        outcome = "" if data.get(ATTR_SUCCESS, True) else " (failed)"
        message = (
            f"{data.get(ATTR_USER_NAME)} via {data.get(ATTR_CLIENT_NAME)}: "
            f"{data.get(ATTR_SUMMARY)}{outcome}"
        )
        description: dict[str, Any] = {
            LOGBOOK_ENTRY_NAME: f"MCP gateway ({target})",
            LOGBOOK_ENTRY_MESSAGE: message,
        }
        if entity_id := data.get("entity_id"):
            description[LOGBOOK_ENTRY_ENTITY_ID] = entity_id
        return description

    async_describe_event(DOMAIN, EVENT_GATEWAY_WRITE, describe_write)
