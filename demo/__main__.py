"""scripts/demo: a real Home Assistant with three simulated backends and the MCP gateway.

Prints the HA URL and login, the MCP URL and a token, and ready-to-paste client configurations,
then `MCP gateway ready: <url>`. Ctrl-C or SIGTERM stops everything it started.

Home Assistant listens on 127.0.0.1:8123 and the Hubitat, Homecast and Robine Wake simulators
on the three ports after it; `MCP_GATEWAY_DEMO_PORT` moves all four (HA on that port).

A second run keeps the first one's configuration and history (in .demo/, or .demo-current/ for
`--ha current`), its entries repointed when the ports moved; `--fresh` starts over.
Settings → Restart restarts Home Assistant inside the demo; the simulators keep running.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.metadata
import json
import os
import signal
import sys
import time
from typing import Any

from yarl import URL

from .dashboard import create_dashboard
from .ha import HASS, HomeAssistantError, HomeAssistantProcess, port_in_use
from .home import DemoHome, demo_home
from .paths import DEMO_DIR, shown

# What `hass` exits with when a user restarts it (homeassistant.const.RESTART_EXIT_CODE).
RESTART_EXIT_CODE = 100
# The order add_backends adds them in.
BACKENDS = ("hubitat", "homecast", "robine_wake")
# What listens where: HA on the base port, each simulator on one of the next three.
SERVICES = ("Home Assistant", "Hubitat simulator", "Homecast simulator", "Robine Wake simulator")
# How long a kept configuration's entries may take to load before the demo says which did not.
LOAD_SECONDS = 60
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


# What the demo shows of approvals: the gateway's defaults, nothing set up for it.
APPROVAL_HINT = (
    "Approval: ask a client to unlock one of the locks, disarm the alarm or open the garage:\n"
    "it waits until you approve it under Settings → Repairs in Home Assistant (or in the\n"
    "client, if it can ask), then runs once."
)


def ha_command() -> tuple[str, ...]:
    """How the demo runs Home Assistant: this venv's `hass`, or, where the venv's MCP SDK is
    not the one core's mcp_server pins (the test peer, newer than HA 2025.4's pin), from the
    benchmark's small venv that holds core's pins over this one, so that Home Assistant's own
    MCP server works in the demo as it does in a real installation."""
    # Imported here: it pulls in the MCP SDK, which only this choice needs.
    from bench.gateway import HA_COMPONENTS, core_venv_python

    manifest = json.loads((HA_COMPONENTS / "mcp_server" / "manifest.json").read_text())
    pins = [r for r in manifest.get("requirements", []) if r.startswith("mcp==")]
    if all(pin == f"mcp=={importlib.metadata.version('mcp')}" for pin in pins):
        return (str(HASS),)
    print("Home Assistant runs with its own MCP SDK pin for its mcp_server …", flush=True)
    return (core_venv_python(), "-P", "-m", "homeassistant")


async def add_backends(ha: HomeAssistantProcess, home: DemoHome) -> list[dict[str, Any]]:
    """Add the three entries through the config flows a user sees; returns the created ones."""
    return [
        # Live updates on: the consent a user gives in the form.
        await ha.config_flow(
            "mcp_gateway", "hubitat", {"url": home.hubitat_url, "hubitat_push": True}
        ),
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


def demo_ports() -> tuple[int, ...]:
    """HA's port (MCP_GATEWAY_DEMO_PORT, 8123 by default) and the simulators' after it."""
    base = int(os.environ.get("MCP_GATEWAY_DEMO_PORT", "8123"))
    if not 1024 <= base <= 65535 - len(SERVICES):
        raise ValueError(base)
    return tuple(range(base, base + len(SERVICES)))


def busy_port(ports: tuple[int, ...]) -> str | None:
    """A one-line error for the first port something else holds; None when all are free."""
    for name, port in zip(SERVICES, ports, strict=True):
        if port_in_use(port):
            return (
                f"scripts/demo: port {port} ({name}) is in use; stop what holds it or set "
                "MCP_GATEWAY_DEMO_PORT to another port (the demo takes it and the three after it)"
            )
    return None


async def run(fresh: bool = False) -> int:
    """Start everything, print how to connect, and wait for Ctrl-C / SIGTERM."""
    started = time.monotonic()
    try:
        ports = demo_ports()
    except ValueError:
        print(
            "scripts/demo: MCP_GATEWAY_DEMO_PORT must be a port number from 1024 to 65532",
            file=sys.stderr,
        )
        return 2
    if message := busy_port(ports):
        print(message, file=sys.stderr)
        return 1
    print("Ports: " + ", ".join(f"{n} {p}" for n, p in zip(SERVICES, ports, strict=True)))
    DEMO_DIR.mkdir(exist_ok=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)

    async with contextlib.AsyncExitStack() as stack:
        try:
            # Fixed simulator ports beside HA's, so a kept configuration's entries reach them.
            home = await stack.enter_async_context(demo_home(ports=ports[1:]))
        except OSError as err:  # taken between the check and now
            print(f"scripts/demo: a simulator port is in use: {err.strerror}", file=sys.stderr)
            return 1
        ha = HomeAssistantProcess(
            config_dir=DEMO_DIR / "config",
            port=ports[0],
            name="MCP Gateway demo",
            owner_name="Demo Owner",
            automations=[],
            extra_yaml=DEMO_YAML,
            log_path=DEMO_DIR / "hass.log",
            command=ha_command(),
        )
        token_file = DEMO_DIR / "token"
        keep = not fresh and ha.onboarded and token_file.exists()
        try:
            print(f"Starting Home Assistant on {ha.base_url} (log: {shown(ha.log)}) …", flush=True)
            await ha.start(keep_state=keep)
            if keep:
                print("Keeping the last demo's configuration and history (--fresh starts over)")
                ha.long_lived_token = token_file.read_text().strip()
                await _repoint(ha, home)
                titles = await _loaded_titles(ha)
            else:
                titles = await _first_run(ha, home)
            token = ha.long_lived_token or ""
            mcp_url = f"{ha.base_url}/api/mcp_gateway"
            print()
            print(f"Home Assistant: {ha.base_url}  (login: {ha.username} / {ha.password})")
            print(f"Backends added: {', '.join(titles)}")
            print(f"MCP endpoint:   {mcp_url}")
            print(f"Access token:   {token}")
            print(
                f"                (also in {shown(token_file)}; "
                f"{shown(DEMO_DIR / 'mcp_url')} has the URL)"
            )
            print()
            print(client_configs(mcp_url, token))
            print()
            print(APPROVAL_HINT)
            print()
            print(f"(ready in {time.monotonic() - started:.0f} s; Ctrl-C stops everything)")
            print(f"MCP gateway ready: {mcp_url}", flush=True)
            return await _serve_until_stopped(ha, stop)
        except HomeAssistantError as err:
            print(f"scripts/demo: {err}", file=sys.stderr)
            return 1
        finally:
            print("Stopping …", flush=True)
            await ha.stop()
    return 1  # not reached: the body returns


async def _first_run(ha: HomeAssistantProcess, home: DemoHome) -> list[str]:
    """Onboard the owner, add the three backends and the demo's dashboard; write what clients
    need to the demo's folder."""
    await ha.onboard()
    entries = await add_backends(ha, home)
    await expose_to_assistants(ha)
    kinds = {e["result"]["entry_id"]: kind for e, kind in zip(entries, BACKENDS, strict=True)}
    await create_dashboard(ha, kinds)
    (DEMO_DIR / "entries.json").write_text(json.dumps(kinds) + "\n")
    (DEMO_DIR / "mcp_url").write_text(f"{ha.base_url}/api/mcp_gateway\n")
    (DEMO_DIR / "token").write_text(f"{ha.long_lived_token}\n")
    (DEMO_DIR / "login").write_text(f"{ha.username}\n{ha.password}\n")
    return [entry["title"] for entry in entries]


