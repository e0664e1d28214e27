"""Which mode an entry runs (push or polling) and why; the poll interval and repairs that follow.

While every followed home is subscribed the entry polls only as a safety net (300 s, as
homecast-hass); at its own interval whenever the socket is down, silent or not granted every
home. A credential refused twice and a socket unreachable for long each raise a repair issue,
and both go once subscribed. Diagnostics and health() show the mode (`PushStatus`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import timedelta
import logging
from typing import TYPE_CHECKING, Any, Final

from homeassistant.core import HomeAssistant
from homeassistant.helpers import issue_registry as ir

from ...core.const import DOMAIN
from .push_socket import PushStatus

if TYPE_CHECKING:
    from ...framework.base import McpGatewayConfigEntry
    from .coordinator import HomecastCoordinator

_LOGGER = logging.getLogger(__name__)

SAFETY_POLL: Final = 300.0  # homecast-hass UPDATE_INTERVAL_WS
ISSUE_REFUSED: Final = "homecast_push_refused"
ISSUE_UNAVAILABLE: Final = "homecast_push_unavailable"


class PushMode:
    """Switches one entry between push and polling, and says why."""

    def __init__(
        self,
        hass: HomeAssistant,
        entry: McpGatewayConfigEntry,
        coordinator: HomecastCoordinator,
        poll_interval: float,
        resync: Callable[[], None],
    ) -> None:
        self.hass = hass
        self.entry = entry
        self.coordinator = coordinator
        self.poll_interval = poll_interval
        self.status = PushStatus()
        self._resync = resync

    def granted(self, requested: list[str], answer: Mapping[str, Any]) -> None:
        """The homes the server granted (its answer lists them); push only if all are."""
        payload = answer.get("payload")
        subscriptions = payload.get("subscriptions") if isinstance(payload, Mapping) else None
        granted = {
            str(s.get("id"))
            for s in (subscriptions if isinstance(subscriptions, list) else ())
            if isinstance(s, Mapping)
        }
        self.status.subscribed = [home for home in requested if home in granted]
        missing = len(requested) - len(self.status.subscribed)
        self.status.not_granted = missing
        if missing or not requested:
            if self.status.mode == "push" or self.status.reason != "not_granted":
                _LOGGER.info(
                    "Homecast %s: %d home(s) not granted for live updates; polling",
                    self.entry.title,
                    missing,
                )
            self.down("not_granted")
        else:
            self.up()

    def up(self) -> None:
        """Every followed home is subscribed: the safety poll only, no repair left."""
        self.status.mode = "push"
        self.status.reason = "subscribed"
        for kind in (ISSUE_REFUSED, ISSUE_UNAVAILABLE):
            ir.async_delete_issue(self.hass, DOMAIN, self._issue_id(kind))
        self.coordinator.update_interval = _seconds(max(self.poll_interval, SAFETY_POLL))

    def down(self, reason: str, *, issue: str | None = None) -> None:
        """Polling at the entry's interval, for `reason`; `issue`: a repair says why."""
        was_push = self.status.mode == "push"
        self.status.mode = "polling"
        self.status.reason = reason
        if reason != "not_granted":
            self.status.connected_since = None
        self.coordinator.update_interval = _seconds(self.poll_interval)
        if issue is not None:
            ir.async_create_issue(
                self.hass,
                DOMAIN,
                self._issue_id(issue),
                is_fixable=False,
                severity=ir.IssueSeverity.WARNING,
                translation_key=issue,
                translation_placeholders={
                    "title": self.entry.title,
                    "interval": str(round(self.poll_interval)),
                },
            )
        if was_push:
            # Back to the entry's own interval now, with a read of what the socket missed.
            self._resync()

    def _issue_id(self, kind: str) -> str:
        return f"{kind}_{self.entry.entry_id}"


def _seconds(value: float) -> timedelta:
    return timedelta(seconds=value)
