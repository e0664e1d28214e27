"""scripts/demo: a real Home Assistant with three simulated backends and the MCP gateway.

Prints the HA URL and login, the MCP URL and a token, and ready-to-paste client configurations,
then `MCP gateway ready: <url>`. Ctrl-C or SIGTERM stops everything it started.

A second run keeps the first one's configuration and history (.demo/config); `--fresh` starts
over. Settings → Restart restarts Home Assistant inside the demo; the simulators keep running.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
import time
from typing import Any

from .ha import REPO, HomeAssistantProcess
from .home import DemoHome, demo_home

# scripts/demo --ha current keeps its own (a newer HA migrates storage the older cannot read).
DEMO_DIR = REPO / os.environ.get("MCP_GATEWAY_DEMO_DIR", ".demo")
# What `hass` exits with when a user restarts it (homeassistant.const.RESTART_EXIT_CODE).
RESTART_EXIT_CODE = 100
# The order add_backends adds them in.
BACKENDS = ("hubitat", "homecast", "robine_wake")
# What the demo shows besides the base configuration: history, automations, scripts, scenes.
DEMO_YAML = """\
history:
logbook:
recorder:
  purge_keep_days: 1
script:
scene:
logger:
  default: warning
  logs:
    custom_components.mcp_gateway: info
