"""Config flow steps of the Hubitat backend (a mixin of the integration's flow class)."""

from __future__ import annotations

from typing import Any

from homeassistant.config_entries import ConfigEntry, ConfigEntryState, ConfigFlowResult
from homeassistant.core import HomeAssistant
from homeassistant.helpers.aiohttp_client import async_get_clientsession
from homeassistant.helpers.device_registry import format_mac
from homeassistant.helpers.network import NoURLAvailableError, get_url
from homeassistant.helpers.selector import (
    SelectOptionDict,
    SelectSelector,
    SelectSelectorConfig,
    SelectSelectorMode,
    TextSelector,
)
from homeassistant.helpers.service_info.dhcp import DhcpServiceInfo
import voluptuous as vol
from yarl import URL

from ...core.const import CONF_BACKEND
from ...framework.flow import (
    SECRET_FIELD,
    URL_FIELD,
    BackendFlowMixin,
    FormError,
    async_check,
    connection_test,
    seconds_field,
)
from ...mcp.client import McpClient, QueryTokenAuth
from .api import HubInfo, HubitatApi
from .const import (
    CONF_APP_ID,
    CONF_AS_LIGHT,
    CONF_AS_SWITCH,
    CONF_HOST,
    CONF_PUSH,
    CONF_SCAN_INTERVAL,
    CONF_SEND_KEY,
    CONF_TOKEN,
    CONF_URL,
    DEFAULT_SCAN_INTERVAL,
    KIND,
    MAX_SCAN_INTERVAL,
    MIN_SCAN_INTERVAL,
)

_TEXT = TextSelector()
# The endpoint shapes of the URL hint: hassfest refuses URLs inside translations.
_URL_HINTS: dict[str, str] = {
    "local_url": "http://HUB-ADDRESS/apps/api/APP-ID/mcp",
    "cloud_url": "https://cloud.hubitat.com/api/HUB-UID/apps/APP-ID/mcp",
}


def endpoint_from_input(user_input: dict[str, Any]) -> tuple[str, str]:
    """The endpoint URL (without the token) and the token from the form's fields."""
    token = (user_input.get(CONF_TOKEN) or "").strip()
    if raw := (user_input.get(CONF_URL) or "").strip():
        try:
            url = URL(raw)
        except ValueError as err:
            raise FormError("invalid_url") from err
        if url.scheme not in ("http", "https") or not url.host or not url.path.strip("/"):
            raise FormError("invalid_url")
        token = url.query.get("access_token", token)
        url = url.without_query_params("access_token")
    else:
        host = (user_input.get(CONF_HOST) or "").strip().rstrip("/")
        app_id = (user_input.get(CONF_APP_ID) or "").strip()
        if not host or not app_id:
            raise FormError("missing_endpoint")
        if "://" not in host:
            host = f"http://{host}"
        try:
            url = URL(f"{host}/apps/api/{app_id}/mcp")
        except ValueError as err:
            raise FormError("invalid_url") from err
        if url.scheme not in ("http", "https") or not url.host:
            raise FormError("invalid_url")
    if not token:
        raise FormError("missing_token")
    return str(url), token


