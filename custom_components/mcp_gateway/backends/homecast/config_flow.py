"""Config flow steps of the Homecast backend (a mixin of the integration's OAuth2 flow class).

A user either pastes an access token (`hc_…`) or leaves it empty to sign in with OAuth: the
integration registers itself at the server when the server offers dynamic registration, and
otherwise uses an application credential. Then the user picks which homes to add.

The entry's unique id is the account's: the smallest home UUID the credential sees. Homes are
the only account identity Homecast's MCP answers carry; any credential of the account that
sees that home yields the same id, and reauth/reconfigure check the home is still there.
"""

from __future__ import annotations

import logging
from typing import Any, Final

from homeassistant.config_entries import (
    SOURCE_REAUTH,
    SOURCE_RECONFIGURE,
    ConfigEntry,
    ConfigFlowResult,
)
from homeassistant.const import CONF_URL
from homeassistant.helpers import config_entry_oauth2_flow, config_validation as cv
from homeassistant.helpers.aiohttp_client import async_get_clientsession
import voluptuous as vol

from ...core.const import CONF_BACKEND
from ...framework.flow import (
    BackendFlowMixin,
    FormError,
    async_check,
    connection_test,
    seconds_field,
)
from ...mcp.client import BearerAuth, McpClient
from ...mcp.errors import (
    McpAuthError,
    McpConnectionError,
    McpError,
    McpRateLimitError,
    McpTimeoutError,
)
from .api import HomecastApi, HomecastReplyError, parse_state
from .const import (
    AUTH_OAUTH,
    AUTH_TOKEN,
    COMMUNITY_URL_EXAMPLE,
    CONF_ACCESS_TOKEN,
    CONF_AUTH_TYPE,
    CONF_HOMES,
    CONF_OAUTH_CLIENT,
    CONF_OAUTH_ENDPOINTS,
    CONF_SCAN_INTERVAL,
    CONF_SERVER,
    DATA_OAUTH_ENDPOINTS,
    DEFAULT_SCAN_INTERVAL,
    DEFAULT_URL,
    KIND,
    MAX_SCAN_INTERVAL,
    MIN_SCAN_INTERVAL,
    OAUTH_SCOPES,
    SERVER_COMMUNITY,
)
from .oauth import HomecastOAuth2Implementation, OAuthDiscoveryError, async_discover, async_register

_LOGGER = logging.getLogger(__name__)

# An empty token means: sign in with OAuth.
_ENDPOINT_SCHEMA = vol.Schema({vol.Required(CONF_URL): str, vol.Optional(CONF_ACCESS_TOKEN): str})
# The community server: an empty token means its "require authentication" is off.
_COMMUNITY_SCHEMA = vol.Schema({vol.Required(CONF_URL): str, vol.Optional(CONF_ACCESS_TOKEN): str})
# The user menu's entry for the community server (a step of this mixin).
COMMUNITY_STEP: Final = "homecast_community"


# The cloud endpoint named in the URL hint: hassfest refuses URLs inside translations.
_URL_HINTS: dict[str, str] = {"default_url": DEFAULT_URL}


