"""Config, OAuth, reauth, reconfigure and options flows of the Homecast backend."""

from __future__ import annotations

import functools
from typing import Any
from unittest.mock import patch

import aiohttp
from homeassistant.components.application_credentials import (
    ClientCredential,
    async_import_client_credential,
)
from homeassistant.config_entries import SOURCE_USER, ConfigEntryState
from homeassistant.const import CONF_URL
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResult, FlowResultType
from homeassistant.setup import async_setup_component
import pytest
from pytest_homeassistant_custom_component.typing import ClientSessionGenerator
from yarl import URL

from custom_components.mcp_gateway.backends.homecast import oauth as hc_oauth
from custom_components.mcp_gateway.backends.homecast.const import (
    AUTH_OAUTH,
    CONF_ACCESS_TOKEN,
    CONF_AUTH_TYPE,
    CONF_HOMES,
    CONF_OAUTH_CLIENT,
    CONF_OAUTH_ENDPOINTS,
    CONF_SCAN_INTERVAL,
    DEFAULT_URL,
    KIND as HOMECAST_KIND,
)
from custom_components.mcp_gateway.core.const import CONF_BACKEND, CONF_GATEWAY_EXPOSED, DOMAIN
from custom_components.mcp_gateway.mcp.client import McpClient
from custom_components.mcp_gateway.mcp.errors import McpRpcError, McpToolError

from .conftest import TOKEN, Sim, SimFactory, setup_entry, token_entry

REDIRECT = "https://example.com/auth/external/callback"


async def _start(hass: HomeAssistant) -> FlowResult:
    # Set the integration up first: its HTTP views must exist before a test client freezes
    # the router (the OAuth tests open one for the callback).
    assert await async_setup_component(hass, DOMAIN, {})
    result = await hass.config_entries.flow.async_init(DOMAIN, context={"source": SOURCE_USER})
    assert result["type"] is FlowResultType.MENU
    return await hass.config_entries.flow.async_configure(
        result["flow_id"], {"next_step_id": "homecast"}
    )


async def _authorize(url: str) -> dict[str, str]:
    """What the user's browser does: open the authorize URL, read where it redirects."""
    async with (
        aiohttp.ClientSession() as session,
        session.get(url, allow_redirects=False) as resp,
    ):
        assert resp.status == 302, await resp.text()
        location = URL(resp.headers["Location"])
    assert str(location.with_query(None)) == REDIRECT
    return dict(location.query)


async def _finish_oauth(
    hass: HomeAssistant, client_factory: ClientSessionGenerator, result: FlowResult
) -> FlowResult:
    assert result["type"] is FlowResultType.EXTERNAL_STEP
    query = await _authorize(result["url"])
    client = await client_factory()
    resp = await client.get(
        "/auth/external/callback", params={"code": query["code"], "state": query["state"]}
    )
    assert resp.status == 200
    return await hass.config_entries.flow.async_configure(result["flow_id"])


async def _recovers(hass: HomeAssistant, result: FlowResult, sim: Sim) -> None:
    """The same flow, given a working server and token after its error, creates the entry."""
    assert result["type"] is FlowResultType.FORM
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_URL: sim.url, CONF_ACCESS_TOKEN: TOKEN}
    )
    assert result["step_id"] == "homecast_homes"
    await _choose_homes(hass, result, sim)


async def _choose_homes(hass: HomeAssistant, result: FlowResult, sim: Sim) -> None:
    with patch("custom_components.mcp_gateway.async_setup_entry", return_value=True):
        result = await hass.config_entries.flow.async_configure(
            result["flow_id"], {CONF_HOMES: sim.home_uuids()[:1]}
        )
    assert result["type"] is FlowResultType.CREATE_ENTRY


# --- token ----------------------------------------------------------------------------------


