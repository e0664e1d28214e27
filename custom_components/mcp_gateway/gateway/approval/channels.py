"""Where approvers are asked: their phones and Home Assistant's own UI.

The phone: the mobile app's actionable notifications (`notify.mobile_app_<device>` with
`data.actions`), sent only to the devices an administrator picked in the gateway settings
whose user may decide the request. A tap comes back as a `mobile_app_notification_action`
event, which the app fires through its device's webhook. Anyone signed in can fire that event
too (REST `/api/events`, websocket `fire_event`, the webhook of a device they registered),
with their own user as its context, so a tap counts only when:
- its action carries the one-time secret sent to that very device for that very request
  (each device gets its own; compared in constant time), which no caller ever sees;
- it comes through that device's webhook (or from Home Assistant Cloud's relay of it, which
  runs outside any HTTP request), never through an authenticated API request;
- the event's user is the device's, still an approver, and the device was not registered
  with the AI app's kind of token (phones.py).

The UI: a repair issue per request (Settings → Repairs, with the badge HA shows for issues,
administrators only) whose fix flow offers Approve and Decline. Repairs is where HA asks a
person to decide something and lets a flow act on the answer. No persistent notification:
every user sees those, and a request names who asked for what. Both are in memory only: a
restart leaves nothing to approve.
"""

from __future__ import annotations

from dataclasses import dataclass
import hmac
import logging
import secrets
from typing import Any, Final

from homeassistant.config_entries import ConfigEntry
from homeassistant.core import Event, HomeAssistant, callback
from homeassistant.helpers import issue_registry as ir
from homeassistant.helpers.http import current_request
from homeassistant.helpers.translation import async_get_translations
from homeassistant.util import dt as dt_util

from ...core.const import DOMAIN
from ...core.settings import gateway_settings
from .manager import Channel, Pending, approval_manager, async_approver_ids
from .phones import MOBILE_APP, async_setup_sign_ins, notify_service, registered_by_machine

_LOGGER = logging.getLogger(__name__)

EVENT_NOTIFICATION_ACTION: Final = "mobile_app_notification_action"
# Actions of the notification: the verb, the approval id, "_", the device's one-time secret.
ACTION_APPROVE: Final = "MCP_GATEWAY_APPROVE_"
ACTION_DECLINE: Final = "MCP_GATEWAY_DECLINE_"
ISSUE_PREFIX: Final = "approval_"
ISSUE_KEY: Final = "approval_request"
# The webhook view's path parameter (homeassistant.components.webhook: /api/webhook/{webhook_id}).
_WEBHOOK_ID: Final = "webhook_id"


def issue_id(pending: Pending) -> str:
    """The repair issue of one request."""
    return f"{ISSUE_PREFIX}{pending.id}"


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


@dataclass(frozen=True, slots=True)
class Question:
    """One request as sent to one device: where, whose, and the secret only it was given."""

    entry_id: str  # the device's mobile_app config entry
    user_id: str
    service: str
    secret: str


