"""The Homecast backend runtime: client, OAuth session, coordinator, entities, gateway hooks."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
import logging
import math
from typing import Any, ClassVar, Final, Self

from aiohttp import ClientError, ClientResponseError
from homeassistant.const import CONF_URL, Platform
from homeassistant.core import HomeAssistant, callback
from homeassistant.exceptions import ConfigEntryAuthFailed
from homeassistant.helpers import config_entry_oauth2_flow
from homeassistant.helpers.aiohttp_client import async_get_clientsession
from homeassistant.helpers.config_entry_oauth2_flow import LocalOAuth2Implementation
from homeassistant.util import dt as dt_util
from yarl import URL

from ...core.const import DOMAIN
from ...core.localtime import localize_result
from ...core.settings import backend_answer_cap
from ...framework.base import (
    REPORTING_PLATFORMS,
    BackendHealth,
    BackendRuntime,
    CallConfirmation,
    CallEffect,
    McpGatewayConfigEntry,
    Shown,
    ToolClass,
)
from ...framework.entity import EntitySpec
from ...framework.publisher import EntityPublisher
from ...mcp.client import McpAuth, McpClient, ToolResult
from ...mcp.errors import McpAuthError, McpConnectionError, McpError
from ...platforms.scene import async_scene_ran
from .addresses import (
    filter_automations,
    filter_history,
    filter_state,
    history_keys,
    home_by_name,
    home_keys,
    update_keys,
    with_home_key,
)
from .api import WRITE_TIMEOUT, Accessory, HomecastApi, HomecastState, slugify_name
from .confirm import async_confirm_set_state
from .const import (
    AUTH_OAUTH,
    CONF_ACCESS_TOKEN,
    CONF_AUTH_TYPE,
    CONF_HOMES,
    CONF_OAUTH_CLIENT,
    CONF_OAUTH_ENDPOINTS,
    CONF_SCAN_INTERVAL,
    CONF_SERVER,
    DEFAULT_SCAN_INTERVAL,
    PLATFORMS,
    SERVER_COMMUNITY,
)
from .coordinator import HomecastCoordinator
from .effects import call_effect
from .entities import derive_specs
from .oauth import HomecastOAuth2Implementation
from .push import HomecastPush
from .scenes import scene_key
from .tools import TOOL_CLASSES, classify

_LOGGER = logging.getLogger(__name__)

# History reads: addressed by the accessories they may match (addresses.history_keys).
_HISTORY: Final = frozenset({"get_history", "query_history"})
# get_history's `hours` at most (homecast-web src/server/local-mcp.ts: max 8784).
MAX_HISTORY_HOURS: Final = 8784
# get_history's `max_points` at most (local-rest.ts handleGetHistory: 10 to 1000).
MAX_HISTORY_POINTS: Final = 1000
# The characteristic each entity shows, by the name its history is kept under (homecast-web
# src/history/keys.ts canonicalHistoryType): get_history then answers that one series.
_HISTORY_CHARACTERISTICS: Final[Mapping[tuple[Platform, str], str]] = {
    (Platform.SENSOR, "temperature"): "current_temperature",
    (Platform.SENSOR, "humidity"): "relative_humidity",
    (Platform.SENSOR, "illuminance"): "current_ambient_light_level",
    (Platform.BINARY_SENSOR, "motion"): "motion_detected",
    (Platform.BINARY_SENSOR, "contact"): "contact_state",
    (Platform.BINARY_SENSOR, "occupancy"): "occupancy_detected",
    (Platform.LIGHT, "light"): "power_state",
    (Platform.SWITCH, "switch"): "power_state",
    (Platform.LOCK, "lock"): "lock_current_state",
    (Platform.COVER, "cover"): "current_position",
}
# Reads whose answers are filtered per caller (addresses.filter_state, filter_automations).
# Tools of one home, named by its key (the community server takes nothing else): a name given
# instead is sent as the key of the followed home it names.
_ONE_HOME: Final = frozenset(
    {
        *("run_scene", "create_scene", "update_scene", "delete_scene"),
        *("create_automation", "update_automation", "delete_automation"),
    }
)
_LISTINGS: Final = frozenset(
    {"get_state", "get_automations", "get_hc_automations", "query_history"}
)


class MutableBearer(McpAuth):
    """A bearer token that the OAuth session replaces when it refreshes."""

    def __init__(self, token: str) -> None:
        self.token = token

    def __repr__(self) -> str:
        return "MutableBearer(<redacted>)"

    def apply(self, headers: dict[str, str], url: URL) -> URL:
        """Add the current token (none: a community server with authentication off)."""
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        return url


class HomecastRuntime(BackendRuntime):
    """One Homecast account (the homes the user picked)."""

    kind = "homecast"
    platforms: ClassVar[tuple[Platform, ...]] = PLATFORMS
    repeats_core: ClassVar[frozenset[str]] = frozenset({"get_state", "get_history"})

    def __init__(
        self,
        hass: HomeAssistant,
        entry: McpGatewayConfigEntry,
        client: McpClient,
        auth: MutableBearer | None = None,
    ) -> None:
        super().__init__(hass, entry, client)
        # The same object the client holds, so a refreshed token applies to the next call.
        self._auth = auth if auth is not None else MutableBearer("")
        self._oauth: config_entry_oauth2_flow.OAuth2Session | None = None
        self.api = HomecastApi(client, self._ensure_token)
        homes = entry.data.get(CONF_HOMES)
        self.coordinator = HomecastCoordinator(
            hass,
            entry,
            self.api,
            {str(h).lower() for h in homes} if homes else None,
            float(entry.options.get(CONF_SCAN_INTERVAL, DEFAULT_SCAN_INTERVAL)),
        )
        self.publisher = EntityPublisher(hass, self, lambda: derive_specs(self.coordinator))
        # The live-update socket, once set up (push.py); None: polling only.
        self.push: HomecastPush | None = None
        self._tools: list[dict[str, Any]] | None = None
        self._tools_signature: tuple[str, ...] | None = None

    @classmethod
    def from_entry(cls, hass: HomeAssistant, entry: McpGatewayConfigEntry) -> Self:
        """Client on HA's shared session; the OAuth token is filled in at setup."""
        if entry.data.get(CONF_AUTH_TYPE) == AUTH_OAUTH:
            token = str(entry.data.get("token", {}).get("access_token", ""))
        else:
            token = str(entry.data.get(CONF_ACCESS_TOKEN, ""))
        auth = MutableBearer(token)
        client = McpClient(
            async_get_clientsession(hass),
            entry.data[CONF_URL],
            auth=auth,
            client_name="mcp_gateway",
            limits={"write": 2},
            max_response_bytes=backend_answer_cap(hass),
        )
        return cls(hass, entry, client, auth)

    async def async_setup(self) -> None:
        """Prepare OAuth, load the first poll, follow updates with the publisher."""
        if self.entry.data.get(CONF_AUTH_TYPE) == AUTH_OAUTH:
            try:
                implementation = await self._oauth_implementation()
            except ValueError as err:
                # The application credential was removed: only a new login can fix it.
                raise ConfigEntryAuthFailed(
                    translation_domain=DOMAIN, translation_key="homecast_oauth_credential_missing"
                ) from err
            self._oauth = config_entry_oauth2_flow.OAuth2Session(
                self.hass, self.entry, implementation
            )
        await self.coordinator.async_config_entry_first_refresh()
        self.entry.async_on_unload(self.coordinator.async_add_listener(self._on_update))
        self._start_push()

    def _start_push(self) -> None:
        """Follow the server's WebSocket; polling stays the fallback (push.py)."""
        push = HomecastPush(
            self.hass,
            self.entry,
            self.coordinator,
            mcp_url=self.entry.data[CONF_URL],
            community=self.entry.data.get(CONF_SERVER) == SERVER_COMMUNITY,
            token=self._current_token,
            poll_interval=float(self.entry.options.get(CONF_SCAN_INTERVAL, DEFAULT_SCAN_INTERVAL)),
        )
        self.push = push
        push.async_start()
        self.entry.async_on_unload(push.async_stop)

    async def _current_token(self) -> str:
        """The credential the socket presents: the MCP bearer, refreshed when it is OAuth."""
        await self._ensure_token()
        return self._auth.token

    async def _oauth_implementation(
        self,
    ) -> config_entry_oauth2_flow.AbstractOAuth2Implementation:
        """The dynamically registered client (from the entry), else the application credential."""
        client = self.entry.data.get(CONF_OAUTH_CLIENT)
        if client:
            registered = HomecastOAuth2Implementation.from_stored(self.hass, client)
            config_entry_oauth2_flow.async_register_implementation(
                self.hass, self.entry.domain, registered
            )
            return registered
        implementation = await config_entry_oauth2_flow.async_get_config_entry_implementation(
            self.hass, self.entry
        )
        endpoints = self.entry.data.get(CONF_OAUTH_ENDPOINTS)
        if isinstance(implementation, LocalOAuth2Implementation) and endpoints:
            # Application credentials carry no endpoints: they are the server's, from setup.
            implementation.authorize_url = endpoints["authorize_url"]
            implementation.token_url = endpoints["token_url"]
        return implementation

    async def _ensure_token(self) -> None:
        """Refresh an expiring OAuth token before a call; a failed refresh is an auth error."""
        if self._oauth is None:
            return
        try:
            await self._oauth.async_ensure_token_valid()
        except ClientResponseError as err:
            if 400 <= err.status < 500:
                raise McpAuthError(
                    f"Homecast refused to refresh the token (HTTP {err.status})",
                    status=err.status,
                ) from err
            raise McpConnectionError(
                f"token refresh failed (HTTP {err.status})", status=err.status
            ) from err
        except (ClientError, TimeoutError) as err:
            raise McpConnectionError(f"token refresh failed: {err}") from err
        self._auth.token = str(self._oauth.token["access_token"])

    @callback
    def _on_update(self) -> None:
        self.publisher.async_refresh()
        signature = self._catalog_signature()
        if signature != self._tools_signature:
            # Tool descriptions embed home keys and room names: reload them when those change.
            self._tools = None

    def _catalog_signature(self) -> tuple[str, ...]:
        data: HomecastState | None = self.coordinator.data
        if data is None:
            return ()
        keys = {home.key for home in data.homes.values()}
        keys |= {acc.room_key for home in data.homes.values() for acc in home.accessories.values()}
        return tuple(sorted(keys))

    async def async_shutdown(self) -> None:
        """Stop a pending write batch and end the MCP session."""
        await self.api.batcher.async_shutdown()
        await super().async_shutdown()

    # --- gateway hooks -------------------------------------------------------------------

    async def async_list_tools(self) -> list[dict[str, Any]]:
        """The server's tools/list (cached until homes or rooms change)."""
        if self._tools is None:
            await self._ensure_token()
            self._tools = await self.client.list_tools()
            self._tools_signature = self._catalog_signature()
            self.api.learn_tools(self._tools)
        return self._tools

    async def async_call_tool(self, name: str, arguments: Mapping[str, Any]) -> ToolResult:
        """Call a Homecast tool as-is; mutating calls trigger a refresh of our entities."""
        await self._ensure_token()
        tool_class = TOOL_CLASSES.get(name)
        if name in _ONE_HOME:
            arguments = with_home_key(self.coordinator.data, arguments)
        kind = "read" if tool_class is not None and tool_class.tier == "read" else "write"
        timeout = WRITE_TIMEOUT if kind == "write" else None
        result = await self.client.call_tool(name, arguments, kind=kind, timeout=timeout)
        if kind == "write" and not result.is_error:
            self.api.note_success(name, arguments)
            if name == "run_scene":
                self._scene_ran(arguments)
            await self.coordinator.async_request_refresh()
        # Homecast writes UTC; the model reads every time in Home Assistant's zone.
        return localize_result(result)

    async def async_confirm_call(
        self, name: str, arguments: Mapping[str, Any], result: ToolResult
    ) -> CallConfirmation | None:
        """set_state's updates read back (confirm.py): its `updated` count proves nothing."""
        if name != "set_state":
            return None
        return await async_confirm_set_state(self.coordinator, arguments)

    def runs_actions(self, name: str, arguments: Mapping[str, Any]) -> bool:
        """run_scene."""
        return name == "run_scene"

    @callback
    def _scene_ran(self, arguments: Mapping[str, Any]) -> None:
        """A scene run through the tool shows on its HA scene entity, as one run from HA."""
        home = home_by_name(self.coordinator.data, arguments.get("home"))
        wanted = arguments.get("name")
        if home is None or not isinstance(wanted, str):
            return
        # As the scene's entity is keyed: by its name (slugified, so any case matches).
        if any(slugify_name(name) == slugify_name(wanted) for name in home.scenes):
            async_scene_ran(self.hass, self.entry, scene_key(home, wanted))

    def tool_class(self, tool: Mapping[str, Any]) -> ToolClass:
        """Classification from tools.py."""
        return classify(tool)

    def history_call(self, spec: EntitySpec, start: datetime) -> tuple[str, dict[str, Any]] | None:
        """get_history of the entity's accessory (by its home's and its own slug; every
        characteristic it records), over the whole hours back from now that reach `start`."""
        acc = spec.source()
        if not isinstance(acc, Accessory):
            return None  # a home, a scene, an automation: no history of their own
        # A minute's slack: "the last 3 hours" asked a moment ago stays 3, not 4.
        seconds = (dt_util.utcnow() - start).total_seconds() - 60
        hours = max(1, math.ceil(seconds / 3600))
        args: dict[str, Any] = {
            "accessory": acc.key,
            "home": acc.home_key,
            "hours": min(hours, MAX_HISTORY_HOURS),
        }
        characteristic = _HISTORY_CHARACTERISTICS.get((spec.platform, spec.description.key))
        if characteristic is not None:
            # One series, unthinned: a day of half-hourly readings is 48 points.
            args["characteristic"] = characteristic
            args["max_points"] = MAX_HISTORY_POINTS
        return "get_history", args

    def history_events(self, result: ToolResult) -> list[tuple[datetime, str]] | None:
        """get_history's one series (asked by `characteristic`): its values or transitions.
        An answer of several series is not read (the call is offered); {error} (no such
        accessory or characteristic) and history switched off are failures."""
        data = result.data if isinstance(result.data, dict) else {}
        if data.get("error"):
            raise ValueError(str(data["error"]))
        if data.get("enabled") is False:
            raise ValueError(str(data.get("message") or "history is off for this home"))
        series = data.get("series")
        if "series" not in data:
            raise ValueError("the answer holds no series")
        if not isinstance(series, list) or len(series) != 1 or not isinstance(series[0], dict):
            return None
        points = series[0].get("values", series[0].get("transitions"))
        events: list[tuple[datetime, str]] = []
        for point in points if isinstance(points, list) else ():
            if isinstance(point, list) and len(point) >= 2 and isinstance(point[0], str):
                when = dt_util.parse_datetime(point[0])
                if when is not None:
                    value = point[1]
                    events.append(
                        (when, str(value).lower() if isinstance(value, bool) else str(value))
                    )
        return events

    def refusal_hint(self, name: str, arguments: Mapping[str, Any]) -> str | None:
        """How to scope a refused history read (it may match accessories the caller cannot
        see, which the refusal must not name)."""
        if name == "get_history":
            return (
                f"matches accessories by name across homes, and {arguments.get('accessory')!r} "
                "may reach accessories this user may not read or that are not exposed to "
                "assistants. Pass the accessory's key (as get_state gives it) as `accessory` "
                "and its home's key as `home`."
            )
        if name == "query_history":
            return (
                "without `accessories` reads every recorded accessory of a home, including "
                "ones this user may not read or that are not exposed to assistants. Pass "
                "`accessories` (their keys, as get_state gives them) and `home`; the answer "
                "then holds only what this user may read."
            )
        return None

    def lists_devices(self, name: str) -> bool:
        """get_state, both automation lists and query_history are filtered to what the caller
        may see."""
        return name in _LISTINGS

    def filter_listing(self, name: str, data: Any, shown: Shown) -> tuple[Any, int]:
        """get_state's accessories and scenes, get_automations' automations, as shown."""
        state: HomecastState | None = self.coordinator.data
        if name in ("get_automations", "get_hc_automations"):
            return filter_automations(state, data, shown)
        if name == "query_history":
            return filter_history(state, data, shown)
        return filter_state(state, data, shown)

    def call_effect(self, name: str, arguments: Mapping[str, Any]) -> CallEffect | None:
        """set_state changes the entity each property writes (the lock, not its battery);
        run_scene its scene; scenes and automations store their accessory actions."""
        publisher = self.publisher

        def entities(key: str) -> list[tuple[Platform, str]]:
            return [
                (spec.platform, spec.key)
                for spec in publisher.device_specs(key)
                if spec.platform not in REPORTING_PLATFORMS
            ]

        return call_effect(name, arguments, self.coordinator.data, entities)

    def device_keys_in_call(self, name: str, arguments: Mapping[str, Any]) -> list[str]:
        """The devices a call may reach, its addresses resolved as Homecast resolves them.

        set_state: every accessory an update's home, room and accessory may name (slug,
        display name or UUID: addresses.update_keys). run_scene: the home device. History
        reads: every accessory they may match (addresses.history_keys), a home this entry
        does not follow included: checking them all never under-checks.
        """
        data: HomecastState | None = self.coordinator.data
        if name in _HISTORY:
            return history_keys(data, name, arguments)
        if name == "set_state":
            updates = arguments.get("updates")
            keys: list[str] = []
            for update in updates if isinstance(updates, list) else []:
                keys.extend(key for key in update_keys(data, update) if key not in keys)
            return keys
        if name == "run_scene":
            return home_keys(data, with_home_key(data, arguments).get("home", ""))
        return []

    def health(self) -> BackendHealth:
        """Reachability and protocol facts."""
        data: HomecastState | None = self.coordinator.data
        return BackendHealth(
            available=self.coordinator.last_update_success,
            protocol_version=self.client.protocol_version,
            latency_ms=self.coordinator.latency_ms,
            details={
                "homes": len(data.homes) if data else 0,
                "accessories": sum(len(h.accessories) for h in data.homes.values()) if data else 0,
                "set_state_calls": self.api.batcher.calls,
                "live_updates": self.push.status.mode if self.push is not None else "polling",
            },
        )

    def diagnostics(self) -> dict[str, Any]:
        """Counts and shapes, no tokens (diagnostics.py redacts again)."""
        data: HomecastState | None = self.coordinator.data
        homes: list[dict[str, Any]] = []
        for home in data.homes.values() if data else []:
            types: dict[str, int] = {}
            for acc in home.accessories.values():
                types[acc.type] = types.get(acc.type, 0) + 1
            homes.append(
                {
                    "tail": home.tail,
                    "accessories": len(home.accessories),
                    "types": types,
                    "legacy_vocabulary": any(a.legacy for a in home.accessories.values()),
                    "unreachable": sum(not a.reachable for a in home.accessories.values()),
                    "scenes": len(home.scenes),
                    "automations": len(home.automations),
                    "hc_automations": len(home.hc_automations),
                    "view_only": home.view_only,
                }
            )
        return {
            "auth_type": self.entry.data.get(CONF_AUTH_TYPE),
            "server_info": self.client.server_info,
            "protocol_version": self.client.protocol_version,
            "polls": self.coordinator.polls,
            "live_updates": (
                self.push.status.as_dict(self.push.counters)
                if self.push is not None
                else {"mode": "polling", "reason": "not started"}
            ),
            "fetched_at": data.fetched_at if data else None,
            "homes": homes,
            "set_state_calls": self.api.batcher.calls,
            "client_stats": {
                "requests": self.client.stats.requests,
                "bytes_sent": self.client.stats.bytes_sent,
                "bytes_received": self.client.stats.bytes_received,
            },
        }


__all__ = ["HomecastRuntime", "McpError"]