async def test_token_flow_creates_entry(hass: HomeAssistant, sim: Sim) -> None:
    """A token, then the homes: the entry follows the chosen homes, unique id = account."""
    result = await _start(hass)
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "homecast"
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_URL: sim.url, CONF_ACCESS_TOKEN: f" {TOKEN} "}
    )
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "homecast_homes"
    first = sim.home_uuids()[0]
    with patch("custom_components.mcp_gateway.async_setup_entry", return_value=True):
        result = await hass.config_entries.flow.async_configure(
            result["flow_id"], {CONF_HOMES: [first]}
        )
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert result["title"] == f"Homecast ({sim.state.homes[0].name})"
    assert result["data"] == {
        CONF_BACKEND: HOMECAST_KIND,
        CONF_URL: sim.url,
        CONF_AUTH_TYPE: "token",
        CONF_ACCESS_TOKEN: TOKEN,
        CONF_HOMES: [first],
    }
    assert result["result"].unique_id == min(sim.home_uuids())


async def test_homes_step_needs_a_home(hass: HomeAssistant, sim: Sim) -> None:
    """Choosing no home is refused on the homes step; choosing one creates the entry."""
    result = await _start(hass)
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_URL: sim.url, CONF_ACCESS_TOKEN: TOKEN}
    )
    result = await hass.config_entries.flow.async_configure(result["flow_id"], {CONF_HOMES: []})
    assert result["type"] is FlowResultType.FORM
    assert result["errors"] == {"base": "no_homes_selected"}
    await _choose_homes(hass, result, sim)


@pytest.mark.parametrize(
    ("setup", "error"),
    [
        (lambda s: s.faults.update({"revoked": True}), "invalid_auth"),
        (lambda s: s.faults.update({"malformed": True}), "not_an_mcp_server"),
        (lambda s: s.faults.update({"error_rate": 1.0}), "cannot_connect"),
    ],
)
async def test_token_flow_errors_then_recovers(
    hass: HomeAssistant, sim: Sim, setup: Any, error: str
) -> None:
    """Each failure shows its own error; fixing it lets the same form continue."""
    setup(sim)
    result = await _start(hass)
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_URL: sim.url, CONF_ACCESS_TOKEN: TOKEN}
    )
    assert result["type"] is FlowResultType.FORM
    assert result["errors"] == {"base": error}
    sim.faults.reset()
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_URL: sim.url, CONF_ACCESS_TOKEN: TOKEN}
    )
    assert result["step_id"] == "homecast_homes"


async def test_token_flow_wrong_token(hass: HomeAssistant, sim: Sim) -> None:
    """A token the server refuses is invalid_auth; the right one continues the flow."""
    result = await _start(hass)
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_URL: sim.url, CONF_ACCESS_TOKEN: "hc_wrong"}
    )
    assert result["errors"] == {"base": "invalid_auth"}
    await _recovers(hass, result, sim)


async def test_token_flow_unreachable(hass: HomeAssistant, sim_factory: SimFactory) -> None:
    """Nothing listening is cannot_connect; a reachable server then continues the flow."""
    gone = await sim_factory()
    url = gone.url
    await gone.server.close()
    result = await _start(hass)
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_URL: url, CONF_ACCESS_TOKEN: TOKEN}
    )
    assert result["errors"] == {"base": "cannot_connect"}
    await _recovers(hass, result, await sim_factory())


async def test_token_flow_timeout(hass: HomeAssistant, sim: Sim) -> None:
    """A server that never answers ends in `timeout` (the probe's timeout made short)."""
    sim.faults.update({"hang": True})
    result = await _start(hass)
    with patch(
        "custom_components.mcp_gateway.backends.homecast.config_flow.McpClient",
        functools.partial(McpClient, timeout=0.05),
    ):
        result = await hass.config_entries.flow.async_configure(
            result["flow_id"], {CONF_URL: sim.url, CONF_ACCESS_TOKEN: TOKEN}
        )
    assert result["errors"] == {"base": "timeout"}
    sim.faults.reset()
    await _recovers(hass, result, sim)


