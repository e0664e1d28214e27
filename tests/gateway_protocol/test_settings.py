"""The gateway settings entry: config flow, options, reconfigure, setup, and how it is read."""

from __future__ import annotations

from homeassistant.config_entries import SOURCE_USER, ConfigEntryState
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType, InvalidData
from homeassistant.setup import async_setup_component
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry, MockUser

from custom_components.mcp_gateway.core.const import CONF_BACKEND, DOMAIN
from custom_components.mcp_gateway.core.settings import (
    CATEGORY_OTHER,
    CONF_ALLOW_NON_ADMIN,
    CONF_ALLOWED_ORIGINS,
    CONF_APPROVAL,
    CONF_APPROVAL_ENTITIES,
    CONF_APPROVAL_EXEMPT,
    CONF_APPROVAL_PHONES,
    CONF_APPROVAL_TIMEOUT,
    CONF_APPROVAL_TOOLS,
    CONF_APPROVERS,
    CONF_AUTOMATIONS_FOR_USERS,
    CONF_EXPOSED_ONLY,
    CONF_IN_APP_APPROVAL,
    CONF_MAX_ANSWER_MIB,
    CONF_RATE_LIMIT,
    DEFAULT_APPROVAL_TIMEOUT,
    DEFAULT_MAX_ANSWER_MIB,
    DEFAULT_RATE_LIMIT,
    DEFAULT_SETTINGS,
    MAX_APPROVAL_TIMEOUT,
    GatewaySettings,
    gateway_settings,
    normalize_origin,
    origin_allowed,
    settings_from_options,
)
from tests.simulation import gateway_entry


@pytest.fixture
async def setup_http(hass: HomeAssistant) -> None:
    assert await async_setup_component(hass, "http", {})


@pytest.mark.usefixtures("setup_http")
async def test_user_flow_creates_the_gateway_entry(hass: HomeAssistant) -> None:
    """The menu's gateway step creates the singleton settings entry, once."""
    result = await hass.config_entries.flow.async_init(DOMAIN, context={"source": SOURCE_USER})
    assert result["type"] is FlowResultType.MENU
    assert "gateway" in result["menu_options"]
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {"next_step_id": "gateway"}
    )
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "gateway"

    result = await hass.config_entries.flow.async_configure(
        result["flow_id"],
        {
            CONF_ALLOWED_ORIGINS: ["http://example.com/path"],
            CONF_RATE_LIMIT: 5,
            CONF_ALLOW_NON_ADMIN: True,
        },
    )
    assert result["type"] is FlowResultType.FORM
    assert result["errors"] == {CONF_ALLOWED_ORIGINS: "invalid_origin"}

    result = await hass.config_entries.flow.async_configure(
        result["flow_id"],
        {
            CONF_ALLOWED_ORIGINS: [
                "HTTP://Inspector.Local:6274",
                "",
                "http://inspector.local:6274",
            ],
            CONF_RATE_LIMIT: 30.0,
            CONF_ALLOW_NON_ADMIN: False,
            CONF_EXPOSED_ONLY: False,
        },
    )
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert result["title"] == "MCP gateway"
    assert result["data"] == {CONF_BACKEND: "gateway"}
    entry = result["result"]
    assert entry.unique_id == "gateway"
    assert entry.options == {
        CONF_ALLOWED_ORIGINS: ["http://inspector.local:6274"],
        CONF_RATE_LIMIT: 30,
        CONF_ALLOW_NON_ADMIN: False,
        CONF_EXPOSED_ONLY: False,
        CONF_MAX_ANSWER_MIB: DEFAULT_MAX_ANSWER_MIB,
        # A person approves sensitive actions unless the owner says otherwise.
        CONF_APPROVAL: True,
        CONF_APPROVAL_TIMEOUT: DEFAULT_APPROVAL_TIMEOUT,
        CONF_APPROVERS: [],
        CONF_APPROVAL_EXEMPT: [],
        CONF_APPROVAL_ENTITIES: [],
        CONF_APPROVAL_TOOLS: [],
        # Only administrators' assistants edit automations unless the owner says otherwise.
        CONF_AUTOMATIONS_FOR_USERS: False,
        # No phone is asked until an administrator picks one; in the AI app only what lets
        # nobody in may be approved.
        CONF_APPROVAL_PHONES: [],
        CONF_IN_APP_APPROVAL: [CATEGORY_OTHER],
    }
    await hass.async_block_till_done()
    assert entry.state is ConfigEntryState.LOADED
    assert gateway_settings(hass) == GatewaySettings(
        allowed_origins=("http://inspector.local:6274",),
        rate_limit_per_minute=30,
        allow_non_admin=False,
        exposed_only=False,
    )

    # A second gateway entry is refused.
    result = await hass.config_entries.flow.async_init(DOMAIN, context={"source": SOURCE_USER})
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {"next_step_id": "gateway"}
    )
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "gateway_already_configured"

    assert await hass.config_entries.async_unload(entry.entry_id)
    assert entry.state is ConfigEntryState.NOT_LOADED
    # Settings are read from the entry's options whether or not it is loaded.
    assert gateway_settings(hass).rate_limit_per_minute == 30


