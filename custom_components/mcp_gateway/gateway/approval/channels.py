"""Where approvers are asked: their phones and Home Assistant's own UI.

The phone: the mobile app's actionable notifications (`notify.mobile_app_<device>` with
`data.actions`), sent to every device the mobile app registered for an approver; a tap comes
back as a `mobile_app_notification_action` event, which the app fires through its webhook
under the context of the user the device was registered for (mobile_app's
`registration_context`). That user is the one who decides, and only a user with a registered
device counts: an event fired through HA's API by someone without a phone is not a tap.

The UI: a repair issue per request (Settings → Repairs, with the badge HA shows for issues)
whose fix flow offers Approve and Decline, and a persistent notification (the bell every user
sees) that points there. Repairs is where HA asks a person to decide something and lets a
flow act on the answer; a notification alone cannot carry buttons. Both are in memory only:
a restart leaves nothing to approve.
"""

from __future__ import annotations

import logging
from typing import Any, Final

from homeassistant.components import persistent_notification
from homeassistant.core import Event, HomeAssistant, callback
from homeassistant.helpers import issue_registry as ir
from homeassistant.helpers.translation import async_get_translations
from homeassistant.util import dt as dt_util, slugify

from ...core.const import DOMAIN
from ...core.settings import gateway_settings
from .manager import Channel, Pending, approval_manager, async_approver_ids

_LOGGER = logging.getLogger(__name__)

MOBILE_APP: Final = "mobile_app"
EVENT_NOTIFICATION_ACTION: Final = "mobile_app_notification_action"
# Actions of the notification: the verb, then the approval id (unguessable).
ACTION_APPROVE: Final = "MCP_GATEWAY_APPROVE_"
ACTION_DECLINE: Final = "MCP_GATEWAY_DECLINE_"
ISSUE_PREFIX: Final = "approval_"
ISSUE_KEY: Final = "approval_request"


def issue_id(pending: Pending) -> str:
    """The repair issue of one request."""
    return f"{ISSUE_PREFIX}{pending.id}"


def notification_id(pending: Pending) -> str:
    """The persistent notification of one request."""
    return f"{DOMAIN}_{ISSUE_PREFIX}{pending.id}"


def _tag(pending: Pending) -> str:
    return f"{DOMAIN}_{pending.id}"


def placeholders(pending: Pending, *, details: bool = True) -> dict[str, str]:
    """What each text about a request shows: what, who, through what, until when. The
    details (an automation's exact config) follow the summary where there is room: not in a
    title or a push notification."""
    summary = pending.summary
    if details and pending.details:
        summary = f"{summary}\n\n{pending.details}"
    return {
        "summary": summary,
        "user": pending.user_name,
        "client": pending.client_name,
        "expires": dt_util.as_local(pending.deadline).strftime("%H:%M:%S"),
    }


async def _texts(hass: HomeAssistant) -> dict[str, str]:
    """The notification texts in Home Assistant's language (English where it has none)."""
    prefix = f"component.{DOMAIN}.exceptions."
    texts = await async_get_translations(hass, "en", "exceptions", [DOMAIN])
    if hass.config.language != "en":
        texts = {
            **texts,
            **await async_get_translations(hass, hass.config.language, "exceptions", [DOMAIN]),
        }
    return {
        key[len(prefix) : -len(".message")]: value
        for key, value in texts.items()
        if key.startswith(prefix) and key.endswith(".message")
    }


def _format(text: str, values: dict[str, str]) -> str:
    for key, value in values.items():
        text = text.replace(f"{{{key}}}", value)
    return text