@pytest.mark.parametrize(
    ("raised", "error"),
    [
        (McpRpcError(-32601, "Method not found"), "not_an_mcp_server"),
        (RuntimeError("boom"), "unknown"),
    ],
)
async def test_token_flow_other_errors(
    hass: HomeAssistant, sim: Sim, raised: Exception, error: str
) -> None:
    """A JSON-RPC refusal is not_an_mcp_server, a surprise unknown; a retry then works."""
    result = await _start(hass)
    with patch(
        "custom_components.mcp_gateway.backends.homecast.api.HomecastApi.async_get_state_raw",
        side_effect=raised,
    ):
        result = await hass.config_entries.flow.async_configure(
            result["flow_id"], {CONF_URL: sim.url, CONF_ACCESS_TOKEN: TOKEN}
        )
    assert result["errors"] == {"base": error}
    await _recovers(hass, result, sim)


async def test_token_flow_tool_error_and_no_homes(hass: HomeAssistant, sim: Sim) -> None:
    """A tool failure is `cannot_connect`; an answer without `_homes` is not Homecast."""
    result = await _start(hass)
    base = "custom_components.mcp_gateway.backends.homecast.api.HomecastApi.async_get_state_raw"
    with patch(base, return_value={"something": "else"}):
        result = await hass.config_entries.flow.async_configure(
            result["flow_id"], {CONF_URL: sim.url, CONF_ACCESS_TOKEN: TOKEN}
        )
    assert result["errors"] == {"base": "not_homecast"}
    with patch(base, return_value={"_homes": {}, "_meta": {}}):
        result = await hass.config_entries.flow.async_configure(
            result["flow_id"], {CONF_URL: sim.url, CONF_ACCESS_TOKEN: TOKEN}
        )
    assert result["errors"] == {"base": "no_homes"}
    with patch(base, side_effect=McpToolError("Error: relay offline")):
        result = await hass.config_entries.flow.async_configure(
            result["flow_id"], {CONF_URL: sim.url, CONF_ACCESS_TOKEN: TOKEN}
        )
    assert result["errors"] == {"base": "cannot_connect"}
    await _recovers(hass, result, sim)


async def test_token_flow_aborts_for_configured_account(hass: HomeAssistant, sim: Sim) -> None:
    """Same account (same smallest home), or a token limited to an already followed home."""
    entry = token_entry(sim)
    entry.add_to_hass(hass)
    result = await _start(hass)
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_URL: sim.url, CONF_ACCESS_TOKEN: TOKEN}
    )
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "already_configured"

    # A token that only sees the other home has another "smallest home", same account.
    other = max(sim.home_uuids())
    other_key = next(h.slug for h in sim.state.homes if h.uuid.lower() == other)
    sim.state.add_token("hc_limited", homes={other_key: "control"})
    result = await _start(hass)
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_URL: sim.url, CONF_ACCESS_TOKEN: "hc_limited"}
    )
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "already_configured"


# --- OAuth ----------------------------------------------------------------------------------


@pytest.mark.usefixtures("current_request_with_host")
async def test_oauth_flow_with_dynamic_registration(
    hass: HomeAssistant, sim: Sim, hass_client_no_auth: ClientSessionGenerator
) -> None:
    """Empty token: discovery, registration, PKCE login, homes, entry; it then loads."""
    result = await _start_oauth(hass, sim)
    assert result["type"] is FlowResultType.EXTERNAL_STEP
    query = URL(result["url"]).query
    assert query["scope"] == "mcp:read mcp:write"
    assert query["code_challenge_method"] == "S256"
    assert query["client_id"] in sim.state.clients
    assert sim.state.clients[query["client_id"]]["redirect_uris"] == [REDIRECT]

    result = await _finish_oauth(hass, hass_client_no_auth, result)
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "homecast_homes"
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_HOMES: sim.home_uuids()}
    )
    await hass.async_block_till_done()
    assert result["type"] is FlowResultType.CREATE_ENTRY
    data = result["data"]
    assert data[CONF_AUTH_TYPE] == AUTH_OAUTH
    assert data[CONF_OAUTH_CLIENT]["client_id"] == query["client_id"]
    assert data["token"]["access_token"] in sim.state.tokens
    assert data["auth_implementation"].startswith("homecast_")
    entry = result["result"]
    assert entry.state is ConfigEntryState.LOADED
    assert entry.unique_id == min(sim.home_uuids())