@pytest.mark.usefixtures("setup_http")
async def test_options_flow_edits_the_settings(hass: HomeAssistant) -> None:
    """The options flow edits the settings and refuses an invalid origin."""
    entry = gateway_entry({CONF_RATE_LIMIT: 10})
    entry.add_to_hass(hass)
    # Read (and remembered) before the edit, so the edit must replace what was remembered.
    assert gateway_settings(hass).rate_limit_per_minute == 10
    result = await hass.config_entries.options.async_init(entry.entry_id)
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "gateway"
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], {CONF_ALLOWED_ORIGINS: ["ftp://x"], CONF_RATE_LIMIT: 500}
    )
    assert result["errors"] == {CONF_ALLOWED_ORIGINS: "invalid_origin"}
    result = await hass.config_entries.options.async_configure(
        result["flow_id"],
        {
            CONF_ALLOWED_ORIGINS: ["http://localhost:*"],
            CONF_RATE_LIMIT: 500,
            CONF_ALLOW_NON_ADMIN: True,
        },
    )
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert gateway_settings(hass) == GatewaySettings(
        allowed_origins=("http://localhost:*",), rate_limit_per_minute=500, allow_non_admin=True
    )
    # The rate limit cannot be switched off: the form refuses 0.
    result = await hass.config_entries.options.async_init(entry.entry_id)
    with pytest.raises(InvalidData):
        await hass.config_entries.options.async_configure(
            result["flow_id"], {CONF_ALLOWED_ORIGINS: [], CONF_RATE_LIMIT: 0}
        )


async def test_options_flow_sets_who_approves_what(
    hass: HomeAssistant, hass_admin_user: MockUser, hass_read_only_user: MockUser
) -> None:
    """Approvers and exempt users are chosen among HA's people; entities and tools are added;
    the time limit stays within its bounds; approval can be turned off."""
    entry = gateway_entry()
    entry.add_to_hass(hass)
    result = await hass.config_entries.options.async_init(entry.entry_id)
    schema = result["data_schema"].schema
    people = next(v for k, v in schema.items() if k == CONF_APPROVERS)
    offered = {option["value"] for option in people.config["options"]}
    assert {hass_admin_user.id, hass_read_only_user.id} <= offered
    # HA's own system users are nobody to ask.
    for user_id in offered:
        user = await hass.auth.async_get_user(user_id)
        assert user is not None
        assert not user.system_generated
    with pytest.raises(InvalidData):
        await hass.config_entries.options.async_configure(
            result["flow_id"], {CONF_APPROVERS: ["nobody"]}
        )
    result = await hass.config_entries.options.async_configure(
        result["flow_id"],
        {
            CONF_APPROVERS: [hass_admin_user.id],
            CONF_APPROVAL_EXEMPT: [hass_read_only_user.id],
            CONF_APPROVAL_ENTITIES: ["light.front_porch"],
            CONF_APPROVAL_TOOLS: [" hub_call_device_command ", ""],
            CONF_APPROVAL_TIMEOUT: MAX_APPROVAL_TIMEOUT,
        },
    )
    assert result["type"] is FlowResultType.CREATE_ENTRY
    settings = gateway_settings(hass)
    assert settings.approval
    assert settings.approvers == (hass_admin_user.id,)
    assert settings.approval_exempt_users == (hass_read_only_user.id,)
    assert settings.approval_entities == ("light.front_porch",)
    assert settings.approval_tools == ("hub_call_device_command",)
    assert settings.approval_timeout == MAX_APPROVAL_TIMEOUT
    result = await hass.config_entries.options.async_init(entry.entry_id)
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], {CONF_APPROVAL: False}
    )
    assert not gateway_settings(hass).approval
    # Stored values out of bounds or malformed fall back or are clamped.
    assert settings_from_options({CONF_APPROVAL_TIMEOUT: 1}).approval_timeout == 15
    assert settings_from_options({CONF_APPROVAL_TIMEOUT: "x"}).approval_timeout == (
        DEFAULT_APPROVAL_TIMEOUT
    )
    assert settings_from_options({CONF_APPROVERS: 7}).approvers == ()