"""


async def add_backends(ha: HomeAssistantProcess, home: DemoHome) -> list[dict[str, Any]]:
    """Add the three entries through the config flows a user sees; returns the created ones."""
    return [
        await ha.config_flow("mcp_gateway", "hubitat", {"url": home.hubitat_url}),
        await ha.config_flow(
            "mcp_gateway",
            "homecast_community",
            {"url": home.homecast_url, "access_token": home.homecast_token},
        ),
        await ha.config_flow(
            "mcp_gateway",
            "robine_wake",
            {"url": home.robine_url, "password": home.robine_password},
        ),
    ]


async def expose_to_assistants(ha: HomeAssistantProcess) -> None:
    """Expose the backends' entities to assistants, as a user who wants AI to reach them does.

    Home Assistant's defaults leave locks, selects and most sensors unexposed, and the gateway
    (like HA's own assistants) reaches only exposed entities by default.
    """
    ours: list[str] = []
    for _ in range(300):
        registry = await ha.websocket_command({"type": "config/entity_registry/list"})
        found = [e["entity_id"] for e in registry if e["platform"] == "mcp_gateway"]
        if found and found == ours:
            break  # no new entities since the last look: the first polls have landed
        ours = found
        await asyncio.sleep(0.5)  # the first polls of three backends
    await ha.websocket_command(
        {
            "type": "homeassistant/expose_entity",
            "assistants": ["conversation"],
            "entity_ids": ours,
            "should_expose": True,
        }
    )


def client_configs(mcp_url: str, token: str) -> str:
    """Ready-to-paste configurations for common MCP clients."""
    claude_desktop = {
        "mcpServers": {
            "home-assistant": {
                "command": "npx",
                "args": [
                    "-y",
                    "mcp-remote",
                    mcp_url,
                    "--header",
                    "Authorization:Bearer ${HA_TOKEN}",
                ],
                "env": {"HA_TOKEN": token},
            }
        }
    }
    return "\n".join(
        [
            "Claude Desktop (claude_desktop_config.json), through mcp-remote:",
            json.dumps(claude_desktop, indent=2),
            "",
            "Claude Code:",
            f"  claude mcp add --transport http home-assistant {mcp_url} "
            f'--header "Authorization: Bearer {token}"',
            "",
            "MCP Inspector (CLI):",
            f"  npx @modelcontextprotocol/inspector --cli {mcp_url} --transport http "
            f'--header "Authorization: Bearer {token}" --method tools/list',
        ]
    )


async def run(fresh: bool = False) -> int:
    """Start everything, print how to connect, and wait for Ctrl-C / SIGTERM."""
    started = time.monotonic()
    DEMO_DIR.mkdir(exist_ok=True)
    port = int(os.environ.get("MCP_GATEWAY_DEMO_PORT", "8123"))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)

    # Fixed simulator ports beside HA's, so a kept configuration's entries still reach them.
    async with demo_home(ports=(port + 1, port + 2, port + 3)) as home:
        ha = HomeAssistantProcess(
            config_dir=DEMO_DIR / "config",
            port=port,
            name="MCP Gateway demo",
            owner_name="Demo Owner",
            automations=[],
            extra_yaml=DEMO_YAML,
            log_path=DEMO_DIR / "hass.log",
        )
        token_file = DEMO_DIR / "token"
        keep = not fresh and ha.onboarded and token_file.exists()
        try:
            print(f"Starting Home Assistant on {ha.base_url} (log: .demo/hass.log) …", flush=True)
            await ha.start(keep_state=keep)
            if keep:
                print("Keeping the last demo's configuration and history (--fresh starts over)")
                ha.long_lived_token = token_file.read_text().strip()
                entries = await ha.get("/api/config/config_entries/entry?domain=mcp_gateway")
                titles = [entry["title"] for entry in entries]
            else:
                titles = await _first_run(ha, home)
            token = ha.long_lived_token or ""
            mcp_url = f"{ha.base_url}/api/mcp_gateway"
            print()
            print(f"Home Assistant: {ha.base_url}  (login: {ha.username} / {ha.password})")
            print(f"Backends added: {', '.join(titles)}")
            print(f"MCP endpoint:   {mcp_url}")
            print(f"Access token:   {token}")
            print("                (also in .demo/token; .demo/mcp_url has the URL)")
            print()
            print(client_configs(mcp_url, token))
            print()
            print(f"(ready in {time.monotonic() - started:.0f} s; Ctrl-C stops everything)")
            print(f"MCP gateway ready: {mcp_url}", flush=True)
            return await _serve_until_stopped(ha, stop)
        finally:
            print("Stopping …", flush=True)
            await ha.stop()


async def _first_run(ha: HomeAssistantProcess, home: DemoHome) -> list[str]:
    """Onboard the owner and add the three backends; write what clients need to .demo/."""
    await ha.onboard()
    entries = await add_backends(ha, home)
    await expose_to_assistants(ha)
    kinds = {e["result"]["entry_id"]: kind for e, kind in zip(entries, BACKENDS, strict=True)}
    (DEMO_DIR / "entries.json").write_text(json.dumps(kinds) + "\n")
    (DEMO_DIR / "mcp_url").write_text(f"{ha.base_url}/api/mcp_gateway\n")
    (DEMO_DIR / "token").write_text(f"{ha.long_lived_token}\n")
    (DEMO_DIR / "login").write_text(f"{ha.username}\n{ha.password}\n")
    return [entry["title"] for entry in entries]


async def _serve_until_stopped(ha: HomeAssistantProcess, stop: asyncio.Event) -> int:
    """Wait for Ctrl-C; start Home Assistant again whenever a user restarts it."""
    waiter = asyncio.create_task(stop.wait())
    try:
        while True:
            process = ha.process
            exited = asyncio.create_task(process.wait()) if process else waiter
            await asyncio.wait({waiter, exited}, return_when=asyncio.FIRST_COMPLETED)
            if stop.is_set():
                exited.cancel()
                return 0
            if exited.result() != RESTART_EXIT_CODE:
                print("Home Assistant exited; see .demo/hass.log", file=sys.stderr)
                return 1
            print("Home Assistant is restarting (Settings → Restart) …", flush=True)
            restart = asyncio.create_task(ha.start(keep_state=True))
            await asyncio.wait({waiter, restart}, return_when=asyncio.FIRST_COMPLETED)
            if stop.is_set():
                restart.cancel()  # start() stops the half-started hass on its way out
                await asyncio.gather(restart, return_exceptions=True)
                return 0
            if (err := restart.exception()) is not None:
                print(f"Home Assistant did not come back: {err}", file=sys.stderr)
                return 1
            print(f"Home Assistant is back: {ha.base_url}", flush=True)
    finally:
        waiter.cancel()


def main() -> None:
    """Entry point of `python -m demo`."""
    parser = argparse.ArgumentParser(prog="scripts/demo", description=__doc__.split("\n")[0])
    parser.add_argument(
        "--fresh", action="store_true", help="start over: a new configuration and history"
    )
    sys.exit(asyncio.run(run(fresh=parser.parse_args().fresh)))


if __name__ == "__main__":
    main()
