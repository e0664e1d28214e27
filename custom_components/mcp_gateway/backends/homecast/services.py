"""Actions of the Homecast backend: history, scenes, Homecast automations, virtual accessories.

Each action names the config entry, is validated here (clear errors before a round trip) and
returns what Homecast answered as response data.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, cast

from homeassistant.core import ServiceCall, ServiceResponse, SupportsResponse
from homeassistant.exceptions import HomeAssistantError, ServiceValidationError
from homeassistant.helpers import config_validation as cv
from homeassistant.helpers.typing import VolSchemaType
import voluptuous as vol

from ...core.const import DOMAIN
from ...framework.base import UnknownListing
from ...framework.entity import backend_errors
from ...mcp.errors import (
    McpAuthError,
    McpConnectionError,
    McpError,
    McpResponseTooLargeError,
)
from ...permissions.actions import (
    ATTR_CONFIG_ENTRY_ID,
    ActionHandler,
    BackendAction,
    async_authorize,
    entry_runtime,
)
from ...permissions.exposure import CallerView
from .const import KIND

if TYPE_CHECKING:
    from .runtime import HomecastRuntime

ATTR_HOME: Final = "home"

VIRTUAL_TYPES: Final = ("switch", "mode", "number", "counter", "timer", "text", "date")
HC_MODES: Final = ("single", "restart", "queued", "parallel")
RESOLUTIONS: Final = ("auto", "raw", "hourly", "daily")


def _name_ends_alnum(value: Any) -> str:
    """HomeKit rejects scene names that end in punctuation."""
    name = cv.string(value).strip()
    if not name or not name[-1].isalnum():
        raise vol.Invalid("the name must end with a letter or a number")
    return name


def _non_empty(value: Any) -> str:
    text = cv.string(value).strip()
    if not text:
        raise vol.Invalid("must not be empty")
    return text


_OBJECTS = vol.All(cv.ensure_list, [dict])
_BASE: Final[dict[Any, Any]] = {
    vol.Required(ATTR_CONFIG_ENTRY_ID): cv.string,
    vol.Required(ATTR_HOME): _non_empty,
}

_QUERY_HISTORY = vol.Schema(
    {
        vol.Required(ATTR_CONFIG_ENTRY_ID): cv.string,
        vol.Optional(ATTR_HOME): _non_empty,
        vol.Optional("accessories"): vol.All(cv.ensure_list, [cv.string]),
        vol.Optional("characteristics"): vol.All(cv.ensure_list, [cv.string]),
        vol.Optional("start"): cv.datetime,
        vol.Optional("end"): cv.datetime,
        vol.Optional("resolution"): vol.In(RESOLUTIONS),
        vol.Optional("max_points_per_series"): vol.All(vol.Coerce(int), vol.Range(min=1, max=2000)),
    }
)
_CREATE_SCENE = vol.Schema(
    {**_BASE, vol.Required("name"): _name_ends_alnum, vol.Required("actions"): _OBJECTS}
)
_UPDATE_SCENE = vol.Schema(
    {
        **_BASE,
        vol.Required("name"): _non_empty,
        vol.Optional("new_name"): _name_ends_alnum,
        vol.Optional("actions"): _OBJECTS,
    }
)
_DELETE_SCENE = vol.Schema({**_BASE, vol.Required("name"): _non_empty})
_HC_FIELDS: Final[dict[Any, Any]] = {
    vol.Optional("conditions"): _OBJECTS,
    vol.Optional("enabled"): cv.boolean,
    vol.Optional("mode"): vol.In(HC_MODES),
    vol.Optional("description"): cv.string,
}
_CREATE_HC = vol.Schema(
    {
        **_BASE,
        vol.Required("name"): _non_empty,
        vol.Required("triggers"): vol.All(_OBJECTS, vol.Length(min=1)),
        vol.Required("actions"): vol.All(_OBJECTS, vol.Length(min=1)),
        **_HC_FIELDS,
    }
)
_UPDATE_HC = vol.Schema(
    {
        **_BASE,
        vol.Required("id"): _non_empty,
        vol.Optional("name"): _non_empty,
        vol.Optional("triggers"): vol.All(_OBJECTS, vol.Length(min=1)),
        vol.Optional("actions"): vol.All(_OBJECTS, vol.Length(min=1)),
        **_HC_FIELDS,
    }
)
_DELETE_BY_ID = vol.Schema({**_BASE, vol.Required("id"): _non_empty})
_VIRTUAL_FIELDS: Final[dict[Any, Any]] = {
    vol.Optional("options"): vol.All(cv.ensure_list, [_non_empty], vol.Length(min=1)),
    vol.Optional("initial"): vol.Any(str, int, float, bool),
    vol.Optional("min"): vol.Coerce(float),
    vol.Optional("max"): vol.Coerce(float),
    vol.Optional("step"): vol.All(vol.Coerce(float), vol.Range(min=0, min_included=False)),
    vol.Optional("unit"): cv.string,
    vol.Optional("duration"): vol.All(vol.Coerce(float), vol.Range(min=0)),
    vol.Optional("controllable"): cv.boolean,
}


def _virtual_rules(data: dict[str, Any]) -> dict[str, Any]:
    """What create_virtual_accessory documents per type."""
    kind = data.get("type")
    if kind == "mode" and not data.get("options"):
        raise vol.Invalid("a mode needs options")
    if kind == "number" and ("min" not in data or "max" not in data):
        raise vol.Invalid("a number needs min and max")
    if "min" in data and "max" in data and data["min"] >= data["max"]:
        raise vol.Invalid("min must be below max")
    if kind is not None and kind != "mode" and "options" in data:
        raise vol.Invalid("only a mode takes options")
    return data


_CREATE_VIRTUAL = vol.All(
    vol.Schema(
        {
            **_BASE,
            vol.Required("name"): _non_empty,
            vol.Required("type"): vol.In(VIRTUAL_TYPES),
            **_VIRTUAL_FIELDS,
        }
    ),
    _virtual_rules,
)
_UPDATE_VIRTUAL = vol.All(
    vol.Schema(
        {
            **_BASE,
            vol.Required("id"): _non_empty,
            vol.Optional("name"): _non_empty,
            **_VIRTUAL_FIELDS,
        }
    ),
    _virtual_rules,
)


def _runtime(call: ServiceCall) -> HomecastRuntime:
    runtime = entry_runtime(call, KIND, not_found="homecast_entry_not_found")
    return cast("HomecastRuntime", runtime)


def _home_key(runtime: HomecastRuntime, ref: str) -> str:
    """The slug of a home the entry follows, from its slug, name or UUID."""
    data = runtime.coordinator.data
    home = data.home(ref) if data is not None else None
    if home is None:
        raise ServiceValidationError(
            translation_domain=DOMAIN,
            translation_key="homecast_home_not_found",
            translation_placeholders={"home": ref},
        )
    return home.key


def _arguments(runtime: HomecastRuntime, data: Mapping[str, Any]) -> dict[str, Any]:
    args = {k: v for k, v in data.items() if k != ATTR_CONFIG_ENTRY_ID}
    if ATTR_HOME in args:
        args[ATTR_HOME] = _home_key(runtime, args[ATTR_HOME])
    for key in ("start", "end"):
        if key in args:
            args[key] = args[key].isoformat()
    return args


def _response(data: Any) -> dict[str, Any]:
    """Response data is an object: Homecast's own, or its prose under `message`."""
    if isinstance(data, dict):
        return data
    if isinstance(data, list):
        return {"items": data}
    return {"message": str(data)}


