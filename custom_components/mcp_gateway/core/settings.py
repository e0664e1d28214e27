"""Gateway-wide settings: the options of the singleton `gateway` config entry, or defaults."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from homeassistant.core import HomeAssistant
from homeassistant.helpers.selector import (
    BooleanSelector,
    EntitySelector,
    EntitySelectorConfig,
    NumberSelector,
    NumberSelectorConfig,
    NumberSelectorMode,
    SelectOptionDict,
    SelectSelector,
    SelectSelectorConfig,
    SelectSelectorMode,
    TextSelector,
    TextSelectorConfig,
    TextSelectorType,
)
import voluptuous as vol
from yarl import URL

from .const import CONF_BACKEND, DOMAIN

# entry.data[CONF_BACKEND] of the settings entry; it is no backend and has no runtime.
KIND_GATEWAY: Final = "gateway"
GATEWAY_UNIQUE_ID: Final = "gateway"
GATEWAY_TITLE: Final = "MCP gateway"

CONF_ALLOWED_ORIGINS: Final = "allowed_origins"
CONF_RATE_LIMIT: Final = "rate_limit_per_minute"
CONF_ALLOW_NON_ADMIN: Final = "allow_non_admin"
CONF_EXPOSED_ONLY: Final = "exposed_only"
CONF_MAX_ANSWER_MIB: Final = "max_backend_answer_mib"
CONF_APPROVAL: Final = "approval"
CONF_APPROVAL_TIMEOUT: Final = "approval_timeout"
CONF_APPROVERS: Final = "approvers"
CONF_APPROVAL_EXEMPT: Final = "approval_exempt_users"
CONF_APPROVAL_ENTITIES: Final = "approval_entities"
CONF_APPROVAL_TOOLS: Final = "approval_tools"
CONF_AUTOMATIONS_FOR_USERS: Final = "automations_for_users"
CONF_APPROVAL_PHONES: Final = "approval_phones"
CONF_IN_APP_APPROVAL: Final = "in_app_approval"

# What an approval is about, for the approval in the AI app (gateway/approval/in_app.py): a
# person unlocking, disarming, letting someone in, or storing something that will do so later
# decides on a phone or in Home Assistant, which the AI app cannot reach.
CATEGORY_LOCKS: Final = "locks"
CATEGORY_ALARMS: Final = "alarms"
CATEGORY_COVERS: Final = "covers"
CATEGORY_AUTOMATIONS: Final = "automations"
CATEGORY_OTHER: Final = "other"
APPROVAL_CATEGORIES: Final = (
    CATEGORY_LOCKS,
    CATEGORY_ALARMS,
    CATEGORY_COVERS,
    CATEGORY_AUTOMATIONS,
    CATEGORY_OTHER,
)
# Approval in the AI app is on by default only for what lets nobody in: destructive backend
# tools and what the owner added. The AI app can answer its own question (README).
DEFAULT_IN_APP_APPROVAL: Final = (CATEGORY_OTHER,)

# The options form's upper bound; a higher rate is no limit worth having.
MAX_RATE_LIMIT: Final = 10_000
# Requests (batch items counted) per user and minute unless the settings say otherwise: an
# assistant rarely needs more than a couple a second, and one user can never flood HA.
DEFAULT_RATE_LIMIT: Final = 120
# The most one backend answer may hold (MiB) before it is refused unread. The Hubitat app caps
# its own answers at 128 KiB (hubitat-mcp-server.groovy, hubResponseCapBytes); a HomeKit home's
# whole state is a few hundred KiB. Far below what would strain Home Assistant's memory.
DEFAULT_MAX_ANSWER_MIB: Final = 4
MAX_MAX_ANSWER_MIB: Final = 64

# Seconds a person has to approve a sensitive call; past it the call counts as declined.
DEFAULT_APPROVAL_TIMEOUT: Final = 60
MIN_APPROVAL_TIMEOUT: Final = 15
MAX_APPROVAL_TIMEOUT: Final = 600

_DEFAULT_PORTS: Final = {"http": 80, "https": 443}


@dataclass(frozen=True, slots=True)
class GatewaySettings:
    """What every gateway request consults."""

    # Browser origins allowed besides Home Assistant's own URLs ("scheme://host[:port]";
    # a port of "*" matches any port of that host).
    allowed_origins: tuple[str, ...] = ()
    # Requests per user per minute (each batch item counts); always on.
    rate_limit_per_minute: int = DEFAULT_RATE_LIMIT
    allow_non_admin: bool = True
    # Only entities exposed to assistants (Settings → Voice assistants → Expose) are reachable,
    # as through HA's own MCP server and Assist; off makes every entity of our backends reachable.
    exposed_only: bool = True
    # The cap on one answer of a backend (its MCP client reads no further), in MiB.
    max_backend_answer_mib: int = DEFAULT_MAX_ANSWER_MIB
    # A person approves sensitive calls (approval.py says which) before they run.
    approval: bool = True
    approval_timeout: int = DEFAULT_APPROVAL_TIMEOUT
    # HA user ids asked to approve; none: every active administrator (the owner included).
    approvers: tuple[str, ...] = ()
    # HA user ids whose calls never wait for approval (e.g. a trusted automation's user).
    approval_exempt_users: tuple[str, ...] = ()
    # Entities any change of which needs approval, beside the built-in sensitive ones.
    approval_entities: tuple[str, ...] = ()
    # Backend tool names (as the backend names them) that need approval, beside destructive ones.
    approval_tools: tuple[str, ...] = ()
    # Users who are not administrators may have assistants save and delete automations (only
    # over entities they may use); HA itself lets only administrators edit automations.
    automations_for_users: bool = False
    # The mobile app devices (their mobile_app config entry ids) asked to approve, picked by an
    # administrator; none: no phone is asked.
    approval_phones: tuple[str, ...] = ()
    # The categories an approver may approve in the AI app itself (MCP elicitation).
    in_app_approval: tuple[str, ...] = DEFAULT_IN_APP_APPROVAL

    @property
    def max_backend_answer_bytes(self) -> int:
        """The cap on one backend answer, in bytes."""
        return self.max_backend_answer_mib * 1024 * 1024


DEFAULT_SETTINGS: Final = GatewaySettings()


# The gateway entry last read, its options then and what they gave. A gateway request consults
# the settings several times; HA replaces an entry's options mapping on each update, so the
# same mapping under the same entry id means nothing changed, and no entry list is walked.
_last_read: list[tuple[str, Mapping[str, Any], GatewaySettings]] = []


def gateway_settings(hass: HomeAssistant) -> GatewaySettings:
    """The settings of the gateway entry (loaded or not), else the defaults."""
    if _last_read:
        entry_id, options, settings = _last_read[0]
        known = hass.config_entries.async_get_entry(entry_id)
        if known is not None and known.options is options:
            return settings
    for entry in hass.config_entries.async_entries(DOMAIN):
        if entry.data.get(CONF_BACKEND) == KIND_GATEWAY:
            options = entry.options
            settings = settings_from_options(options)
            _last_read[:] = [(entry.entry_id, options, settings)]
            return settings
    return DEFAULT_SETTINGS


def backend_answer_cap(hass: HomeAssistant) -> Callable[[], int]:
    """A backend client's `max_response_bytes`: the settings' cap at each read, so a change
    applies without reloading the backends."""
    return lambda: gateway_settings(hass).max_backend_answer_bytes


def settings_from_options(options: Mapping[str, Any]) -> GatewaySettings:
    """Read stored options leniently: a malformed value falls back to its default."""
    origins = options.get(CONF_ALLOWED_ORIGINS, ())
    if isinstance(origins, str):
        origins = split_origins(origins)
    rate = options.get(CONF_RATE_LIMIT)
    answer_mib = options.get(CONF_MAX_ANSWER_MIB)
    return GatewaySettings(
        allowed_origins=tuple(
            normalized
            for origin in origins
            if isinstance(origin, str) and (normalized := normalize_origin(origin))
        ),
        # 0 (what older forms stored for "no limit"), missing or malformed: the default.
        rate_limit_per_minute=min(rate, MAX_RATE_LIMIT)
        if isinstance(rate, int) and not isinstance(rate, bool) and rate > 0
        else DEFAULT_RATE_LIMIT,
        allow_non_admin=bool(options.get(CONF_ALLOW_NON_ADMIN, True)),
        exposed_only=bool(options.get(CONF_EXPOSED_ONLY, True)),
        max_backend_answer_mib=min(answer_mib, MAX_MAX_ANSWER_MIB)
        if isinstance(answer_mib, int) and not isinstance(answer_mib, bool) and answer_mib > 0
        else DEFAULT_MAX_ANSWER_MIB,
        approval=bool(options.get(CONF_APPROVAL, True)),
        approval_timeout=_approval_timeout(options.get(CONF_APPROVAL_TIMEOUT)),
        approvers=_strings(options.get(CONF_APPROVERS)),
        approval_exempt_users=_strings(options.get(CONF_APPROVAL_EXEMPT)),
        approval_entities=_strings(options.get(CONF_APPROVAL_ENTITIES)),
        approval_tools=_strings(options.get(CONF_APPROVAL_TOOLS)),
        automations_for_users=bool(options.get(CONF_AUTOMATIONS_FOR_USERS, False)),
        approval_phones=_strings(options.get(CONF_APPROVAL_PHONES)),
        in_app_approval=_categories(options.get(CONF_IN_APP_APPROVAL, DEFAULT_IN_APP_APPROVAL)),
    )


def _categories(value: Any) -> tuple[str, ...]:
    """Stored approval categories, unknown ones dropped."""
    return tuple(item for item in _strings(value) if item in APPROVAL_CATEGORIES)


def _approval_timeout(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return DEFAULT_APPROVAL_TIMEOUT
    return int(min(max(value, MIN_APPROVAL_TIMEOUT), MAX_APPROVAL_TIMEOUT))


def _strings(value: Any) -> tuple[str, ...]:
    """A stored list of names or ids, blanks and duplicates dropped."""
    if isinstance(value, str):
        value = split_origins(value)
    if not isinstance(value, list | tuple):
        return ()
    return tuple(
        dict.fromkeys(item.strip() for item in value if isinstance(item, str) and item.strip())
    )


def split_origins(text: str) -> list[str]:
    """Origins typed as one text: separated by commas, spaces or new lines."""
    return [part for part in text.replace(",", " ").split() if part]


def normalize_origin(origin: str) -> str | None:
    """`scheme://host[:port]` in lower case without a default port; None if not an origin.

    A port of `*` is kept as a wildcard. Paths, queries, fragments and credentials make a
    value no origin at all (browsers never send them).
    """
    text = origin.strip()
    wildcard = text.endswith(":*")
    if wildcard:
        text = text[:-2]
    try:
        url = URL(text)
    except ValueError:
        return None
    if (
        url.scheme not in ("http", "https")
        or not url.host
        or url.path not in ("", "/")
        or url.query_string
        or url.fragment
        or url.user is not None
        or (wildcard and url.explicit_port is not None)
    ):
        return None
    host = url.host.lower()
    if ":" in host:  # an IPv6 literal keeps its brackets in an origin
        host = f"[{host}]"
    base = f"{url.scheme}://{host}"
    if wildcard:
        return f"{base}:*"
    if url.explicit_port is not None and url.explicit_port != _DEFAULT_PORTS[url.scheme]:
        return f"{base}:{url.explicit_port}"
    return base


def origin_allowed(origin: str, allowed: Iterable[str]) -> bool:
    """Whether a request's Origin equals one of the allowed (normalized) origins."""
    candidate = normalize_origin(origin)
    if candidate is None:
        return False
    for entry in allowed:
        if entry.endswith(":*"):
            base = entry[:-2]
            if candidate == base or candidate.startswith(f"{base}:"):
                return True
        elif candidate == entry:
            return True
    return False


