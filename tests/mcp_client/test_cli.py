"""The command-line front end (tools/mcp_client_cli.py) against the local fake server."""

from __future__ import annotations

import argparse
import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

from aiohttp import web
import pytest

from .conftest import FakeMcp, rpc_result

CLI_PATH = Path(__file__).resolve().parents[2] / "tools" / "mcp_client_cli.py"


@pytest.fixture(scope="module")
def cli() -> ModuleType:
    """Load the CLI module from its file (tools/ is not a package)."""
    spec = importlib.util.spec_from_file_location("mcp_client_cli", CLI_PATH)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _args(**overrides: Any) -> argparse.Namespace:
    base: dict[str, Any] = {
        "url": "",
        "call": None,
        "args": "{}",
        "call_all": False,
        "token": None,
        "query_token": None,
        "query_param": "access_token",
        "basic": None,
        "legacy": False,
        "timeout": 5.0,
        "verbose": False,
    }
    base.update(overrides)
    return argparse.Namespace(**base)


def test_sample_args(cli: ModuleType) -> None:
    """Required properties get plain sample values; optional ones are left out."""
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "number"},
            "b": {"type": "integer"},
            "mode": {"type": "string", "enum": ["fast", "slow"]},
            "flag": {"type": ["null", "boolean"]},
            "note": {"type": "string"},
        },
        "required": ["a", "b", "mode", "flag"],
    }
    assert cli.sample_args(schema) == {"a": 2, "b": 3, "mode": "fast", "flag": True}
    assert cli.sample_args({}) == {}


async def test_cli_lists_and_calls_everything(cli: ModuleType, fake: FakeMcp) -> None:
    """--call-all calls each listed tool with made-up arguments and reports the results."""

    async def on_post(request: web.Request, body: Any) -> web.StreamResponse:
        if body["method"] == "tools/list":
            tool = {
                "name": "add",
                "inputSchema": {
                    "type": "object",
                    "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                    "required": ["a", "b"],
                },
            }
            return rpc_result(body, {"tools": [tool]})
        if body["method"] == "tools/call":
            total = sum(body["params"]["arguments"].values())
            return rpc_result(body, {"content": [{"type": "text", "text": str(total)}]})
        return await fake.default_post(request, body)

    fake.on_post = on_post
    report, status = await cli.run(_args(url=fake.url, call_all=True, token="t"))
    assert status == 0
    assert report["tools"] == ["add"]
    assert report["results"] == [
        {"tool": "add", "args": {"a": 2, "b": 3}, "is_error": False, "data": 5}
    ]
    assert report["session"] is True
    assert fake.seen[-1].method == "DELETE"
    assert all(s.headers["Authorization"] == "Bearer t" for s in fake.seen)


async def test_cli_reports_tool_errors_and_mcp_errors(cli: ModuleType, fake: FakeMcp) -> None:
    """isError → exit status 1; an MCP error → status 2 with the error named."""

    async def on_post(request: web.Request, body: Any) -> web.StreamResponse:
        if body["method"] == "tools/call":
            result = {"content": [{"type": "text", "text": "no"}], "isError": True}
            return rpc_result(body, result)
        return await fake.default_post(request, body)

    fake.on_post = on_post
    report, status = await cli.run(_args(url=fake.url, call="echo", basic="u:p", legacy=True))
    assert status == 1
    assert report["results"][0]["is_error"] is True
    assert "Basic" in fake.seen[0].headers["Authorization"]

    report, status = await cli.run(_args(url=fake.url.replace("/mcp", "/missing"), query_token="q"))
    assert status == 2
    assert report["error"].startswith("McpConnectionError")