@pytest.mark.usefixtures("current_request_with_host")
async def test_oauth_consent_limited_to_one_home(
    hass: HomeAssistant, sim: Sim, hass_client_no_auth: ClientSessionGenerator
) -> None:
    """The OAuth consent screen limits the homes: only those are offered."""
    sim.state.consent = {sim.state.homes[1].slug: "control"}
    result = await _start_oauth(hass, sim)
    result = await _finish_oauth(hass, hass_client_no_auth, result)
    assert result["step_id"] == "homecast_homes"
    schema = result["data_schema"].schema
    offered = next(iter(schema)).default()
    assert offered == [sim.state.homes[1].uuid.lower()]


@pytest.mark.usefixtures("current_request_with_host")
async def test_oauth_rejected_by_user(
    hass: HomeAssistant, sim: Sim, hass_client_no_auth: ClientSessionGenerator
) -> None:
    """A user who refuses the login aborts with user_rejected_authorize."""
    result = await _start_oauth(hass, sim)
    state = URL(result["url"]).query["state"]
    client = await hass_client_no_auth()
    await client.get("/auth/external/callback", params={"error": "access_denied", "state": state})
    result = await hass.config_entries.flow.async_configure(result["flow_id"])
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "user_rejected_authorize"


@pytest.mark.usefixtures("current_request_with_host")
async def test_oauth_token_refused_after_login(
    hass: HomeAssistant, sim: Sim, hass_client_no_auth: ClientSessionGenerator
) -> None:
    """Login works but the server refuses the new token: the flow aborts with a reason."""
    result = await _start_oauth(hass, sim)
    sim.faults.update({"revoked": True})
    result = await _finish_oauth(hass, hass_client_no_auth, result)
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "homecast_invalid_auth"


async def test_oauth_discovery_failure(hass: HomeAssistant, sim_factory: SimFactory) -> None:
    """No usable metadata: the form says so (a token still works)."""
    sim = await sim_factory()
    url = sim.url
    result = await _start(hass)
    # Nothing listens any more: the metadata cannot be fetched.
    await sim.server.close()
    result = await hass.config_entries.flow.async_configure(result["flow_id"], {CONF_URL: url})
    assert result["type"] is FlowResultType.FORM
    assert result["errors"] == {"base": "oauth_discovery_failed"}
    await _recovers(hass, result, await sim_factory())


@pytest.mark.parametrize(
    "metadata",
    [
        {"issuer": "x"},
        {
            "authorization_endpoint": "a",
            "token_endpoint": "t",
            "code_challenge_methods_supported": ["plain"],
        },
    ],
)
async def test_discovery_rejects_unusable_metadata(
    hass: HomeAssistant, metadata: dict[str, Any]
) -> None:
    """Metadata without endpoints or without S256 is refused."""
    from aiohttp import web
    from aiohttp.test_utils import TestServer

    app = web.Application()

    async def meta(_: web.Request) -> web.Response:
        return web.json_response(metadata)

    app.router.add_get(hc_oauth.WELL_KNOWN, meta)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    try:
        async with aiohttp.ClientSession() as session:
            with pytest.raises(hc_oauth.OAuthDiscoveryError):
                await hc_oauth.async_discover(session, str(server.make_url("/mcp")))
    finally:
        await server.close()


