"""Overhead of our MCP client over a bare aiohttp POST, against the same local server.

usage: .venv/bin/python bench/mcp_client.py [N] [--strict]
Starts a small JSON MCP server in-process on 127.0.0.1, then times N `tools/call` round trips
through McpClient and N bare aiohttp POSTs of the same JSON-RPC body (same headers, response
parsed as JSON), interleaved one by one so both see the same machine conditions. Prints both
medians and their ratio; the target is a ratio of at most 1.10. With --strict the exit status
is 1 when the target is missed.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
import statistics
import sys
import time
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import aiohttp
from aiohttp import web

from custom_components.mcp_gateway.mcp.client import McpClient

TARGET = 1.10
VERSION = "2025-11-25"


async def handle(request: web.Request) -> web.StreamResponse:
    """A minimal stateless MCP server: initialize, notifications and an echo tool."""
    body: dict[str, Any] = await request.json()
    if "id" not in body:
        return web.Response(status=202)
    method = body["method"]
    if method == "initialize":
        result: dict[str, Any] = {
            "protocolVersion": VERSION,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "bench", "version": "1"},
        }
    elif method == "tools/call":
        args = body["params"]["arguments"]
        result = {"content": [{"type": "text", "text": json.dumps(args)}]}
    else:
        error = {"code": -32601, "message": "Method not found"}
        return web.json_response({"jsonrpc": "2.0", "id": body["id"], "error": error})
    return web.json_response({"jsonrpc": "2.0", "id": body["id"], "result": result})


async def bench(n: int) -> float:
    """Run the comparison; return the ratio of medians."""
    app = web.Application()
    app.router.add_post("/mcp", handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    url = f"http://127.0.0.1:{port}/mcp"
    args = {"device": 17, "level": 55}
    headers = {
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "MCP-Protocol-Version": VERSION,
    }
    try:
        async with aiohttp.ClientSession() as session:
            client = McpClient(session, url, prefer_modern=False)
            await client.connect()

            async def ours() -> None:
                result = await client.call_tool("echo", args)
                assert result.data == args

            async def bare(i: int) -> None:
                body = {
                    "jsonrpc": "2.0",
                    "id": i,
                    "method": "tools/call",
                    "params": {"name": "echo", "arguments": args},
                }
                payload = json.dumps(body, separators=(",", ":")).encode()
                async with session.post(url, data=payload, headers=headers) as resp:
                    message = json.loads(await resp.read())
                assert json.loads(message["result"]["content"][0]["text"]) == args

            for i in range(min(200, n)):  # warm up connections and code paths
                await ours()
                await bare(i)

            ours_s: list[float] = []
            bare_s: list[float] = []
            for i in range(n):
                # Alternate who goes first so neither always meets a warmer connection.
                order = (True, False) if i % 2 else (False, True)
                for is_ours in order:
                    start = time.perf_counter()
                    if is_ours:
                        await ours()
                        ours_s.append(time.perf_counter() - start)
                    else:
                        await bare(i)
                        bare_s.append(time.perf_counter() - start)
            stats = client.stats
            await client.close()
    finally:
        await runner.cleanup()

    med_ours = statistics.median(ours_s)
    med_bare = statistics.median(bare_s)
    ratio = med_ours / med_bare
    print(f"MCP client benchmark: {n} tools/call round trips each, interleaved, 127.0.0.1")
    print(f"  bare aiohttp POST  median {med_bare * 1e6:8.1f} us")
    print(f"  McpClient.call_tool median {med_ours * 1e6:8.1f} us")
    print(f"  ratio (ours / bare)        {ratio:8.3f}   target <= {TARGET:.2f}")
    print(
        f"  client stats: {stats.requests} requests, {stats.bytes_sent} bytes sent,"
        f" {stats.bytes_received} bytes received"
    )
    print("  verdict: " + ("PASS" if ratio <= TARGET else "MISS"))
    return ratio


def main() -> int:
    """Parse the arguments and run."""
    numbers = [a for a in sys.argv[1:] if a.isdigit()]
    n = int(numbers[0]) if numbers else 2000
    ratio = asyncio.run(bench(n))
    return 1 if "--strict" in sys.argv and ratio > TARGET else 0


if __name__ == "__main__":
    sys.exit(main())