class HubitatFlowMixin(BackendFlowMixin):
    """Steps: async_step_hubitat, async_step_hubitat_reauth, async_step_hubitat_reconfigure;
    async_step_dhcp and async_step_hubitat_discovered for a hub found on the network."""

    # The address DHCP discovery found (the flow instance is per flow).
    _hubitat_host: str | None = None

    async def _hubitat_probe(self, url: str, token: str) -> HubInfo:
        """Connect and read the hub's identity; raises McpError on failure."""
        client = McpClient(async_get_clientsession(self.hass), url, auth=QueryTokenAuth(token))
        try:
            return await HubitatApi(client).get_info()
        finally:
            await client.close()

    async def _hubitat_check(
        self, user_input: dict[str, Any], errors: dict[str, str]
    ) -> tuple[str, str, HubInfo] | None:
        """Validate a form; fill `errors` and return None when it does not lead to a hub."""
        return await async_check(errors, self._hubitat_connect(user_input))

    async def _hubitat_connect(self, user_input: dict[str, Any]) -> tuple[str, str, HubInfo]:
        """The endpoint, token and hub a form leads to; raises FormError."""
        url, token = endpoint_from_input(user_input)
        with connection_test("Hubitat"):
            info = await self._hubitat_probe(url, token)
        return url, token, info

    async def async_step_hubitat(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Ask for the hub's MCP endpoint, check it and create the entry."""
        errors: dict[str, str] = {}
        if user_input is not None and (found := await self._hubitat_check(user_input, errors)):
            url, token, info = found
            if info.id is not None:
                await self.async_set_unique_id(info.id)
                self._abort_if_unique_id_configured()
            else:
                # No zigbeeId: nothing identifies the hub beyond doubt. The entry then goes
                # without a unique id (its entities use the entry id, which cannot collide;
                # a discovered flow's MAC key is dropped); the same endpoint twice is still
                # refused.
                await self.async_set_unique_id(None)
                self._async_abort_entries_match({CONF_URL: url})
            return self.async_create_entry(
                title=info.name or "Hubitat hub",
                data={CONF_BACKEND: KIND, CONF_URL: url, CONF_TOKEN: token},
                # Push is set up only when the user asked for it here (or in the options).
                options={CONF_PUSH: bool(user_input.get(CONF_PUSH, False))},
            )
        schema = _endpoint_schema().extend({vol.Optional(CONF_PUSH, default=False): bool})
        return self.async_show_form(
            step_id="hubitat",
            data_schema=self.add_suggested_values_to_schema(schema, _without_secrets(user_input)),
            errors=errors,
            description_placeholders={**_URL_HINTS, "ha_url": _ha_url(self.hass)},
        )

    async def async_step_dhcp(self, discovery_info: DhcpServiceInfo) -> ConfigFlowResult:
        """A Hubitat hub joined the network (its MAC is in Hubitat's block, manifest.json).

        DHCP tells the hub's address only: the app's endpoint (its id and token) exists once
        the owner installs the MCP Rule Server app, so the form asks for those, with the
        address filled in. The flow is keyed by the hub's MAC so that one hub is offered once
        and "Ignore" sticks; an entry that already reaches this address ends it.
        """
        host = discovery_info.ip
        await self.async_set_unique_id(f"hubitat_{format_mac(discovery_info.macaddress)}")
        self._abort_if_unique_id_configured()
        for entry in self._async_current_entries(include_ignore=False):
            if entry.data.get(CONF_BACKEND) == KIND and _host_of(entry.data.get(CONF_URL)) == host:
                return self.async_abort(reason="already_configured")
        self._hubitat_host = host
        self.context["title_placeholders"] = {"name": f"Hubitat hub ({host})"}
        return await self.async_step_hubitat_discovered()

    async def async_step_hubitat_discovered(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """The endpoint form with the discovered address, saying where the app's id and token
        are; then the same check and entry as a hub added by hand."""
        host = self._hubitat_host or ""
        if user_input is not None:
            return await self.async_step_hubitat({CONF_HOST: host, **user_input})
        schema = _endpoint_schema().extend({vol.Optional(CONF_PUSH, default=False): bool})
        return self.async_show_form(
            step_id="hubitat_discovered",
            data_schema=self.add_suggested_values_to_schema(schema, {CONF_HOST: host}),
            description_placeholders={
                **_URL_HINTS,
                "host": host,
                "endpoint": f"http://{host}/apps/api/APP-ID/mcp",
                "ha_url": _ha_url(self.hass),
            },
        )

    async def _hubitat_update(
        self, entry: ConfigEntry, info: HubInfo, updates: dict[str, Any]
    ) -> ConfigFlowResult:
        """Store new data; refuse it when it reaches another hub, where ids can tell."""
        known = entry.unique_id
        if info.id is None or known is None or known.lower() == "unavailable":
            return self.async_update_reload_and_abort(entry, data_updates=updates)
        return await self._async_update_same_device(entry, info.id, data_updates=updates)

    async def async_step_hubitat_reauth(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """The hub refused the token: ask for a new one."""
        entry = self._get_reauth_entry()
        errors: dict[str, str] = {}
        if user_input is not None:
            found = await self._hubitat_check(
                {CONF_URL: entry.data[CONF_URL], CONF_TOKEN: user_input[CONF_TOKEN]}, errors
            )
            if found:
                _, token, info = found
                return await self._hubitat_update(entry, info, {CONF_TOKEN: token})
        return self._async_show_reauth_form(
            "hubitat_reauth", vol.Schema({vol.Required(CONF_TOKEN): SECRET_FIELD}), errors
        )

    async def async_step_hubitat_reconfigure(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """The hub moved (new address or app id): ask for the endpoint again."""
        entry = self._get_reconfigure_entry()
        errors: dict[str, str] = {}
        if user_input is not None:
            values = dict(user_input)
            if not values.get(CONF_TOKEN):
                values[CONF_TOKEN] = entry.data[CONF_TOKEN]
            if found := await self._hubitat_check(values, errors):
                url, token, info = found
                return await self._hubitat_update(entry, info, {CONF_URL: url, CONF_TOKEN: token})
        return self.async_show_form(
            step_id="hubitat_reconfigure",
            data_schema=self.add_suggested_values_to_schema(
                _endpoint_schema(),
                _without_secrets(user_input) or {CONF_URL: entry.data[CONF_URL]},
            ),
            errors=errors,
            description_placeholders=_URL_HINTS,
        )


def _host_of(url: Any) -> str | None:
    """The host of a stored endpoint URL, or None."""
    try:
        return URL(url).host if isinstance(url, str) else None
    except ValueError:
        return None


def _ha_url(hass: HomeAssistant) -> str:
    """The address the hub's rules would call (HA's local one), for the push field's text."""
    try:
        return get_url(hass, allow_external=False, allow_cloud=False)
    except NoURLAvailableError:
        return "(none set: Settings > System > Network)"


def _endpoint_schema() -> vol.Schema:
    return vol.Schema(
        {
            vol.Optional(CONF_URL): URL_FIELD,
            vol.Optional(CONF_HOST): _TEXT,
            vol.Optional(CONF_APP_ID): _TEXT,
            vol.Optional(CONF_TOKEN): SECRET_FIELD,
        }
    )


def _without_secrets(user_input: dict[str, Any] | None) -> dict[str, Any] | None:
    """Refill a form after an error with what was typed, minus the token field (as the Robine
    Wake form keeps its address, not its password). A pasted URL stays whole, its access_token
    included: it goes back only to the person who pasted it, who should not paste it again."""
    if user_input is None:
        return None
    kept = {k: v for k, v in user_input.items() if k in (CONF_URL, CONF_HOST, CONF_APP_ID)}
    if user_input.get(CONF_PUSH):
        kept[CONF_PUSH] = True  # a ticked consent stays ticked
    return kept


def hubitat_options_schema(entry: ConfigEntry) -> dict[Any, Any]:
    """Poll interval, the write key, live updates, and per-device light/switch overrides."""
    options = entry.options
    lights: list[SelectOptionDict] = []
    switches: list[SelectOptionDict] = []
    if entry.state is ConfigEntryState.LOADED:
        # Imported here: the runtime pulls in every platform module, the flow needs none.
        from .runtime import HubitatRuntime

        runtime = entry.runtime_data
        if isinstance(runtime, HubitatRuntime):
            lights, switches = runtime.override_choices()
    as_switch = list(options.get(CONF_AS_SWITCH, []))
    as_light = list(options.get(CONF_AS_LIGHT, []))
    return {
        vol.Optional(
            CONF_SCAN_INTERVAL, default=options.get(CONF_SCAN_INTERVAL, DEFAULT_SCAN_INTERVAL)
        ): seconds_field(MIN_SCAN_INTERVAL, MAX_SCAN_INTERVAL),
        vol.Optional(CONF_SEND_KEY, default=options.get(CONF_SEND_KEY, True)): bool,
        vol.Optional(CONF_PUSH, default=options.get(CONF_PUSH, False)): bool,
        vol.Optional(CONF_AS_SWITCH, default=as_switch): _device_select(lights, as_switch),
        vol.Optional(CONF_AS_LIGHT, default=as_light): _device_select(switches, as_light),
    }


def _device_select(choices: list[SelectOptionDict], chosen: list[str]) -> SelectSelector:
    """A multi-select of devices that keeps earlier choices even if the hub lost them."""
    known = {choice["value"] for choice in choices}
    extra = [SelectOptionDict(value=value, label=value) for value in chosen if value not in known]
    return SelectSelector(
        SelectSelectorConfig(
            options=[*choices, *extra], multiple=True, mode=SelectSelectorMode.DROPDOWN
        )
    )