async def _readable_history(call: ServiceCall, runtime: HomecastRuntime, data: Any) -> Any:
    """query_history's series of the accessories the caller may read: its `accessories` match
    by substring, so it may answer more than the authorization addressed."""
    user = await call.hass.auth.async_get_user(str(call.context.user_id))
    if user is None:
        return {}
    view = CallerView(call.hass, user, runtime, assistant=False)
    try:
        return runtime.filter_listing("query_history", data, view)[0]
    except UnknownListing as err:
        raise HomeAssistantError(
            translation_domain=DOMAIN,
            translation_key="homecast_tool_failed",
            translation_placeholders={"tool": "query_history", "error": str(err)},
        ) from err


def _handler(tool: str, kind: str) -> ActionHandler:
    """Call the tool; read actions (kind "read") do not refresh entities afterwards."""

    async def handle(call: ServiceCall) -> ServiceResponse:
        runtime = _runtime(call)
        # Before anything about the home is looked up: a refused caller learns nothing.
        await async_authorize(call, runtime, tool, call.data)
        args = _arguments(runtime, call.data)
        with backend_errors(runtime):
            try:
                data = await runtime.api.async_tool(tool, args, kind)
            except (McpAuthError, McpResponseTooLargeError):
                raise  # the shared boundary starts the reauth, or names the cap
            except McpConnectionError as err:
                if err.may_have_run:
                    raise  # the shared boundary: its outcome is unknown, not "unreachable"
                raise HomeAssistantError(
                    translation_domain=DOMAIN,
                    translation_key="homecast_unreachable",
                    translation_placeholders={"error": str(err)},
                ) from err
            except McpError as err:
                # Name the tool: an action's refusal is about what the user asked for.
                raise HomeAssistantError(
                    translation_domain=DOMAIN,
                    translation_key="homecast_tool_failed",
                    translation_placeholders={"tool": tool, "error": str(err)},
                ) from err
        if tool == "query_history" and call.context.user_id is not None:
            data = await _readable_history(call, runtime, data)
        if kind == "write":
            # New scenes, automations and virtual accessories become entities at once; these
            # definition changes are rare, so the refresh is not debounced.
            await runtime.coordinator.async_refresh()
        return _response(data) if call.return_response else None

    return handle


def _action(
    name: str,
    tool: str,
    schema: VolSchemaType,
    supports_response: SupportsResponse = SupportsResponse.OPTIONAL,
    kind: str = "write",
) -> BackendAction:
    return BackendAction(name, schema, _handler(tool, kind), supports_response)


ACTIONS: Final = (
    _action(
        "homecast_query_history", "query_history", _QUERY_HISTORY, SupportsResponse.ONLY, "read"
    ),
    _action("homecast_create_scene", "create_scene", _CREATE_SCENE),
    _action("homecast_update_scene", "update_scene", _UPDATE_SCENE),
    _action("homecast_delete_scene", "delete_scene", _DELETE_SCENE),
    _action("homecast_create_automation", "create_hc_automation", _CREATE_HC),
    _action("homecast_update_automation", "update_hc_automation", _UPDATE_HC),
    _action("homecast_delete_automation", "delete_hc_automation", _DELETE_BY_ID),
    _action("homecast_create_virtual_accessory", "create_virtual_accessory", _CREATE_VIRTUAL),
    _action("homecast_update_virtual_accessory", "update_virtual_accessory", _UPDATE_VIRTUAL),
    _action("homecast_delete_virtual_accessory", "delete_virtual_accessory", _DELETE_BY_ID),
)