class PhoneChannel:
    """Actionable notifications to the approvers' picked mobile app devices."""

    def __init__(self, hass: HomeAssistant) -> None:
        self.hass = hass
        # What each open request was sent to, to check a tap and to withdraw the question.
        self.sent: dict[str, list[Question]] = {}

    def __repr__(self) -> str:
        return "phone"

    def phones_of(self, user_ids: set[str]) -> list[tuple[ConfigEntry, str]]:
        """The picked devices (entry, notify service) of these users that may be asked."""
        picked = gateway_settings(self.hass).approval_phones
        entries = self.hass.config_entries.async_entries(MOBILE_APP)
        services = [notify_service(entry) for entry in entries]
        phones: list[tuple[ConfigEntry, str]] = []
        for entry, service in zip(entries, services, strict=True):
            if (
                entry.entry_id not in picked
                or entry.data.get("user_id") not in user_ids
                or registered_by_machine(self.hass, entry.entry_id)
            ):
                continue
            if services.count(service) > 1:
                # The mobile app names a device's notify service after the device's name: with
                # two devices of one name, the question could go to the other one.
                _LOGGER.warning(
                    "Not asking %s for an approval: another mobile app device has its name",
                    entry.title,
                )
                continue
            if self.hass.services.has_service("notify", service):
                phones.append((entry, service))
        return phones

    async def async_open(self, pending: Pending) -> None:
        """Ask each approver who may decide this request on each of their picked devices."""
        manager = approval_manager(self.hass)
        deciders: set[str] = set()
        for user_id in await async_approver_ids(self.hass, gateway_settings(self.hass)):
            user = await self.hass.auth.async_get_user(user_id)
            if await manager.async_may_decide(pending, user, Channel.PHONE):
                deciders.add(user_id)
        phones = self.phones_of(deciders)
        if not phones:
            return
        texts = await _texts(self.hass)
        values = placeholders(pending, details=False)
        questions = self.sent[pending.id] = [
            Question(entry.entry_id, str(entry.data["user_id"]), service, secrets.token_hex(16))
            for entry, service in phones
        ]
        for question in questions:
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
                            "action": f"{ACTION_APPROVE}{pending.id}_{question.secret}",
                            "title": texts.get("approval_action_approve", "Approve"),
                            "authenticationRequired": True,
                        },
                        {
                            "action": f"{ACTION_DECLINE}{pending.id}_{question.secret}",
                            "title": texts.get("approval_action_decline", "Decline"),
                            "destructive": True,
                        },
                    ],
                },
            }
            # Pushes go through the cloud and may take a while: the call does not wait.
            self.hass.async_create_task(self._notify(question.service, data), eager_start=True)

    async def async_close(self, pending: Pending) -> None:
        """Take the question off the devices it went to; its secrets answer nothing more."""
        for question in self.sent.pop(pending.id, []):
            self.hass.async_create_task(
                self._notify(
                    question.service,
                    {"message": "clear_notification", "data": {"tag": _tag(pending)}},
                ),
                eager_start=True,
            )

    async def _notify(self, service: str, data: dict[str, Any]) -> None:
        try:
            await self.hass.services.async_call("notify", service, data, blocking=True)
        except Exception:  # a phone out of reach must not stop the others or the request
            _LOGGER.warning("Could not reach %s for an approval", service, exc_info=True)

    def _question(self, approval_id: str, secret: str) -> Question | None:
        """The question this secret was sent with, for this request (constant time)."""
        found = None
        for question in self.sent.get(approval_id, ()):
            if hmac.compare_digest(question.secret.encode(), secret.encode()):
                found = question
        return found

    def _refusal(self, question: Question, user_id: str | None) -> str | None:
        """Why a tap carrying this question's secret does not count (None: it counts)."""
        request = current_request.get()
        # Home Assistant Cloud relays the phone's webhook outside any HTTP request; any
        # request but the device's own webhook (REST, websocket) is somebody's API call.
        if request is not None:
            webhook_id = request.match_info.get(_WEBHOOK_ID)
            entry = self.hass.config_entries.async_get_entry(question.entry_id)
            own = None if entry is None else entry.data.get(_WEBHOOK_ID)
            if not (
                isinstance(webhook_id, str)
                and isinstance(own, str)
                and hmac.compare_digest(webhook_id.encode(), own.encode())
            ):
                return "it did not come through that device's webhook"
        if user_id != question.user_id:
            return "it came from another user than the device's"
        if question.entry_id not in gateway_settings(self.hass).approval_phones:
            return "that device is no longer picked in the gateway settings"
        if registered_by_machine(self.hass, question.entry_id):
            return "that device was registered with an AI app's token"
        return None

    @callback
    def async_listen(self) -> None:
        """Take answers from the notification's buttons.

        A callback, so it runs inside whatever fired the event and sees its HTTP request.
        """

        @callback
        def _action(event: Event[dict[str, Any]]) -> None:
            action = event.data.get("action")
            if not isinstance(action, str):
                return
            if action.startswith(ACTION_APPROVE):
                approved, rest = True, action.removeprefix(ACTION_APPROVE)
            elif action.startswith(ACTION_DECLINE):
                approved, rest = False, action.removeprefix(ACTION_DECLINE)
            else:
                return
            approval_id, _, secret = rest.rpartition("_")
            question = self._question(approval_id, secret) if approval_id and secret else None
            if question is None:
                _LOGGER.warning(
                    "Ignored an approval answer from user %s: it carries no secret sent to "
                    "a phone for an open request",
                    event.context.user_id,
                )
                return
            if (why := self._refusal(question, event.context.user_id)) is not None:
                _LOGGER.warning("Ignored an approval answer from a phone: %s", why)
                return
            self.hass.async_create_task(
                approval_manager(self.hass).async_decide(
                    approval_id, approved, user_id=question.user_id, channel=Channel.PHONE
                ),
                eager_start=True,
            )

        self.hass.bus.async_listen(EVENT_NOTIFICATION_ACTION, _action)


class UiChannel:
    """A repair issue with Approve/Decline (Settings → Repairs, administrators only)."""

    def __init__(self, hass: HomeAssistant) -> None:
        self.hass = hass

    def __repr__(self) -> str:
        return "ui"

    async def async_open(self, pending: Pending) -> None:
        """Put the request under Settings → Repairs."""
        ir.async_create_issue(
            self.hass,
            DOMAIN,
            issue_id(pending),
            is_fixable=True,
            is_persistent=False,
            severity=ir.IssueSeverity.WARNING,
            translation_key=ISSUE_KEY,
            translation_placeholders=placeholders(pending, details=False),
            data={"approval_id": pending.id},
        )

    async def async_close(self, pending: Pending) -> None:
        """Remove it once the request is decided or expired."""
        ir.async_delete_issue(self.hass, DOMAIN, issue_id(pending))


@callback
def async_setup_channels(hass: HomeAssistant) -> None:
    """Give the manager its channels, once per Home Assistant run."""
    manager = approval_manager(hass)
    if manager.channels:
        return
    phone = PhoneChannel(hass)
    phone.async_listen()
    manager.channels.extend((phone, UiChannel(hass)))
    # Until the notes of who registered which phone are loaded, no phone is asked.
    hass.async_create_task(async_setup_sign_ins(hass), eager_start=True)
