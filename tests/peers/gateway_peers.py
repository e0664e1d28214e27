"""Independent MCP implementations against the gateway in a real Home Assistant.

usage: MCP_PEERS=<path to mcp-peers> python -m tests.peers.gateway_peers [--keep]
Runs the conformance suite's generic server scenarios at 2025-06-18 and 2025-11-25, the Python
SDK 2.x client in legacy and auto modes, and the MCP Inspector CLI; exits non-zero on any failure.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

from demo.ha import HomeAssistantProcess

# The conformance proxy and the Inspector talk from a localhost origin.
GATEWAY_OPTIONS = {"allowed_origins": ["http://localhost:*"]}


async def _run(name: str, argv: list[str], check: Any = None) -> bool:
    process = await asyncio.create_subprocess_exec(
        *argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
    )
    output = (await process.communicate())[0].decode(errors="replace")
    ok = process.returncode == 0
    detail = ""
    if ok and check is not None:
        try:
            detail = check(output)
        except (AssertionError, ValueError, KeyError, IndexError) as err:
            ok, detail = False, f"unexpected output: {err!r}"
    print(f"{'ok  ' if ok else 'FAIL'} {name}{f' ({detail})' if detail else ''}")
    if not ok or os.environ.get("PEERS_VERBOSE"):
        print("    " + output.strip().replace("\n", "\n    "))
    return ok


def _sdk_check(expected_version: str) -> Any:
    def check(output: str) -> str:
        report = json.loads(output.strip().splitlines()[-1])
        assert report["protocol_version"] == expected_version, report
        assert "search_tools" in report["tools"], report
        if "result" in report:
            assert not report["result"].get("isError"), report["result"]
        return f"protocol {report['protocol_version']}, {len(report['tools'])} tools"

    return check


def _inspector_check(output: str) -> str:
    # The Inspector prints the JSON answer, then notes of its own; newer ones also print
    # "[mcp-inspector] …" notes (where secrets are kept) before it.
    start = output.find("\n{") + 1 if not output.lstrip().startswith("{") else 0
    tools = json.JSONDecoder().raw_decode(output[start:].strip())[0]["tools"]
    assert any(tool["name"] == "get_state" for tool in tools)
    return f"{len(tools)} tools"


async def main(keep: bool) -> int:
    peers = os.environ.get("MCP_PEERS")
    if not peers:
        print("set MCP_PEERS to the mcp-peers tool", file=sys.stderr)
        return 2
    async with HomeAssistantProcess(
        name="MCP peers", gateway_options=GATEWAY_OPTIONS, keep=keep, token_lifespan=1
    ) as ha:
        url = f"{ha.base_url}/api/mcp_gateway"
        token = ["--token", ha.token]
        print(f"== Home Assistant with MCP Gateway at {url} (log: {ha.log})")
        results = [
            await _run(
                f"conformance server scenarios at {version}",
                [peers, "conformance-server", url, *token, "--spec-version", version],
            )
            for version in ("2025-06-18", "2025-11-25")
        ]
        for mode, version in (("legacy", "2025-11-25"), ("auto", "2026-07-28")):
            results.append(
                await _run(
                    f"Python SDK 2.x, {mode} mode",
                    [
                        peers,
                        "sdk",
                        url,
                        *token,
                        "--sdk",
                        "2",
                        "--mode",
                        mode,
                        "--call",
                        "list_backends",
                        "--args",
                        "{}",
                    ],
                    _sdk_check(version),
                )
            )
        results.append(
            await _run(
                "MCP Inspector CLI tools/list",
                [peers, "inspector", url, *token, "--", "--method", "tools/list"],
                _inspector_check,
            )
        )
        if keep:
            print(f"kept {ha.config_dir}")
    failed = results.count(False)
    print(f"{len(results) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main("--keep" in sys.argv[1:])))