@pytest.mark.usefixtures("setup_http")
async def test_reconfigure_edits_the_settings(hass: HomeAssistant) -> None:
    """Reconfigure edits the same settings and refuses an invalid origin."""
    entry = gateway_entry()
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    result = await entry.start_reconfigure_flow(hass)
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "gateway_reconfigure"
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_ALLOWED_ORIGINS: ["not an origin"]}
    )
    assert result["errors"] == {CONF_ALLOWED_ORIGINS: "invalid_origin"}
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"],
        {CONF_ALLOWED_ORIGINS: [], CONF_RATE_LIMIT: 7, CONF_ALLOW_NON_ADMIN: True},
    )
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "reconfigure_successful"
    assert gateway_settings(hass).rate_limit_per_minute == 7


async def test_defaults_without_a_gateway_entry(hass: HomeAssistant) -> None:
    """Without a gateway entry the defaults apply."""
    MockConfigEntry(domain=DOMAIN, data={CONF_BACKEND: "hubitat"}).add_to_hass(hass)
    assert gateway_settings(hass) is DEFAULT_SETTINGS
    # The rate limit is on by default.
    assert GatewaySettings((), DEFAULT_RATE_LIMIT, True) == DEFAULT_SETTINGS
    assert DEFAULT_SETTINGS.rate_limit_per_minute == 120


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({}, GatewaySettings()),
        ({CONF_RATE_LIMIT: 0}, GatewaySettings()),
        ({CONF_RATE_LIMIT: -3}, GatewaySettings()),
        ({CONF_RATE_LIMIT: True}, GatewaySettings()),
        ({CONF_RATE_LIMIT: "12"}, GatewaySettings()),
        ({CONF_RATE_LIMIT: 12}, GatewaySettings(rate_limit_per_minute=12)),
        (
            {CONF_ALLOWED_ORIGINS: "https://a.example, http://b.example:8080 junk"},
            GatewaySettings(allowed_origins=("https://a.example", "http://b.example:8080")),
        ),
        (
            {CONF_ALLOWED_ORIGINS: [1, "https://a.example:443"]},
            GatewaySettings(("https://a.example",)),
        ),
        ({CONF_ALLOW_NON_ADMIN: False}, GatewaySettings(allow_non_admin=False)),
        (
            {CONF_APPROVAL_PHONES: ["entry1", 7, " ", "entry1"]},
            GatewaySettings(approval_phones=("entry1",)),
        ),
        # Unknown categories go; none stored is none allowed, not the default.
        (
            {CONF_IN_APP_APPROVAL: ["locks", "doors", 3]},
            GatewaySettings(in_app_approval=("locks",)),
        ),
        ({CONF_IN_APP_APPROVAL: []}, GatewaySettings(in_app_approval=())),
        ({CONF_IN_APP_APPROVAL: None}, GatewaySettings(in_app_approval=())),
    ],
)
def test_settings_from_stored_options(options: dict, expected: GatewaySettings) -> None:
    """Stored options become settings, tolerating missing or odd values."""
    assert settings_from_options(options) == expected


@pytest.mark.parametrize(
    ("origin", "normalized"),
    [
        ("http://localhost:*", "http://localhost:*"),
        ("HTTPS://Example.COM:443", "https://example.com"),
        ("http://127.0.0.1:80", "http://127.0.0.1"),
        ("http://[::1]:8123", "http://[::1]:8123"),
        ("https://x.example:8443/", "https://x.example:8443"),
        ("http://a.example/path", None),
        ("http://a.example?q=1", None),
        ("http://a.example#f", None),
        ("http://user@a.example", None),
        ("ftp://a.example", None),
        ("null", None),
        ("", None),
        ("http://x:1:*", None),
        ("http://[broken", None),
    ],
)
def test_normalize_origin(origin: str, normalized: str | None) -> None:
    """Origins are normalized to scheme://host[:port]."""
    assert normalize_origin(origin) == normalized


@pytest.mark.parametrize(
    ("origin", "allowed", "ok"),
    [
        ("http://localhost:6274", ["http://localhost:*"], True),
        ("http://localhost", ["http://localhost:*"], True),
        ("http://localhost.evil.example", ["http://localhost:*"], False),
        ("https://localhost:6274", ["http://localhost:*"], False),
        ("http://ha.local:8123", ["http://ha.local:8123"], True),
        ("http://ha.local:8124", ["http://ha.local:8123"], False),
        ("null", ["http://ha.local:8123"], False),
    ],
)
def test_origin_allowed(origin: str, allowed: list[str], ok: bool) -> None:
    """An origin is allowed by exact match or a port wildcard only."""
    assert origin_allowed(origin, allowed) is ok