def settings_schema(
    options: Mapping[str, Any],
    users: Sequence[tuple[str, str]] = (),
    phones: Sequence[tuple[str, str]] = (),
) -> vol.Schema:
    """The form of the gateway entry (creation, options and reconfigure share it).

    `users` are (id, name) of the people who can be chosen as approvers or exempted; `phones`
    (mobile_app entry id, name) the devices that can be picked to ask approvers.
    """
    current = settings_from_options(options)
    known = {user_id for user_id, _ in users}
    known_phones = {entry_id for entry_id, _ in phones}
    people = SelectSelector(
        SelectSelectorConfig(
            options=[SelectOptionDict(value=user_id, label=name) for user_id, name in users],
            multiple=True,
            mode=SelectSelectorMode.DROPDOWN,
        )
    )
    return vol.Schema(
        {
            vol.Optional(CONF_ALLOWED_ORIGINS, default=list(current.allowed_origins)): TextSelector(
                TextSelectorConfig(type=TextSelectorType.URL, multiple=True)
            ),
            vol.Optional(CONF_RATE_LIMIT, default=current.rate_limit_per_minute): NumberSelector(
                NumberSelectorConfig(min=1, max=MAX_RATE_LIMIT, step=1, mode=NumberSelectorMode.BOX)
            ),
            vol.Optional(CONF_ALLOW_NON_ADMIN, default=current.allow_non_admin): BooleanSelector(),
            vol.Optional(CONF_EXPOSED_ONLY, default=current.exposed_only): BooleanSelector(),
            vol.Optional(
                CONF_MAX_ANSWER_MIB, default=current.max_backend_answer_mib
            ): NumberSelector(
                NumberSelectorConfig(
                    min=1,
                    max=MAX_MAX_ANSWER_MIB,
                    step=1,
                    mode=NumberSelectorMode.BOX,
                    unit_of_measurement="MiB",
                )
            ),
            vol.Optional(CONF_APPROVAL, default=current.approval): BooleanSelector(),
            vol.Optional(CONF_APPROVAL_TIMEOUT, default=current.approval_timeout): NumberSelector(
                NumberSelectorConfig(
                    min=MIN_APPROVAL_TIMEOUT,
                    max=MAX_APPROVAL_TIMEOUT,
                    step=1,
                    mode=NumberSelectorMode.BOX,
                    unit_of_measurement="s",
                )
            ),
            vol.Optional(
                CONF_APPROVERS, default=[u for u in current.approvers if u in known]
            ): people,
            vol.Optional(
                CONF_APPROVAL_EXEMPT,
                default=[u for u in current.approval_exempt_users if u in known],
            ): people,
            vol.Optional(
                CONF_APPROVAL_ENTITIES, default=list(current.approval_entities)
            ): EntitySelector(EntitySelectorConfig(multiple=True)),
            vol.Optional(CONF_APPROVAL_TOOLS, default=list(current.approval_tools)): TextSelector(
                TextSelectorConfig(multiple=True)
            ),
            vol.Optional(
                CONF_AUTOMATIONS_FOR_USERS, default=current.automations_for_users
            ): BooleanSelector(),
            vol.Optional(
                CONF_APPROVAL_PHONES,
                default=[p for p in current.approval_phones if p in known_phones],
            ): SelectSelector(
                SelectSelectorConfig(
                    options=[SelectOptionDict(value=key, label=name) for key, name in phones],
                    multiple=True,
                    mode=SelectSelectorMode.DROPDOWN,
                )
            ),
            vol.Optional(
                CONF_IN_APP_APPROVAL, default=list(current.in_app_approval)
            ): SelectSelector(
                SelectSelectorConfig(
                    options=list(APPROVAL_CATEGORIES),
                    multiple=True,
                    mode=SelectSelectorMode.LIST,
                    translation_key=CONF_IN_APP_APPROVAL,
                )
            ),
        }
    )