async def test_registration_failures(hass: HomeAssistant, sim: Sim) -> None:
    """A refused or malformed registration is a discovery error."""
    async with aiohttp.ClientSession() as session:
        metadata = await hc_oauth.async_discover(session, sim.url)
        with pytest.raises(hc_oauth.OAuthDiscoveryError, match="HTTP 400"):
            await hc_oauth.async_register(session, metadata, "not a uri")
        bad = {
            **metadata,
            "registration_endpoint": f"{sim.origin}/.well-known/oauth-protected-resource",
        }
        with pytest.raises(hc_oauth.OAuthDiscoveryError):
            await hc_oauth.async_register(session, bad, REDIRECT)


@pytest.mark.usefixtures("current_request_with_host")
async def test_oauth_with_application_credentials(
    hass: HomeAssistant, sim: Sim, hass_client_no_auth: ClientSessionGenerator
) -> None:
    """No registration offered: the user's application credential on the server's endpoints."""
    assert await async_setup_component(hass, "application_credentials", {})
    sim.state.clients["cred_client"] = {
        "client_id": "cred_client",
        "redirect_uris": [REDIRECT],
    }
    await async_import_client_credential(
        hass, DOMAIN, ClientCredential("cred_client", "", name="Homecast app")
    )
    real_discover = hc_oauth.async_discover

    async def no_registration(session: aiohttp.ClientSession, url: str) -> dict[str, Any]:
        metadata = await real_discover(session, url)
        metadata.pop("registration_endpoint")
        return metadata

    result = await _start(hass)
    with patch(
        "custom_components.mcp_gateway.backends.homecast.config_flow.async_discover",
        no_registration,
    ):
        result = await hass.config_entries.flow.async_configure(
            result["flow_id"], {CONF_URL: sim.url}
        )
    assert result["type"] is FlowResultType.EXTERNAL_STEP
    assert URL(result["url"]).query["client_id"] == "cred_client"
    assert str(URL(result["url"]).with_query(None)) == f"{sim.origin}/oauth/authorize"
    result = await _finish_oauth(hass, hass_client_no_auth, result)
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_HOMES: sim.home_uuids()}
    )
    await hass.async_block_till_done()
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert result["data"][CONF_OAUTH_ENDPOINTS]["token_url"] == f"{sim.origin}/oauth/token"
    assert CONF_OAUTH_CLIENT not in result["data"]
    assert result["result"].state is ConfigEntryState.LOADED


async def test_oauth_without_registration_or_credentials(hass: HomeAssistant, sim: Sim) -> None:
    """Nothing to log in with: HA's OAuth base aborts with missing credentials."""
    real_discover = hc_oauth.async_discover

    async def no_registration(session: aiohttp.ClientSession, url: str) -> dict[str, Any]:
        metadata = await real_discover(session, url)
        metadata.pop("registration_endpoint")
        return metadata

    assert await async_setup_component(hass, "application_credentials", {})
    result = await _start(hass)
    with patch(
        "custom_components.mcp_gateway.backends.homecast.config_flow.async_discover",
        no_registration,
    ):
        result = await hass.config_entries.flow.async_configure(
            result["flow_id"], {CONF_URL: sim.url}
        )
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "missing_credentials"


# --- reauth ---------------------------------------------------------------------------------


async def test_reauth_with_new_token(hass: HomeAssistant, sim: Sim) -> None:
    """A revoked token: the entry fails with reauth; a new token fixes and reloads it."""
    entry = token_entry(sim)
    sim.state.revoke_token(TOKEN)
    await setup_entry(hass, entry)
    assert entry.state is ConfigEntryState.SETUP_ERROR
    flows = hass.config_entries.flow.async_progress()
    assert [f["context"]["source"] for f in flows] == ["reauth"]
    flow_id = flows[0]["flow_id"]
    result = await hass.config_entries.flow.async_configure(
        flow_id, {CONF_ACCESS_TOKEN: "hc_still_wrong"}
    )
    assert result["errors"] == {"base": "invalid_auth"}
    sim.state.add_token("hc_new")
    result = await hass.config_entries.flow.async_configure(flow_id, {CONF_ACCESS_TOKEN: "hc_new"})
    await hass.async_block_till_done()
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "reauth_successful"
    assert entry.data[CONF_ACCESS_TOKEN] == "hc_new"
    assert entry.state is ConfigEntryState.LOADED