class PhoneChannel:
    """Actionable notifications to the approvers' mobile app devices."""

    def __init__(self, hass: HomeAssistant) -> None:
        self.hass = hass
        # The notify services each open request went to, to withdraw it there.
        self._sent: dict[str, list[str]] = {}

    def __repr__(self) -> str:
        return "phone"

    def services_of(self, user_ids: set[str]) -> list[str]:
        """The notify services of the mobile app devices registered for these users."""
        services: list[str] = []
        for entry in self.hass.config_entries.async_entries(MOBILE_APP):
            if entry.data.get("user_id") not in user_ids:
                continue
            name = f"{MOBILE_APP}_{slugify(str(entry.data.get('device_name', '')))}"
            if self.hass.services.has_service("notify", name) and name not in services:
                services.append(name)
        return services

    def owns_a_device(self, user_id: str | None) -> bool:
        """Whether the mobile app registered a device for this user."""
        return user_id is not None and any(
            entry.data.get("user_id") == user_id
            for entry in self.hass.config_entries.async_entries(MOBILE_APP)
        )

    async def async_open(self, pending: Pending) -> None:
        """Ask each approver who may decide this request on each of their devices."""
        manager = approval_manager(self.hass)
        deciders: set[str] = set()
        for user_id in await async_approver_ids(self.hass, gateway_settings(self.hass)):
            user = await self.hass.auth.async_get_user(user_id)
            if await manager.async_may_decide(pending, user, Channel.PHONE):
                deciders.add(user_id)
        services = self.services_of(deciders)
        if not services:
            return
        texts = await _texts(self.hass)
        values = placeholders(pending, details=False)
        data: dict[str, Any] = {
            "title": texts.get("approval_notification_title", "Approve?"),
            "message": _format(texts.get("approval_notification_message", "{summary}"), values),
            "data": {
                "tag": _tag(pending),
                # Time-sensitive on iOS, high priority on Android: it should not wait.
                "push": {"interruption-level": "time-sensitive"},
                "priority": "high",
                "ttl": 0,
                "actions": [
                    {
                        "action": f"{ACTION_APPROVE}{pending.id}",
                        "title": texts.get("approval_action_approve", "Approve"),
                        "authenticationRequired": True,
                    },
                    {
                        "action": f"{ACTION_DECLINE}{pending.id}",
                        "title": texts.get("approval_action_decline", "Decline"),
                        "destructive": True,
                    },
                ],
            },
        }
        self._sent[pending.id] = services
        for service in services:
            # Pushes go through the cloud and may take a while: the call does not wait.
            self.hass.async_create_task(self._notify(service, data), eager_start=True)

    async def async_close(self, pending: Pending) -> None:
        """Take the question off the devices it went to."""
        for service in self._sent.pop(pending.id, []):
            self.hass.async_create_task(
                self._notify(
                    service, {"message": "clear_notification", "data": {"tag": _tag(pending)}}
                ),
                eager_start=True,
            )

    async def _notify(self, service: str, data: dict[str, Any]) -> None:
        try:
            await self.hass.services.async_call("notify", service, data, blocking=True)
        except Exception:  # a phone out of reach must not stop the others or the request
            _LOGGER.warning("Could not reach %s for an approval", service, exc_info=True)

    @callback
    def async_listen(self) -> None:
        """Take answers from the notification's buttons."""

        async def _action(event: Event[dict[str, Any]]) -> None:
            action = event.data.get("action")
            if not isinstance(action, str):
                return
            if action.startswith(ACTION_APPROVE):
                approved, approval_id = True, action.removeprefix(ACTION_APPROVE)
            elif action.startswith(ACTION_DECLINE):
                approved, approval_id = False, action.removeprefix(ACTION_DECLINE)
            else:
                return
            user_id = event.context.user_id
            if not self.owns_a_device(user_id):
                _LOGGER.warning(
                    "Ignored an approval answer from user %s, who has no mobile app device",
                    user_id,
                )
                return
            await approval_manager(self.hass).async_decide(
                approval_id, approved, user_id=user_id, channel=Channel.PHONE
            )

        self.hass.bus.async_listen(EVENT_NOTIFICATION_ACTION, _action)


class UiChannel:
    """A repair issue with Approve/Decline, and a notification that points to it."""

    def __init__(self, hass: HomeAssistant) -> None:
        self.hass = hass

    def __repr__(self) -> str:
        return "ui"

    async def async_open(self, pending: Pending) -> None:
        """Put the request under Settings → Repairs and in the notifications."""
        values = placeholders(pending, details=False)
        ir.async_create_issue(
            self.hass,
            DOMAIN,
            issue_id(pending),
            is_fixable=True,
            is_persistent=False,
            severity=ir.IssueSeverity.WARNING,
            translation_key=ISSUE_KEY,
            translation_placeholders=values,
            data={"approval_id": pending.id},
        )
        values = placeholders(pending)
        texts = await _texts(self.hass)
        persistent_notification.async_create(
            self.hass,
            _format(texts.get("approval_notification_ui", "{summary}"), values),
            texts.get("approval_notification_title", "Approve?"),
            notification_id(pending),
        )

    async def async_close(self, pending: Pending) -> None:
        """Remove both once the request is decided or expired."""
        ir.async_delete_issue(self.hass, DOMAIN, issue_id(pending))
        persistent_notification.async_dismiss(self.hass, notification_id(pending))


@callback
def async_setup_channels(hass: HomeAssistant) -> None:
    """Give the manager its channels, once per Home Assistant run."""
    manager = approval_manager(hass)
    if manager.channels:
        return
    phone = PhoneChannel(hass)
    phone.async_listen()
    manager.channels.extend((phone, UiChannel(hass)))
