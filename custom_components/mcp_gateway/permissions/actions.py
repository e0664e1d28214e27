"""What the backends' actions share: how they are declared, and the entry an action names.

A backend lists its actions as `BackendAction`s; the integration's services.py registers them
all once. Every action names the config entry it acts through (`config_entry_id`), and checks
its caller with the gateway's own policy (`async_authorize`) before it runs: an action is the
backend tool it runs, reached through HA's REST or websocket API instead of the gateway.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass
from typing import Any, Final

from homeassistant.auth.models import User
from homeassistant.auth.permissions.const import POLICY_CONTROL
from homeassistant.config_entries import ConfigEntryState
from homeassistant.core import Context, ServiceCall, ServiceResponse, SupportsResponse
from homeassistant.exceptions import HomeAssistantError, ServiceValidationError, Unauthorized
from homeassistant.helpers.typing import VolSchemaType
from homeassistant.util.hass_dict import HassKey

from ..core.const import CONF_BACKEND, DOMAIN
from ..framework.base import BackendRuntime
from .limits import charge_user
from .policy import PermissionDenied, Refusal, allowed_tiers, describe_tiers, require_backend_call

ATTR_CONFIG_ENTRY_ID: Final = "config_entry_id"

type ActionHandler = Callable[[ServiceCall], Coroutine[Any, Any, ServiceResponse]]
# What asks a person before an action runs a sensitive backend call (the gateway's approval,
# registered by the gateway, which sits above this package): it raises to refuse.
type ActionGate = Callable[
    [ServiceCall, User, BackendRuntime, str, Mapping[str, Any]], Coroutine[Any, Any, None]
]
DATA_ACTION_GATE: HassKey[ActionGate] = HassKey(f"{DOMAIN}_action_gate")


@dataclass(frozen=True, slots=True)
class BackendAction:
    """One action in the integration's domain; its handler checks the caller first."""

    name: str
    schema: VolSchemaType
    handler: ActionHandler
    supports_response: SupportsResponse


def entry_runtime(
    call: ServiceCall, backend: str, *, not_found: str, not_loaded: str | None = None
) -> BackendRuntime:
    """The runtime of the loaded `backend` entry that the call names.

    Otherwise a ServiceValidationError: `not_found` (placeholder `entry_id`) for no such entry,
    and `not_loaded` (placeholder `title`) for one that is not loaded, or `not_found` again
    where the backend has no message of its own for that.
    """
    entry_id: str = call.data[ATTR_CONFIG_ENTRY_ID]
    entry = call.hass.config_entries.async_get_entry(entry_id)
    if entry is None or entry.domain != DOMAIN or entry.data.get(CONF_BACKEND) != backend:
        raise _not_found(not_found, entry_id)
    if entry.state is not ConfigEntryState.LOADED:
        if not_loaded is None:
            raise _not_found(not_found, entry_id)
        raise ServiceValidationError(
            translation_domain=DOMAIN,
            translation_key=not_loaded,
            translation_placeholders={"title": entry.title},
        )
    runtime: BackendRuntime = entry.runtime_data
    return runtime


def _not_found(key: str, entry_id: str) -> ServiceValidationError:
    return ServiceValidationError(
        translation_domain=DOMAIN,
        translation_key=key,
        translation_placeholders={"entry_id": entry_id},
    )


# Translation keys of the refusals, by the policy's reason.
_REFUSAL_KEYS: Final[Mapping[Refusal, str]] = {
    Refusal.TIER: "action_tier_denied",
    Refusal.READ: "action_read_denied",
    Refusal.CONTROL: "action_control_denied",
    Refusal.UNMAPPED: "action_devices_denied",
    Refusal.OTHER: "action_denied",
}


class ActionUnauthorized(Unauthorized, ServiceValidationError):
    """A refusal, with a translated message that says what the user lacks.

    Both of HA's own kinds, so each of HA's doors answers it as a refusal of the call, not a
    failure of the integration: the websocket's `call_service` as a ServiceValidationError
    (`service_validation_error` with the translated message and one log line; any other
    HomeAssistantError there is `home_assistant_error`, logged as unexpected with its
    traceback on HA 2025.4); REST as Unauthorized on 2025.4 (401), and on the current release,
    whose API answers a ServiceValidationError first, as 400 with the translated message.
    """

    def __init__(
        self, context: Context, key: str, placeholders: dict[str, str] | None = None
    ) -> None:
        super().__init__(context=context, user_id=context.user_id, permission=POLICY_CONTROL)
        # Unauthorized takes no translation arguments; these are what HA reads to render one.
        self.translation_domain = DOMAIN
        self.translation_key = key
        self.translation_placeholders = placeholders or {}
        self.generate_message = True


async def async_authorize(
    call: ServiceCall,
    runtime: BackendRuntime,
    tool: str,
    arguments: Mapping[str, Any],
    *,
    charge: bool = True,
) -> None:
    """Refuse the call unless its user may run `tool` with `arguments` through the gateway.

    The same function decides gateway tool calls (policy.require_backend_call): the tool's
    tier from the backend's table, then HA's entity permissions on what it addresses. A call
    without a user (automations, scripts, HA itself) runs with HA's own trust, as core's
    actions do; an unknown or deactivated user is refused. A user's call is charged to their
    gateway rate limit, the budget every door to the backends shares (unless `charge` is
    False: a check ahead of the call that will be charged).
    """
    user_id = call.context.user_id
    if user_id is None:
        return
    action = f"{DOMAIN}.{call.service}"
    user = await call.hass.auth.async_get_user(user_id)
    if user is None or not user.is_active:
        raise ActionUnauthorized(call.context, "action_unknown_user", {"action": action})
    if charge and (wait := charge_user(call.hass, user)) is not None:
        raise HomeAssistantError(
            translation_domain=DOMAIN,
            translation_key="action_rate_limited",
            translation_placeholders={"action": action, "seconds": str(wait)},
        )
    try:
        require_backend_call(
            call.hass,
            user,
            runtime,
            tool_class=runtime.call_class(runtime.tool_class({"name": tool}), tool, arguments),
            name=tool,
            args=arguments,
            what=action,
        )
    except PermissionDenied as err:
        raise ActionUnauthorized(
            call.context,
            _REFUSAL_KEYS[err.reason],
            {
                "action": action,
                "subjects": ", ".join(err.subjects),
                "tiers": describe_tiers(allowed_tiers(user)),
            },
        ) from err
    # An action is the backend tool it runs: what would wait for a person through the
    # gateway waits here too (not on the check ahead of the call: that only asks rights).
    if charge and (gate := call.hass.data.get(DATA_ACTION_GATE)) is not None:
        await gate(call, user, runtime, tool, arguments)
