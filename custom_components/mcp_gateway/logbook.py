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

from .core.const import DOMAIN
from .gateway.approval.manager import ATTR_CHANNEL, ATTR_DECIDED_BY, ATTR_OUTCOME, EVENT_APPROVAL
from .permissions.policy import (
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

    @callback
    def describe_approval(event: LazyEventPartialState) -> dict[str, Any]:
        data = event.data
        outcome = data.get(ATTR_OUTCOME)
        asked = f"{data.get(ATTR_USER_NAME)} via {data.get(ATTR_CLIENT_NAME)}"
        where = _CHANNELS.get(str(data.get(ATTR_CHANNEL)), "")
        if outcome == "pending":
            message = f"approval asked by {asked}: {data.get(ATTR_SUMMARY)}"
        elif outcome == "expired" and data.get(ATTR_DECIDED_BY):
            message = (
                f"approved by {data.get(ATTR_DECIDED_BY)}{where} but not used in time, so not "
                f"run: {data.get(ATTR_SUMMARY)} ({asked})"
            )
        elif outcome == "expired":
            message = f"nobody approved in time, declined: {data.get(ATTR_SUMMARY)} ({asked})"
        else:
            message = (
                f"{outcome} by {data.get(ATTR_DECIDED_BY)}{where}: "
                f"{data.get(ATTR_SUMMARY)} ({asked})"
            )
        description: dict[str, Any] = {
            LOGBOOK_ENTRY_NAME: "MCP gateway approval",
            LOGBOOK_ENTRY_MESSAGE: message,
        }
        if entity_id := data.get("entity_id"):
            description[LOGBOOK_ENTRY_ENTITY_ID] = entity_id
        return description

    async_describe_event(DOMAIN, EVENT_APPROVAL, describe_approval)


_CHANNELS = {"client": " in the AI app", "phone": " on the phone", "ui": " in Home Assistant"}
