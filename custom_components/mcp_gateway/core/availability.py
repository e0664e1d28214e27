"""A repair issue when a backend has been unreachable for long, withdrawn once it answers again.

Coordinators already log unavailability once and recovery once; a user who does not read logs
still needs to learn that a hub has been down for half an hour, so this raises a repair issue.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from typing import Any

from homeassistant.config_entries import ConfigEntry
from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers import issue_registry as ir
from homeassistant.helpers.event import async_call_later
from homeassistant.helpers.update_coordinator import DataUpdateCoordinator

from .const import DOMAIN

UNREACHABLE_AFTER = timedelta(minutes=30)


def issue_id(entry: ConfigEntry) -> str:
    """The repair issue id of an entry's unreachable backend."""
    return f"backend_unreachable_{entry.entry_id}"


@callback
def async_track_unreachable(
    hass: HomeAssistant,
    entry: ConfigEntry,
    coordinators: Iterable[DataUpdateCoordinator[Any]],
) -> Callable[[], None]:
    """Watch the coordinators of an entry; returns the function that stops watching."""
    coordinators = list(coordinators)
    # Coordinators stay silent while failures repeat, so a timer decides when "long" is reached.
    cancel_timer: Callable[[], None] | None = None

    @callback
    def _raise_issue(_: datetime) -> None:
        nonlocal cancel_timer
        cancel_timer = None
        ir.async_create_issue(
            hass,
            DOMAIN,
            issue_id(entry),
            is_fixable=False,
            severity=ir.IssueSeverity.ERROR,
            translation_key="backend_unreachable",
            translation_placeholders={
                "title": entry.title,
                "minutes": str(int(UNREACHABLE_AFTER.total_seconds() // 60)),
            },
        )

    @callback
    def _check() -> None:
        nonlocal cancel_timer
        if all(coordinator.last_update_success for coordinator in coordinators):
            if cancel_timer is not None:
                cancel_timer()
                cancel_timer = None
            ir.async_delete_issue(hass, DOMAIN, issue_id(entry))
        elif (
            cancel_timer is None
            and ir.async_get(hass).async_get_issue(DOMAIN, issue_id(entry)) is None
        ):
            cancel_timer = async_call_later(hass, UNREACHABLE_AFTER, _raise_issue)

    removers = [coordinator.async_add_listener(_check) for coordinator in coordinators]

    @callback
    def _stop() -> None:
        if cancel_timer is not None:
            cancel_timer()
        for remove in removers:
            remove()
        ir.async_delete_issue(hass, DOMAIN, issue_id(entry))

    return _stop
