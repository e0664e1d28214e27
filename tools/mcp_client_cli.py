"""Command-line front end to our MCP client, for peers and people.

usage: mcp-client-cli [options] URL
Connects, lists the tools and prints one JSON object on stdout. With `--call NAME` it calls one
tool (`--args` JSON); with `--call-all` it calls every listed tool with arguments made up from
its input schema (what the conformance suite's client scenarios expect). Exit status: 0 when
everything worked, 1 when a call returned isError, 2 on any MCP or transport error.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
from pathlib import Path
import sys
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import aiohttp

from custom_components.mcp_gateway.mcp.client import (
    BasicAuth,
    BearerAuth,
    McpAuth,
    McpClient,
    QueryTokenAuth,
)
from custom_components.mcp_gateway.mcp.errors import McpError

_SAMPLES: dict[str, Any] = {
    "number": 2,
    "integer": 2,
    "string": "hello",
    "boolean": True,
    "object": {},
    "array": [],
}


def sample_args(schema: dict[str, Any]) -> dict[str, Any]:
    """Arguments for a tool: a plain sample value for every required property."""
    props = schema.get("properties") or {}
    out: dict[str, Any] = {}
    for index, name in enumerate(schema.get("required") or []):
        prop = props.get(name) or {}
        kind = prop.get("type", "string")
        if isinstance(kind, list):
            kind = next((k for k in kind if k != "null"), "string")
        if prop.get("enum"):
            out[name] = prop["enum"][0]
        elif kind in ("number", "integer"):
            out[name] = index + 2  # distinct values make arithmetic results checkable
        else:
            out[name] = _SAMPLES.get(kind, "hello")
    return out


def build_auth(args: argparse.Namespace) -> McpAuth | None:
    """The auth the options ask for."""
    if args.token:
        return BearerAuth(args.token)
    if args.query_token:
        return QueryTokenAuth(args.query_token, param=args.query_param)
    if args.basic:
        user, _, password = args.basic.partition(":")
        return BasicAuth(user, password)
    return None


async def run(args: argparse.Namespace) -> tuple[dict[str, Any], int]:
    """Do what the options say; return the report and the exit status."""
    # The threaded resolver: the aiodns/pycares pair pip picks next to HA 2025.4 can be
    # mismatched, and names like "localhost" (which the conformance suite uses) would fail.
    connector = aiohttp.TCPConnector(resolver=aiohttp.ThreadedResolver())
    async with aiohttp.ClientSession(connector=connector) as session:
        client = McpClient(
            session,
            args.url,
            auth=build_auth(args),
            timeout=args.timeout,
            client_name="mcp-gateway-cli",
            prefer_modern=not args.legacy,
        )
        try:
            await client.connect()
            report: dict[str, Any] = {
                "protocol_version": client.protocol_version,
                "modern": client.modern,
                "session": client.session_id is not None,
                "server_info": client.server_info,
            }
            tools = await client.list_tools()
            report["tools"] = [tool.get("name") for tool in tools]
            calls: list[tuple[str, dict[str, Any]]] = []
            if args.call:
                calls.append((args.call, json.loads(args.args)))
            if args.call_all:
                calls.extend(
                    (tool["name"], sample_args(tool.get("inputSchema") or {}))
                    for tool in tools
                    if isinstance(tool.get("name"), str)
                )
            status = 0
            results = []
            for name, call_args in calls:
                result = await client.call_tool(name, call_args)
                results.append(
                    {
                        "tool": name,
                        "args": call_args,
                        "is_error": result.is_error,
                        "data": result.data,
                    }
                )
                status = status or (1 if result.is_error else 0)
            if calls:
                report["results"] = results
            report["stats"] = {
                "requests": client.stats.requests,
                "bytes_sent": client.stats.bytes_sent,
                "bytes_received": client.stats.bytes_received,
            }
            return report, status
        except McpError as err:
            return {"error": f"{err.__class__.__name__}: {err}"}, 2
        finally:
            await client.close()


def main(argv: list[str] | None = None) -> int:
    """Parse options, run, print the report."""
    parser = argparse.ArgumentParser(prog="mcp-client-cli", description=__doc__.split("\n")[0])
    parser.add_argument("url")
    parser.add_argument("--call", help="call this tool")
    parser.add_argument("--args", default="{}", help="JSON arguments for --call")
    parser.add_argument("--call-all", action="store_true", help="call every listed tool")
    parser.add_argument("--token", help="bearer token")
    parser.add_argument("--query-token", help="token sent as a query parameter")
    parser.add_argument("--query-param", default="access_token")
    parser.add_argument("--basic", metavar="USER:PASSWORD")
    parser.add_argument("--legacy", action="store_true", help="skip server/discover")
    parser.add_argument("--timeout", type=float, default=30.0)
    parser.add_argument("-v", "--verbose", action="store_true", help="debug log on stderr")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING)
    report, status = asyncio.run(run(args))
    print(json.dumps(report, default=str))
    return status


if __name__ == "__main__":
    sys.exit(main())
