"""Independent MCP implementations against the gateway in a real Home Assistant.

usage: MCP_PEERS=<path to mcp-peers> python -m tests.peers.gateway_peers [--keep]
Runs the conformance suite's generic server scenarios at 2025-06-18 and 2025-11-25, the Python
SDK 2.x client in legacy and auto modes, the MCP Inspector CLI, and the SDK 2.x client as an AI
app whose person approves or declines unlocking a simulated Hubitat lock (elicitation, in both
modes); exits non-zero on any failure.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
import sys
from typing import Any

from demo.ha import HomeAssistantProcess
from demo.home import demo_home

# The conformance proxy and the Inspector talk from a localhost origin.
# The owner lets locks be approved in the AI app (off by default): these checks are about the
# app's own prompt.
GATEWAY_OPTIONS = {"allowed_origins": ["http://localhost:*"], "in_app_approval": ["locks", "other"]}
# The SDK 2.x environment mcp-peers installs (its `sdk` command has no elicitation callback, so
# our own script runs in that environment).
SDK2_PYTHON = (
    Path(os.environ.get("MCP_PEERS_HOME", "~/.cache/mcp-peers")).expanduser() / "venv2/bin/python"
)
SDK_ELICITATION = Path(__file__).resolve().parent / "sdk_elicitation.py"


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
    # The Inspector prints notes of its own (secret store), the JSON answer, then more notes.
    start = output.find("\n{") + 1 if not output.lstrip().startswith("{") else 0
    tools = json.JSONDecoder().raw_decode(output[start:].strip())[0]["tools"]
    assert any(tool["name"] == "get_state" for tool in tools)
    return f"{len(tools)} tools"


async def _state(ha: HomeAssistantProcess, entity_id: str, wanted: str) -> str:
    """The entity's state once it is `wanted`, or whatever it is after 15 s."""
    state = ""
    for _ in range(150):
        state = (await ha.get(f"/api/states/{entity_id}"))["state"]
        if state == wanted:
            break
        await asyncio.sleep(0.1)
    return state


async def _a_lock(ha: HomeAssistantProcess) -> str:
    """The simulated hub's first lock, exposed to assistants as a user would."""
    for _ in range(300):
        registry = await ha.websocket_command({"type": "config/entity_registry/list"})
        locks = sorted(
            e["entity_id"]
            for e in registry
            if e["platform"] == "mcp_gateway" and e["entity_id"].startswith("lock.")
        )
        if locks:
            await ha.websocket_command(
                {
                    "type": "homeassistant/expose_entity",
                    "assistants": ["conversation"],
                    "entity_ids": locks[:1],
                    "should_expose": True,
                }
            )
            return locks[0]
        await asyncio.sleep(0.2)
    raise AssertionError("the simulated hub's locks never appeared")


async def _approval_in_the_app(ha: HomeAssistantProcess, url: str) -> list[bool]:
    """The SDK 2.x client's elicitation callback approves or declines an unlock, in the
    legacy (elicitation/create on the POST's stream) and modern (input_required) forms."""
    results: list[bool] = []
    async with demo_home(activity_every=3600.0) as home:
        await ha.config_flow("mcp_gateway", "hubitat", {"url": home.hubitat_url})
        lock = await _a_lock(ha)
        for mode, version in (("legacy", "2025-11-25"), ("auto", "2026-07-28")):
            for answer in ("decline", "approve"):
                await ha.api("POST", "/api/services/lock/lock", json={"entity_id": lock})
                locked = await _state(ha, lock, "locked")
                wanted = "unlocked" if answer == "approve" else "locked"

                def check(output: str, version: str = version, answer: str = answer) -> str:
                    report = json.loads(output.strip().splitlines()[-1])
                    assert report["protocol_version"] == version, report
                    assert len(report["asked"]) == 1, report
                    assert "→ unlocked" in report["asked"][0], report
                    failed = bool(report["result"].get("isError"))
                    assert failed is (answer == "decline"), report["result"]
                    return f"protocol {version}, asked once"

                ok = await _run(
                    f"Python SDK 2.x {answer}s in the app, {mode} mode",
                    [str(SDK2_PYTHON), str(SDK_ELICITATION), url, ha.token, mode, lock, answer],
                    check,
                )
                state = await _state(ha, lock, wanted)
                if locked != "locked" or state != wanted:
                    print(f"FAIL   the lock was {locked!r} before and is {state!r} after")
                    ok = False
                results.append(ok)
        results.append(await _approval_through_the_bridge(ha, url, lock))
    return results


async def _approval_through_the_bridge(ha: HomeAssistantProcess, url: str, lock: str) -> bool:
    """A stdio app behind mcp-remote (Claude Desktop's bridge) gets the question and approves:
    the bridge passes elicitation both ways."""
    await ha.api("POST", "/api/services/lock/lock", json={"entity_id": lock})
    locked = await _state(ha, lock, "locked")

    def check(output: str) -> str:
        report = json.loads(output.strip().splitlines()[-1])
        assert len(report["asked"]) == 1, report
        assert not report["result"].get("isError"), report["result"]
        return f"protocol {report['protocol_version']}, asked once"

    peers = os.environ["MCP_PEERS"]
    ok = await _run(
        "mcp-remote passes the question to a stdio app, which approves",
        [
            sys.executable,
            "-m",
            "tests.peers.bridge_elicitation",
            peers,
            url,
            ha.token,
            lock,
            "approve",
        ],
        check,
    )
    state = await _state(ha, lock, "unlocked")
    if locked != "locked" or state != "unlocked":
        print(f"FAIL   the lock was {locked!r} before and is {state!r} after")
        ok = False
    return ok


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
        results.extend(await _approval_in_the_app(ha, url))
        if keep:
            print(f"kept {ha.config_dir}")
    failed = results.count(False)
    print(f"{len(results) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main("--keep" in sys.argv[1:])))