class HomecastFlowMixin(BackendFlowMixin, config_entry_oauth2_flow.AbstractOAuth2FlowHandler):
    """Steps: homecast, homecast_community, homecast_homes, homecast_reauth(_confirm),
    homecast_reconfigure."""

    # Pending entry data between steps (the flow instance is per flow).
    _hc_data: dict[str, Any] | None = None
    _hc_homes: dict[str, str] | None = None  # UUID -> home name the credential sees

    @property
    def extra_authorize_data(self) -> dict[str, Any]:
        """Scopes Homecast asks consent for (the implementation adds PKCE)."""
        return {"scope": OAUTH_SCOPES}

    # --- user ----------------------------------------------------------------------------

    async def async_step_homecast(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Ask for the endpoint and, optionally, an access token (empty: OAuth)."""
        errors: dict[str, str] = {}
        if user_input is not None:
            url = user_input[CONF_URL].strip()
            token = (user_input.get(CONF_ACCESS_TOKEN) or "").strip()
            if not token:
                return await self._hc_start_oauth(url, "homecast")
            if homes := await async_check(errors, self._hc_probe(url, token)):
                data = {CONF_URL: url, CONF_AUTH_TYPE: AUTH_TOKEN, CONF_ACCESS_TOKEN: token}
                return await self._hc_account(data, homes)
        return self.async_show_form(
            step_id="homecast",
            data_schema=self.add_suggested_values_to_schema(
                _ENDPOINT_SCHEMA, user_input or {CONF_URL: DEFAULT_URL}
            ),
            errors=errors,
            description_placeholders=_URL_HINTS,
        )

    async def async_step_homecast_community(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """The Homecast Mac app's own server on the local network (no cloud, no OAuth here)."""
        errors: dict[str, str] = {}
        if user_input is not None:
            url = user_input[CONF_URL].strip()
            token = (user_input.get(CONF_ACCESS_TOKEN) or "").strip()
            probe = self._hc_probe(url, token, community=True)
            if homes := await async_check(errors, probe):
                data = {
                    CONF_URL: url,
                    CONF_AUTH_TYPE: AUTH_TOKEN,
                    CONF_ACCESS_TOKEN: token,
                    CONF_SERVER: SERVER_COMMUNITY,
                }
                return await self._hc_account(data, homes)
        return self.async_show_form(
            step_id="homecast_community",
            data_schema=self.add_suggested_values_to_schema(_COMMUNITY_SCHEMA, user_input or {}),
            description_placeholders={"example": COMMUNITY_URL_EXAMPLE},
            errors=errors,
        )

    async def _hc_start_oauth(self, url: str, step_id: str) -> ConfigFlowResult:
        """Discover the server's OAuth endpoints, register if it lets us, then log in."""
        session = async_get_clientsession(self.hass)
        try:
            metadata = await async_discover(session, url)
            self._hc_data = {CONF_URL: url, CONF_AUTH_TYPE: AUTH_OAUTH}
            if isinstance(metadata.get("registration_endpoint"), str):
                redirect = config_entry_oauth2_flow.async_get_redirect_uri(self.hass)
                client = await async_register(session, metadata, redirect)
                implementation = HomecastOAuth2Implementation.for_client(self.hass, client)
                self.async_register_implementation(self.hass, implementation)
                self._hc_data[CONF_OAUTH_CLIENT] = implementation.stored()
                self.flow_impl = implementation
                return await self.async_step_auth()
        except OAuthDiscoveryError as err:
            _LOGGER.debug("Homecast OAuth discovery failed: %s", err)
            return self.async_show_form(
                step_id=step_id,
                data_schema=self._hc_retry_schema(step_id, url),
                errors={"base": "oauth_discovery_failed"},
                description_placeholders=_URL_HINTS,
            )
        # No registration offered: use an application credential on these endpoints.
        endpoints = {
            "authorize_url": str(metadata["authorization_endpoint"]),
            "token_url": str(metadata["token_endpoint"]),
        }
        self.hass.data[DATA_OAUTH_ENDPOINTS] = endpoints
        self._hc_data[CONF_OAUTH_ENDPOINTS] = endpoints
        return await self.async_step_pick_implementation()

    def _hc_retry_schema(self, step_id: str, url: str) -> vol.Schema:
        if step_id == "homecast":
            return self.add_suggested_values_to_schema(_ENDPOINT_SCHEMA, {CONF_URL: url})
        return vol.Schema({})

    async def async_oauth_create_entry(self, data: dict[str, Any]) -> ConfigFlowResult:
        """OAuth is done: test the token, then pick homes (or finish a reauth)."""
        pending = self._hc_data or {}
        entry_data = {**pending, **data}
        try:
            homes = await self._hc_probe(entry_data[CONF_URL], data["token"]["access_token"])
        except FormError as err:
            return self.async_abort(reason=f"homecast_{err.key}")
        return await self._hc_account(entry_data, homes)

    async def _hc_account(self, data: dict[str, Any], homes: dict[str, str]) -> ConfigFlowResult:
        """Check the account against existing entries, then continue to the homes step."""
        account = min(homes)
        if self.source == SOURCE_REAUTH:
            entry = self._get_reauth_entry()
            if entry.unique_id not in homes:
                return self.async_abort(reason="unique_id_mismatch")
            return self.async_update_reload_and_abort(entry, data_updates=data)
        if self.source == SOURCE_RECONFIGURE:
            entry = self._get_reconfigure_entry()
            if entry.unique_id not in homes:
                return self.async_abort(reason="unique_id_mismatch")
        else:
            # Another flow of the account may sit abandoned at the homes step (a closed tab
            # keeps it until HA restarts): it must not block this one. Whichever finishes
            # first creates the entry; HA then aborts the other, and the homes step checks
            # once more.
            await self.async_set_unique_id(account, raise_on_progress=False)
            if aborted := self._hc_abort_if_configured(homes):
                return aborted
        self._hc_data = data
        self._hc_homes = homes
        return await self.async_step_homecast_homes()

    def _hc_abort_if_configured(self, homes: dict[str, str]) -> ConfigFlowResult | None:
        """Abort when the account, or one of these homes, already has an entry."""
        self._abort_if_unique_id_configured()
        for other in self._async_current_entries(include_ignore=False):
            # A credential limited to other homes of a configured account.
            if other.data.get(CONF_BACKEND) == KIND and set(other.data.get(CONF_HOMES, [])) & set(
                homes
            ):
                return self.async_abort(reason="already_configured")
        return None

    async def async_step_homecast_homes(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Pick the homes to add."""
        assert self._hc_data is not None
        assert self._hc_homes is not None
        errors: dict[str, str] = {}
        if user_input is not None:
            chosen = [h for h in user_input[CONF_HOMES] if h in self._hc_homes]
            if chosen:
                data = {**self._hc_data, CONF_HOMES: chosen}
                if self.source == SOURCE_RECONFIGURE:
                    return self.async_update_reload_and_abort(
                        self._get_reconfigure_entry(), data_updates=data
                    )
                if aborted := self._hc_abort_if_configured(self._hc_homes):
                    return aborted
                names = ", ".join(self._hc_homes[h] for h in chosen)
                return self.async_create_entry(
                    title=f"Homecast ({names})", data={CONF_BACKEND: KIND, **data}
                )
            errors["base"] = "no_homes_selected"
        default = list(self._hc_homes)
        if self.source == SOURCE_RECONFIGURE:
            current = self._get_reconfigure_entry().data.get(CONF_HOMES) or default
            default = [h for h in current if h in self._hc_homes]
        return self.async_show_form(
            step_id="homecast_homes",
            data_schema=vol.Schema(
                {vol.Required(CONF_HOMES, default=default): cv.multi_select(self._hc_homes)}
            ),
            errors=errors,
        )

    # --- reauth --------------------------------------------------------------------------

    async def async_step_homecast_reauth(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """The token was revoked or a refresh failed."""
        return await self.async_step_homecast_reauth_confirm()

    async def async_step_homecast_reauth_confirm(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """A new access token, or a new OAuth login."""
        entry = self._get_reauth_entry()
        oauth = entry.data.get(CONF_AUTH_TYPE) == AUTH_OAUTH
        errors: dict[str, str] = {}
        if user_input is not None:
            if oauth:
                return await self._hc_start_oauth(entry.data[CONF_URL], "homecast_reauth_confirm")
            token = user_input[CONF_ACCESS_TOKEN].strip()
            community = entry.data.get(CONF_SERVER) == SERVER_COMMUNITY
            probe = self._hc_probe(entry.data[CONF_URL], token, community=community)
            if homes := await async_check(errors, probe):
                return await self._hc_account({CONF_ACCESS_TOKEN: token}, homes)
        schema = vol.Schema({} if oauth else {vol.Required(CONF_ACCESS_TOKEN): str})
        return self._async_show_reauth_form("homecast_reauth_confirm", schema, errors)

    # --- reconfigure ---------------------------------------------------------------------

    async def async_step_homecast_reconfigure(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Change the endpoint or token (token entries) and the homes followed."""
        entry = self._get_reconfigure_entry()
        oauth = entry.data.get(CONF_AUTH_TYPE) == AUTH_OAUTH
        errors: dict[str, str] = {}
        if oauth:
            if user_input is None:
                return self.async_show_form(
                    step_id="homecast_reconfigure", data_schema=vol.Schema({})
                )
            # The URL belongs to the OAuth grant; only the homes can change.
            try:
                homes = await self._hc_probe_entry(entry)
            except FormError as err:
                return self.async_abort(reason=f"homecast_{err.key}")
            return await self._hc_account({}, homes)
        if user_input is not None:
            url = user_input[CONF_URL].strip()
            token = (user_input.get(CONF_ACCESS_TOKEN) or "").strip() or entry.data[
                CONF_ACCESS_TOKEN
            ]
            community = entry.data.get(CONF_SERVER) == SERVER_COMMUNITY
            if seen := await async_check(errors, self._hc_probe(url, token, community=community)):
                return await self._hc_account({CONF_URL: url, CONF_ACCESS_TOKEN: token}, seen)
        return self.async_show_form(
            step_id="homecast_reconfigure",
            data_schema=self.add_suggested_values_to_schema(
                _ENDPOINT_SCHEMA, {CONF_URL: entry.data[CONF_URL]}
            ),
            errors=errors,
        )

    # --- connection tests ----------------------------------------------------------------

    async def _hc_probe(self, url: str, token: str, *, community: bool = False) -> dict[str, str]:
        """get_state with the credential: the homes it sees (UUID → name)."""
        auth = BearerAuth(token) if token else None
        client = McpClient(async_get_clientsession(self.hass), url, auth=auth)
        try:
            return await _homes_of(HomecastApi(client), community=community)
        finally:
            await client.close()

    async def _hc_probe_entry(self, entry: ConfigEntry) -> dict[str, str]:
        """The homes a loaded OAuth entry's credential sees (its runtime refreshes the token)."""
        runtime = getattr(entry, "runtime_data", None)
        if runtime is None or not hasattr(runtime, "api"):
            raise FormError("not_loaded")
        return await _homes_of(runtime.api)


def _homecast_key(err: McpError) -> str | None:
    """Where a failed get_state reads differently from the shared connection errors.

    A tool failure (relay offline, …) stays the shared `cannot_connect`: the server is Homecast
    but could not read the homes.
    """
    if isinstance(err, HomecastReplyError):
        return "not_homecast"
    # Homecast's forms read any other HTTP failure, a 404 too, as unreachable: its endpoint is
    # a fixed cloud address, not one the user typed.
    if isinstance(err, McpConnectionError) and not isinstance(
        err, McpTimeoutError | McpRateLimitError
    ):
        return "cannot_connect"
    return None


def _community_key(err: McpError) -> str | None:
    """The community server refuses a missing or wrong token with its own answer."""
    if isinstance(err, McpAuthError):
        return "community_auth_required"
    return _homecast_key(err)


async def _homes_of(api: HomecastApi, *, community: bool = False) -> dict[str, str]:
    with connection_test("Homecast", _community_key if community else _homecast_key):
        state = parse_state(await api.async_get_state_raw())
    if not state.homes:
        raise FormError("no_homes")
    return {uuid: home.name for uuid, home in state.homes.items()}


def homecast_options_schema(entry: ConfigEntry) -> dict[Any, Any]:
    """Polling interval, in seconds as the other backends' forms show it."""
    return {
        vol.Optional(
            CONF_SCAN_INTERVAL,
            default=entry.options.get(CONF_SCAN_INTERVAL, DEFAULT_SCAN_INTERVAL),
        ): seconds_field(MIN_SCAN_INTERVAL, MAX_SCAN_INTERVAL),
    }