async def test_reauth_other_account(hass: HomeAssistant, sim: Sim, sim_factory: SimFactory) -> None:
    """A token of another account (its homes differ) is refused."""
    other = await sim_factory(seed=99)
    entry = token_entry(sim, url=other.url)
    entry.add_to_hass(hass)
    result = await entry.start_reauth_flow(hass)
    assert result["step_id"] == "homecast_reauth_confirm"
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_ACCESS_TOKEN: TOKEN}
    )
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "unique_id_mismatch"


@pytest.mark.usefixtures("current_request_with_host")
async def test_reauth_oauth(
    hass: HomeAssistant, sim: Sim, hass_client_no_auth: ClientSessionGenerator
) -> None:
    """An OAuth entry re-logs in; the same account's new token replaces the old one."""
    entry = await _oauth_entry(hass, sim, hass_client_no_auth)
    old = entry.data["token"]["access_token"]
    result = await _flow(hass, entry, "reauth")
    assert result["step_id"] == "homecast_reauth_confirm"
    result = await hass.config_entries.flow.async_configure(result["flow_id"], {})
    result = await _finish_oauth(hass, hass_client_no_auth, result)
    await hass.async_block_till_done()
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "reauth_successful"
    assert entry.data["token"]["access_token"] != old
    assert entry.state is ConfigEntryState.LOADED


async def test_reauth_oauth_discovery_failure(hass: HomeAssistant, sim: Sim) -> None:
    """A reauth whose server metadata cannot be read shows oauth_discovery_failed."""
    entry = token_entry(sim, **{CONF_AUTH_TYPE: AUTH_OAUTH})
    entry.add_to_hass(hass)
    result = await entry.start_reauth_flow(hass)
    await sim.server.close()
    result = await hass.config_entries.flow.async_configure(result["flow_id"], {})
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "homecast_reauth_confirm"
    assert result["errors"] == {"base": "oauth_discovery_failed"}


async def _flow(hass: HomeAssistant, entry: Any, source: str) -> FlowResult:
    """Start a reauth or reconfigure flow of a (non-mock) entry."""
    return await hass.config_entries.flow.async_init(
        DOMAIN, context={"source": source, "entry_id": entry.entry_id}, data=entry.data
    )


async def _start_oauth(hass: HomeAssistant, sim: Sim) -> FlowResult:
    """The user step without a token: the flow sends the user to the server's login."""
    result = await _start(hass)
    return await hass.config_entries.flow.async_configure(result["flow_id"], {CONF_URL: sim.url})


async def _oauth_entry(
    hass: HomeAssistant, sim: Sim, client_factory: ClientSessionGenerator
) -> Any:
    result = await _start_oauth(hass, sim)
    result = await _finish_oauth(hass, client_factory, result)
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_HOMES: sim.home_uuids()}
    )
    await hass.async_block_till_done()
    return result["result"]


# --- reconfigure ----------------------------------------------------------------------------


async def test_reconfigure_token_entry(hass: HomeAssistant, sim: Sim) -> None:
    """New URL check, an empty token keeps the old one, then the homes change."""
    entry = token_entry(sim)
    await setup_entry(hass, entry)
    result = await entry.start_reconfigure_flow(hass)
    assert result["step_id"] == "homecast_reconfigure"
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_URL: sim.url, CONF_ACCESS_TOKEN: "hc_bad"}
    )
    assert result["errors"] == {"base": "invalid_auth"}
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_URL: sim.url, CONF_ACCESS_TOKEN: ""}
    )
    assert result["step_id"] == "homecast_homes"
    first = sim.home_uuids()[0]
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_HOMES: [first]}
    )
    await hass.async_block_till_done()
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "reconfigure_successful"
    assert entry.data[CONF_HOMES] == [first]
    assert entry.data[CONF_ACCESS_TOKEN] == TOKEN


