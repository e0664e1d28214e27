"""Bad input on the gateway's unauthenticated endpoints is a 4xx, never a 500 or a traceback.

The endpoints anyone may reach without a token: the RFC 9728 and RFC 8414 documents, client
registration, and the gateway's own URLs up to their 401. Each attack is sent over real HTTP,
and the log is read for errors and tracebacks.
"""

from __future__ import annotations

import logging

import pytest

from custom_components.mcp_gateway.gateway.http.oauth import (
    AUTHORIZATION_SERVER_PATH,
    REGISTER_URL,
)
from custom_components.mcp_gateway.gateway.http.view import RESOURCE_METADATA_PATH

from .conftest import SIGNED_OUT, URL, SecurityHome

ACCEPT = {"Accept": "application/json, text/event-stream"}
# Hosts the issue sent, and others aiohttp's URL parsing refuses the same way.
MALFORMED_HOSTS = (
    "localhost@evil.com",
    "127.0.0.1:1/x?",
    "localhost:99999",
    "exa mple.com",
    "localhost:port",
)


def _no_errors(caplog: pytest.LogCaptureFixture) -> None:
    # asyncio's slow-callback warnings tell of a loaded machine, not of the request.
    errors = [
        r
        for r in caplog.records
        if r.name != "asyncio" and (r.levelno >= logging.WARNING or r.exc_info)
    ]
    assert not errors, [r.getMessage()[:200] for r in errors]


@pytest.mark.parametrize("host", MALFORMED_HOSTS)
async def test_a_malformed_host_is_a_client_error(
    home: SecurityHome, host: str, caplog: pytest.LogCaptureFixture
) -> None:
    """The issue: such a Host gave 500 and about 50 log lines on every unauthenticated door."""
    anon = home.clients["none"]
    with caplog.at_level(logging.DEBUG, logger="homeassistant"):
        caplog.clear()
        for path in (RESOURCE_METADATA_PATH, AUTHORIZATION_SERVER_PATH):
            response = await anon.get(path, headers={"Host": host})
            await response.read()
            assert 400 <= response.status < 500, (path, host, response.status)
        response = await anon.post(URL, json={}, headers={**ACCEPT, "Host": host})
        await response.read()
        assert 400 <= response.status < 500, (host, response.status)
        response = await anon.get(f"{URL}/sse", headers={**ACCEPT, "Host": host})
        await response.read()
        assert 400 <= response.status < 500, (host, response.status)
        response = await anon.post(
            REGISTER_URL,
            json={"redirect_uris": ["http://localhost:3000/callback"]},
            headers={"Host": host, "Origin": "http://localhost:3000"},
        )
        await response.read()
        assert 400 <= response.status < 500, (host, response.status)
        # A browser's preflight from a page on that host: refused, not failed.
        response = await anon.options(
            URL,
            headers={
                "Host": host,
                "Origin": "http://localhost:3000",
                "Access-Control-Request-Method": "POST",
            },
        )
        await response.read()
        assert response.status == 403, (host, response.status)
    _no_errors(caplog)


@pytest.mark.parametrize("kind", SIGNED_OUT)
async def test_a_malformed_host_without_a_document_still_gets_its_401(
    home: SecurityHome, kind: str
) -> None:
    """A caller with a bad or missing token and a malformed Host is told to sign in."""
    response = await home.clients[kind].post(
        URL, json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers={**ACCEPT, "Host": "a@b"}
    )
    await response.read()
    assert response.status == 401


@pytest.mark.parametrize(
    "redirect",
    [
        "http://localhost:99999/cb",
        "http://[::1/cb",
        "http://" + "a" * 300 + ".example/cb",
        "http://localhost:3000/cb#frag",
        "javascript:alert(1)",
    ],
)
async def test_a_malformed_redirect_is_a_client_error(
    home: SecurityHome, redirect: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Redirect URIs that no URL parser agrees on are refused, never failed on."""
    with caplog.at_level(logging.DEBUG, logger="homeassistant"):
        caplog.clear()
        response = await home.clients["none"].post(REGISTER_URL, json={"redirect_uris": [redirect]})
        answer = await response.json()
    assert response.status == 400, (response.status, answer)
    assert answer["error"] == "invalid_redirect_uri"
    _no_errors(caplog)


@pytest.mark.parametrize(
    "redirect", ["https://xn--/cb", "https://exa\u00admple.com/cb", "https://\u2028.example/cb"]
)
async def test_an_odd_host_is_answered_as_home_assistant_decides(
    home: SecurityHome, redirect: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Hosts HA's own client-id check accepts are registered (its login checks them again);
    either way an answer, never a failure."""
    with caplog.at_level(logging.DEBUG, logger="homeassistant"):
        caplog.clear()
        response = await home.clients["none"].post(REGISTER_URL, json={"redirect_uris": [redirect]})
        await response.read()
    assert response.status in (201, 400)
    _no_errors(caplog)


@pytest.mark.parametrize(
    "body",
    [
        b'{"redirect_uris":["http://localhost:3000/cb"],"client_name":"\\ud800"}',
        b'{"redirect_uris":["http://localhost:3000/\\udfff"]}',
        b'{"redirect_uris":["http://localhost:3000/cb"],"\\ud83d":1}',
        b'{"redirect_uris":["http://localhost:3000/cb"],"grant_types":["\\udc00"]}',
        b"[" * 5000 + b"]" * 5000,
        b"\xff\xfe{}",
    ],
    ids=["name", "redirect", "key", "grant", "nesting", "encoding"],
)
async def test_a_malformed_registration_is_a_client_error(
    home: SecurityHome, body: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    """The issue: a lone surrogate in a registration body gave 500 with a traceback."""
    with caplog.at_level(logging.DEBUG, logger="homeassistant"):
        caplog.clear()
        response = await home.clients["none"].post(
            REGISTER_URL, data=body, headers={"Content-Type": "application/json"}
        )
        answer = await response.json()
    assert response.status == 400, (response.status, answer)
    assert answer["error"] == "invalid_client_metadata"
    _no_errors(caplog)
