"""A real Home Assistant process on loopback, driven the way a user's browser drives it.

Starts `hass` with a throwaway configuration directory, onboards an owner through the REST
onboarding API, obtains tokens, and runs config flows through the same REST API the frontend
uses. Nothing here reaches into Home Assistant's internals.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
import json
import os
from pathlib import Path
import shutil
import signal
import sys
from typing import Any

import aiohttp

REPO = Path(__file__).resolve().parent.parent
INTEGRATION = REPO / "custom_components" / "mcp_gateway"

# Only what the demo needs: default_config pulls integrations whose packages are absent here.
BASE_CONFIGURATION = """\
homeassistant:
  name: MCP Gateway demo
  time_zone: Europe/Berlin
  country: DE
  unit_system: metric
  currency: EUR
  latitude: 52.52
  longitude: 13.40
  elevation: 34
  external_url: "{base_url}"
  internal_url: "{base_url}"
http:
  server_host: 127.0.0.1
  server_port: {port}
frontend:
config:
history:
logbook:
recorder:
  purge_keep_days: 1
automation: !include automations.yaml
script:
scene:
logger:
  default: warning
  logs:
    custom_components.mcp_gateway: info
"""


class HomeAssistantError(RuntimeError):
    """Home Assistant did not do what the demo asked."""


@dataclass
class HomeAssistantProcess:
    """A `hass` process and the owner's credentials once onboarded."""

    config_dir: Path
    port: int
    username: str = "demo"
    password: str = "demo-password"
    automations: list[dict[str, Any]] = field(default_factory=list)
    process: asyncio.subprocess.Process | None = None
    access_token: str | None = None
    long_lived_token: str | None = None

    @property
    def base_url(self) -> str:
        """Where Home Assistant listens."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def client_id(self) -> str:
        """The OAuth client id the demo logs in as (HA's own frontend uses its base URL)."""
        return f"{self.base_url}/"

    def write_configuration(self) -> None:
        """A fresh configuration directory with our integration linked in."""
        if self.config_dir.exists():
            shutil.rmtree(self.config_dir)
        (self.config_dir / "custom_components").mkdir(parents=True)
        (self.config_dir / "custom_components" / "mcp_gateway").symlink_to(INTEGRATION)
        (self.config_dir / "configuration.yaml").write_text(
            BASE_CONFIGURATION.format(base_url=self.base_url, port=self.port)
        )
        # JSON is valid YAML, and it keeps the automations exactly as the demo wrote them.
        (self.config_dir / "automations.yaml").write_text(json.dumps(self.automations, indent=2))
        # Mark every onboarding step but the owner's as done: the location, analytics and
        # integration steps would add default integrations (weather, radio, TTS) whose
        # packages a --skip-pip install does not have.
        storage = self.config_dir / ".storage"
        storage.mkdir()
        (storage / "onboarding").write_text(
            json.dumps(
                {
                    "version": 4,
                    "minor_version": 1,
                    "key": "onboarding",
                    "data": {"done": ["core_config", "analytics", "integration"]},
                }
            )
        )

    async def start(self, log_path: Path, wait_seconds: float = 120.0) -> None:
        """Start `hass` and wait until its HTTP API answers."""
        self.write_configuration()
        hass_bin = Path(sys.executable).with_name("hass")
        log = log_path.open("wb")
        self.process = await asyncio.create_subprocess_exec(
            str(hass_bin),
            "-c",
            str(self.config_dir),
            "--skip-pip",
            stdout=log,
            stderr=asyncio.subprocess.STDOUT,
            # Its own process group, so Ctrl-C in the terminal reaches the demo, which then
            # stops Home Assistant in order (no orphan left behind).
            start_new_session=True,
        )
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait_seconds
        async with aiohttp.ClientSession() as session:
            while loop.time() < deadline:
                if self.process.returncode is not None:
                    raise HomeAssistantError(
                        f"hass exited with {self.process.returncode}; see {log_path}"
                    )
                try:
                    async with session.get(f"{self.base_url}/api/onboarding") as response:
                        if response.status == 200:
                            return
                except aiohttp.ClientError:
                    pass
                await asyncio.sleep(0.5)
        raise HomeAssistantError(f"Home Assistant did not start within {wait_seconds:.0f} s")

    async def stop(self, grace_seconds: float = 30.0) -> None:
        """Stop `hass` gracefully, then forcibly if it does not finish."""
        process = self.process
        if process is None or process.returncode is not None:
            return
        os.killpg(process.pid, signal.SIGTERM)
        try:
            await asyncio.wait_for(process.wait(), grace_seconds)
        except TimeoutError:
            os.killpg(process.pid, signal.SIGKILL)
            await process.wait()

    async def onboard(self) -> None:
        """Create the owner and finish onboarding, as the first-run wizard does."""
        async with aiohttp.ClientSession() as session:
            code = await _json(
                session.post(
                    f"{self.base_url}/api/onboarding/users",
                    json={
                        "client_id": self.client_id,
                        "name": "Demo Owner",
                        "username": self.username,
                        "password": self.password,
                        "language": "en",
                    },
                )
            )
            tokens = await _json(
                session.post(
                    f"{self.base_url}/auth/token",
                    data={
                        "grant_type": "authorization_code",
                        "code": code["auth_code"],
                        "client_id": self.client_id,
                    },
                )
            )
            self.access_token = tokens["access_token"]
        self.long_lived_token = await self.websocket_command(
            {"type": "auth/long_lived_access_token", "client_name": "MCP client", "lifespan": 365}
        )

    @property
    def headers(self) -> dict[str, str]:
        """Authorization headers of the owner's session."""
        return {"Authorization": f"Bearer {self.access_token}"}

    async def websocket_command(self, command: Mapping[str, Any]) -> Any:
        """Run one websocket command as the owner and return its result."""
        async with (
            aiohttp.ClientSession() as session,
            session.ws_connect(f"{self.base_url}/api/websocket") as ws,
        ):
            await ws.receive_json()  # auth_required
            await ws.send_json({"type": "auth", "access_token": self.access_token})
            answer = await ws.receive_json()
            if answer.get("type") != "auth_ok":
                raise HomeAssistantError(f"websocket auth failed: {answer}")
            await ws.send_json({"id": 1, **command})
            result = await ws.receive_json()
            if not result.get("success"):
                raise HomeAssistantError(f"{command['type']} failed: {result.get('error')}")
            return result.get("result")

    async def config_flow(
        self, handler: str, menu_choice: str, values: Mapping[str, Any]
    ) -> dict[str, Any]:
        """Run a config flow through the REST API the frontend uses, as a user would.

        Picks `menu_choice` in the first menu, then fills each form from `values` (a
        multi-select takes every option, as a user adding all homes would); returns the
        created entry.
        """
        async with aiohttp.ClientSession(headers=self.headers) as session:
            flows = f"{self.base_url}/api/config/config_entries/flow"
            result = await _json(
                session.post(flows, json={"handler": handler, "show_advanced_options": False})
            )
            for _ in range(10):  # no flow of ours has more steps; a loop here is a bug
                kind = result.get("type")
                if kind == "create_entry":
                    return dict(result)
                if kind == "menu":
                    answer: dict[str, Any] = {"next_step_id": menu_choice}
                elif kind == "form":
                    if result.get("errors"):
                        raise HomeAssistantError(f"{handler} flow: {result['errors']}")
                    answer = _fill_form(result.get("data_schema", []), values)
                else:
                    raise HomeAssistantError(f"{handler} flow ended with {result}")
                result = await _json(session.post(f"{flows}/{result['flow_id']}", json=answer))
        raise HomeAssistantError(f"{handler} flow did not finish: {result}")

    async def get(self, path: str) -> Any:
        """GET a REST API path as the owner."""
        async with aiohttp.ClientSession(headers=self.headers) as session:
            return await _json(session.get(f"{self.base_url}{path}"))


def _fill_form(schema: list[dict[str, Any]], values: Mapping[str, Any]) -> dict[str, Any]:
    """The answer a user would give to a form, from known values."""
    answer: dict[str, Any] = {}
    for field_spec in schema:
        name = field_spec["name"]
        if name in values:
            answer[name] = values[name]
        elif field_spec.get("type") == "multi_select":
            answer[name] = list(field_spec.get("options", {}))
    return answer


async def _json(request: Any) -> Any:
    async with request as response:
        text = await response.text()
        if response.status >= 400:
            raise HomeAssistantError(f"{response.method} {response.url}: {response.status} {text}")
        return json.loads(text) if text else None