def options_from_input(user_input: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """Validate a submitted form: the options to store, and the form errors (if any)."""
    raw = user_input.get(CONF_ALLOWED_ORIGINS) or []
    if isinstance(raw, str):
        raw = split_origins(raw)
    origins: list[str] = []
    for value in raw:
        if not str(value).strip():
            continue
        if (origin := normalize_origin(str(value))) is None:
            return {}, {CONF_ALLOWED_ORIGINS: "invalid_origin"}
        if origin not in origins:
            origins.append(origin)
    options = {
        CONF_ALLOWED_ORIGINS: origins,
        CONF_RATE_LIMIT: int(user_input.get(CONF_RATE_LIMIT) or DEFAULT_RATE_LIMIT),
        CONF_ALLOW_NON_ADMIN: bool(user_input.get(CONF_ALLOW_NON_ADMIN, True)),
        CONF_EXPOSED_ONLY: bool(user_input.get(CONF_EXPOSED_ONLY, True)),
        CONF_MAX_ANSWER_MIB: min(
            int(user_input.get(CONF_MAX_ANSWER_MIB) or DEFAULT_MAX_ANSWER_MIB), MAX_MAX_ANSWER_MIB
        ),
        CONF_APPROVAL: bool(user_input.get(CONF_APPROVAL, True)),
        CONF_APPROVAL_TIMEOUT: _approval_timeout(
            int(user_input.get(CONF_APPROVAL_TIMEOUT) or DEFAULT_APPROVAL_TIMEOUT)
        ),
        CONF_APPROVERS: list(_strings(user_input.get(CONF_APPROVERS))),
        CONF_APPROVAL_EXEMPT: list(_strings(user_input.get(CONF_APPROVAL_EXEMPT))),
        CONF_APPROVAL_ENTITIES: list(_strings(user_input.get(CONF_APPROVAL_ENTITIES))),
        CONF_APPROVAL_TOOLS: list(_strings(user_input.get(CONF_APPROVAL_TOOLS))),
        CONF_AUTOMATIONS_FOR_USERS: bool(user_input.get(CONF_AUTOMATIONS_FOR_USERS, False)),
        CONF_APPROVAL_PHONES: list(_strings(user_input.get(CONF_APPROVAL_PHONES))),
        CONF_IN_APP_APPROVAL: list(
            _categories(user_input.get(CONF_IN_APP_APPROVAL, DEFAULT_IN_APP_APPROVAL))
        ),
    }
    return options, {}