async def test_reconfigure_other_account(
    hass: HomeAssistant, sim: Sim, sim_factory: SimFactory
) -> None:
    """Reconfiguring onto another account aborts with unique_id_mismatch."""
    entry = token_entry(sim)
    entry.add_to_hass(hass)
    other = await sim_factory(seed=7)
    result = await entry.start_reconfigure_flow(hass)
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_URL: other.url}
    )
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "unique_id_mismatch"


@pytest.mark.usefixtures("current_request_with_host")
async def test_reconfigure_oauth_entry(
    hass: HomeAssistant, sim: Sim, hass_client_no_auth: ClientSessionGenerator
) -> None:
    """OAuth entries change only their homes, through their own (refreshing) session."""
    entry = await _oauth_entry(hass, sim, hass_client_no_auth)
    result = await _flow(hass, entry, "reconfigure")
    assert result["step_id"] == "homecast_reconfigure"
    result = await hass.config_entries.flow.async_configure(result["flow_id"], {})
    assert result["step_id"] == "homecast_homes"
    last = sim.home_uuids()[-1]
    result = await hass.config_entries.flow.async_configure(result["flow_id"], {CONF_HOMES: [last]})
    await hass.async_block_till_done()
    assert result["reason"] == "reconfigure_successful"
    assert entry.data[CONF_HOMES] == [last]


async def test_reconfigure_oauth_entry_not_loaded(hass: HomeAssistant, sim: Sim) -> None:
    """Reconfiguring an OAuth entry that is not loaded aborts with homecast_not_loaded."""
    entry = token_entry(sim, **{CONF_AUTH_TYPE: AUTH_OAUTH})
    entry.add_to_hass(hass)
    result = await entry.start_reconfigure_flow(hass)
    result = await hass.config_entries.flow.async_configure(result["flow_id"], {})
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "homecast_not_loaded"


# --- options --------------------------------------------------------------------------------


async def test_options_flow(hass: HomeAssistant, sim: Sim) -> None:
    """The polling interval is validated and applied with a reload."""
    entry = token_entry(sim)
    await setup_entry(hass, entry)
    result = await hass.config_entries.options.async_init(entry.entry_id)
    assert result["type"] is FlowResultType.FORM
    schema = result["data_schema"]
    with pytest.raises(Exception, match="too small"):
        schema({CONF_SCAN_INTERVAL: 2})
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], {CONF_SCAN_INTERVAL: 120, CONF_GATEWAY_EXPOSED: True}
    )
    await hass.async_block_till_done()
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert entry.options[CONF_SCAN_INTERVAL] == 120
    assert entry.runtime_data.coordinator.update_interval.total_seconds() == 120


async def test_default_url_suggested(hass: HomeAssistant) -> None:
    """The URL field suggests the Homecast cloud."""
    result = await _start(hass)
    key = next(k for k in result["data_schema"].schema if k == CONF_URL)
    assert key.description == {"suggested_value": DEFAULT_URL}


