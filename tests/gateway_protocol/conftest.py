"""A gateway over a small in-memory handler, on a real loopback HTTP server."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
import json
from typing import Any

from aiohttp.test_utils import TestClient
from awesomeversion import AwesomeVersion
from homeassistant.auth.models import User
from homeassistant.const import __version__ as HA_VERSION
from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component
import pytest

from custom_components.mcp_gateway.gateway import async_setup_gateway
from custom_components.mcp_gateway.gateway.http.view import GatewayRuntime
from custom_components.mcp_gateway.mcp.server import (
    InvalidParamsError,
    RequestContext,
    ResourceNotFoundError,
    UnknownToolError,
)

URL = "/api/mcp_gateway"
ACCEPT = "application/json, text/event-stream"

# Home Assistant's OAuth as read in each target's source (homeassistant/components/auth/) and
# measured by test_oauth_server.py: 2026.10 binds an S256 code_challenge given to
# /auth/login_flow to the code and /auth/token then requires the matching code_verifier; its
# login page forwards the challenge from /auth/authorize; /auth/authorize's client id may be a
# JSON client-id metadata document. 2025.4 does none of that (its login flow refuses the
# challenge keys, its token endpoint ignores code_verifier, it reads only HTML link tags).
HA_HAS_PKCE = AwesomeVersion(HA_VERSION) >= AwesomeVersion("2026.10")

type ClientFactory = Callable[..., Awaitable[TestClient]]


def _tool(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict:
    return {
        "name": name,
        "title": name.title(),
        "description": description,
        "inputSchema": {"type": "object", "properties": properties, "required": required},
        "annotations": {
            "readOnlyHint": name != "add",
            "destructiveHint": False,
            "idempotentHint": True,
            "openWorldHint": False,
        },
    }


class FakeHandler:
    """ServerHandler over a few in-memory tools; records every context it sees."""

    def __init__(self) -> None:
        self.contexts: list[RequestContext] = []
        self.total = 0
        self.big_size = 10
        self.tools = [
            _tool("echo", "Echo a text.", {"text": {"type": "string"}}, ["text"]),
            _tool("add", "Add to a running total.", {"amount": {"type": "integer"}}, ["amount"]),
            _tool("big", "A result of big_size characters.", {}, []),
            _tool("boom", "Raises a bug.", {}, []),
            _tool("fail", "Fails as a tool.", {}, []),
        ]

    async def list_tools(self, ctx: RequestContext) -> list[dict[str, Any]]:
        self.contexts.append(ctx)
        return self.tools

    async def call_tool(
        self, ctx: RequestContext, name: str, arguments: dict[str, Any]
    ) -> dict[str, Any]:
        self.contexts.append(ctx)
        if name == "echo":
            if not isinstance(arguments.get("text"), str):
                raise InvalidParamsError("text must be a string")
            data: dict[str, Any] = {
                "text": arguments["text"],
                "user": getattr(ctx.user, "name", None),
            }
        elif name == "add":
            self.total += int(arguments.get("amount", 0))
            data = {"total": self.total}
        elif name == "big":
            data = {"blob": "x" * self.big_size}
        elif name == "boom":
            raise RuntimeError("a bug in a tool")
        elif name == "fail":
            return {"content": [{"type": "text", "text": "it failed"}], "isError": True}
        else:
            raise UnknownToolError(name)
        return {
            "content": [{"type": "text", "text": json.dumps(data)}],
            "structuredContent": data,
            "isError": False,
        }

    async def list_resources(self, ctx: RequestContext) -> list[dict[str, Any]]:
        return [{"uri": "mcp-gateway://guide", "name": "guide", "mimeType": "text/markdown"}]

    async def read_resource(self, ctx: RequestContext, uri: str) -> dict[str, Any]:
        if uri != "mcp-gateway://guide":
            raise ResourceNotFoundError(uri)
        return {"contents": [{"uri": uri, "mimeType": "text/markdown", "text": "# Guide"}]}

    async def list_prompts(self, ctx: RequestContext) -> list[dict[str, Any]]:
        return []

    async def get_prompt(
        self, ctx: RequestContext, name: str, arguments: dict[str, Any]
    ) -> dict[str, Any]:
        raise InvalidParamsError(f"Unknown prompt: {name}")


@pytest.fixture
def handler() -> FakeHandler:
    return FakeHandler()


@pytest.fixture
async def gateway(hass: HomeAssistant, handler: FakeHandler) -> GatewayRuntime:
    """HA's HTTP server with the gateway views over the fake handler."""
    assert await async_setup_component(hass, "http", {"http": {}})
    assert await async_setup_component(hass, "auth", {})
    return await async_setup_gateway(hass, handler)


@pytest.fixture
async def client(gateway: GatewayRuntime, hass_client: ClientFactory) -> TestClient:
    """An admin's client (HA's fixture token)."""
    return await hass_client()


@pytest.fixture
async def anon(gateway: GatewayRuntime, hass_client_no_auth: ClientFactory) -> TestClient:
    """A client without credentials."""
    return await hass_client_no_auth()


async def make_token(hass: HomeAssistant, user: User) -> str:
    """An access token of a fresh refresh token for the user."""
    refresh = await hass.auth.async_create_refresh_token(user, "https://client.example/")
    return hass.auth.async_create_access_token(refresh)


def base_url(client: TestClient) -> str:
    """The loopback origin the test server listens on."""
    return str(client.make_url("")).rstrip("/")


async def login_flow(
    anon: TestClient,
    client_id: str,
    redirect_uri: str,
    username: str,
    challenge: dict[str, str] | None = None,
) -> tuple[int, Any]:
    """What HA's login page does when a user signs in: start the flow, give the password.

    HA checks the redirect only at the end. `challenge`: the PKCE code_challenge(_method) of
    /auth/authorize, which the 2026.10 page forwards. Returns the last step's status and body.
    """
    response = await anon.post(
        "/auth/login_flow",
        json={
            "client_id": client_id,
            "handler": ["homeassistant", None],
            "redirect_uri": redirect_uri,
            **(challenge or {}),
        },
    )
    assert response.status == 200, await response.text()
    flow = await response.json()
    response = await anon.post(
        f"/auth/login_flow/{flow['flow_id']}",
        json={"client_id": client_id, "username": username, "password": "s3cret-pass"},
    )
    return response.status, await response.json()


def rpc(method: str, params: dict[str, Any] | None = None, request_id: int | str = 1) -> dict:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message