async def _repoint(ha: HomeAssistantProcess, home: DemoHome) -> None:
    """A kept configuration started on other ports: point its entries at the simulators' new
    addresses through each entry's Reconfigure, as a user would, and remember the new URL."""
    url_file = DEMO_DIR / "mcp_url"
    before = URL(url_file.read_text().strip()).port if url_file.exists() else None
    if before == ha.port:
        return
    kinds: dict[str, str] = json.loads((DEMO_DIR / "entries.json").read_text())
    urls = {
        "hubitat": {"url": home.hubitat_url},
        "homecast": {"url": home.homecast_url},
        "robine_wake": {"url": home.robine_url},
    }
    for entry_id, kind in kinds.items():
        await ha.reconfigure("mcp_gateway", entry_id, urls[kind])
    url_file.write_text(f"{ha.base_url}/api/mcp_gateway\n")
    print(f"Moved from port {before} to {ha.port}: the backends' entries follow the simulators")


async def _loaded_titles(ha: HomeAssistantProcess) -> list[str]:
    """The entries' titles once all have loaded; an error naming those that do not in time."""
    path = "/api/config/config_entries/entry?domain=mcp_gateway"
    for _ in range(LOAD_SECONDS * 2):
        entries = await ha.get(path)
        waiting = [e for e in entries if e["state"] != "loaded"]
        if not waiting:
            return [entry["title"] for entry in entries]
        await asyncio.sleep(0.5)  # a process we do not control
    raise HomeAssistantError(
        "not loaded: "
        + ", ".join(f"{e['title']} ({e['state']})" for e in waiting)
        + f"; see {shown(ha.log)}"
    )


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
                print(f"Home Assistant exited; see {shown(ha.log)}", file=sys.stderr)
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