async def test_discovery_and_registration_refusals(hass: HomeAssistant) -> None:
    """A 404 for the metadata, and registrations answered without a client id or with junk."""
    from aiohttp import web
    from aiohttp.test_utils import TestServer

    answers: list[web.Response] = []
    app = web.Application()

    async def register(_: web.Request) -> web.Response:
        return answers.pop(0)

    app.router.add_post("/oauth/register", register)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    metadata = {"registration_endpoint": str(server.make_url("/oauth/register"))}
    metadata |= {"authorization_endpoint": "a", "token_endpoint": "t"}
    try:
        async with aiohttp.ClientSession() as session:
            with pytest.raises(hc_oauth.OAuthDiscoveryError, match="HTTP 404"):
                await hc_oauth.async_discover(session, str(server.make_url("/mcp")))
            answers.append(web.json_response({"client_name": "x"}, status=201))
            with pytest.raises(hc_oauth.OAuthDiscoveryError, match="no client_id"):
                await hc_oauth.async_register(session, metadata, REDIRECT)
            answers.append(web.Response(status=201, text="{oops"))
            with pytest.raises(hc_oauth.OAuthDiscoveryError, match="registration failed"):
                await hc_oauth.async_register(session, metadata, REDIRECT)
            answers.append(web.json_response({"client_id": "c1", "client_secret": "s1"}))
            client = await hc_oauth.async_register(session, metadata, REDIRECT)
    finally:
        await server.close()
    assert client == {
        "client_id": "c1",
        "client_secret": "s1",
        "authorize_url": "a",
        "token_url": "t",
    }
    implementation = hc_oauth.HomecastOAuth2Implementation.for_client(hass, client)
    assert implementation.name == "Homecast"
    assert implementation.stored() == client
    assert implementation.domain.startswith("homecast_")


async def test_removed_application_credential_needs_reauth(hass: HomeAssistant, sim: Sim) -> None:
    """An OAuth entry whose implementation is gone cannot refresh: reauth, not retries."""
    assert await async_setup_component(hass, "application_credentials", {})
    entry = token_entry(
        sim,
        **{
            CONF_AUTH_TYPE: AUTH_OAUTH,
            "auth_implementation": "gone",
            "token": {"access_token": "x", "refresh_token": "y", "expires_at": 0},
        },
    )
    await setup_entry(hass, entry)
    assert entry.state is ConfigEntryState.SETUP_ERROR
    flows = hass.config_entries.flow.async_progress_by_handler(DOMAIN)
    assert [f["context"]["source"] for f in flows] == ["reauth"]


async def test_abandoned_homes_step_blocks_nothing(hass: HomeAssistant, sim: Sim) -> None:
    """A flow left at "Choose homes" (a closed tab) does not stop a new one for the account;
    the first to finish creates the entry, and the other then ends as already configured."""
    abandoned = await _start(hass)
    abandoned = await hass.config_entries.flow.async_configure(
        abandoned["flow_id"], {CONF_URL: sim.url, CONF_ACCESS_TOKEN: TOKEN}
    )
    assert abandoned["step_id"] == "homecast_homes"
    second = await _start(hass)
    second = await hass.config_entries.flow.async_configure(
        second["flow_id"], {CONF_URL: sim.url, CONF_ACCESS_TOKEN: TOKEN}
    )
    assert second["type"] is FlowResultType.FORM
    assert second["step_id"] == "homecast_homes"
    with patch("custom_components.mcp_gateway.async_setup_entry", return_value=True):
        second = await hass.config_entries.flow.async_configure(
            second["flow_id"], {CONF_HOMES: sim.home_uuids()}
        )
    assert second["type"] is FlowResultType.CREATE_ENTRY
    # HA ends the abandoned flow of the same account once the entry exists.
    assert not hass.config_entries.flow.async_progress_by_handler(DOMAIN)


async def test_homes_step_checks_again_for_an_entry_made_meanwhile(
    hass: HomeAssistant, sim: Sim
) -> None:
    """An entry for the account added while the homes form was open (by hand, by YAML, by a
    flow HA did not link): finishing the form aborts instead of adding it twice."""
    result = await _start(hass)
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_URL: sim.url, CONF_ACCESS_TOKEN: TOKEN}
    )
    assert result["step_id"] == "homecast_homes"
    token_entry(sim).add_to_hass(hass)
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_HOMES: sim.home_uuids()}
    )
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "already_configured"
