"""A throw-away real Home Assistant with MCP Gateway, for peer checks and the benchmark.

It runs `hass -c <tmpdir> --skip-pip` on a free loopback port with a minimal configuration,
onboards an owner over the REST onboarding API, obtains a long-lived token over the websocket
and creates the gateway's settings entry through the config-flow REST API (which also sets the
integration up). Only 127.0.0.1 is ever contacted.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
import contextlib
from dataclasses import dataclass, field
import os
from pathlib import Path
import shutil
import socket
import sys
import tempfile
import time
from typing import Any, Self

import aiohttp

REPO = Path(__file__).resolve().parents[2]
HASS = Path(sys.executable).with_name("hass")
OWNER = {"name": "Peer Owner", "username": "owner", "password": "peer-owner-pass", "language": "en"}
START_TIMEOUT = 180.0

_CONFIGURATION = """\
homeassistant:
  name: MCP peers
  unit_system: metric
  time_zone: UTC
  internal_url: http://127.0.0.1:{port}
http:
  server_host: 127.0.0.1
  server_port: {port}
frontend:
config:
api:
{extra}
"""


def free_port() -> int:
    """A free TCP port on the loopback interface."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class HaInstance:
    """One running Home Assistant; use `async with HaInstance(...) as ha:`."""

    extra_yaml: str = ""
    # Gateway settings entry options (the peers need the conformance proxy's localhost origin).
    gateway_options: Mapping[str, Any] = field(
        default_factory=lambda: {"allowed_origins": ["http://localhost:*"]}
    )
    keep: bool = False
    # How to run HA; the benchmark runs it with core mcp_server's own pin of the MCP SDK.
    command: tuple[str, ...] = (str(HASS),)
    port: int = field(default_factory=free_port)
    config_dir: Path = field(
        default_factory=lambda: Path(tempfile.mkdtemp(prefix="mcp-gateway-ha-"))
    )
    token: str = ""
    _process: asyncio.subprocess.Process | None = None

    @property
    def url(self) -> str:
        """The base URL of this Home Assistant."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def log_path(self) -> Path:
        """Where HA's own output goes."""
        return self.config_dir / "hass.out"

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def start(self) -> None:
        """Write the configuration, start HA, wait for it, provision the owner and token."""
        custom = self.config_dir / "custom_components"
        custom.mkdir(exist_ok=True)
        link = custom / "mcp_gateway"
        if not link.exists():
            link.symlink_to(REPO / "custom_components" / "mcp_gateway")
        (self.config_dir / "configuration.yaml").write_text(
            _CONFIGURATION.format(port=self.port, extra=self.extra_yaml)
        )
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
        with self.log_path.open("wb") as log:
            self._process = await asyncio.create_subprocess_exec(
                *self.command,
                "-c",
                str(self.config_dir),
                "--skip-pip",
                stdout=log,
                stderr=asyncio.subprocess.STDOUT,
                env=env,
                start_new_session=True,  # so stop() can end HA's whole process group
            )
        try:
            await self._wait_until_up()
            await self._provision()
        except BaseException:
            await self.stop()
            raise

    async def stop(self) -> None:
        """Stop HA (politely, then firmly) and remove the config dir unless kept."""
        process, self._process = self._process, None
        if process is not None and process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, 15)
            try:
                await asyncio.wait_for(process.wait(), 60)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, 9)
                await process.wait()
        if not self.keep:
            shutil.rmtree(self.config_dir, ignore_errors=True)

    async def _wait_until_up(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        async with aiohttp.ClientSession() as session:
            while time.monotonic() < deadline:
                if self._process is not None and self._process.returncode is not None:
                    raise RuntimeError(f"hass exited early; see {self.log_path}")
                with contextlib.suppress(aiohttp.ClientError):
                    async with session.get(f"{self.url}/api/onboarding") as response:
                        if response.status == 200:
                            return
                await asyncio.sleep(0.5)  # polling a process we do not control
        raise TimeoutError(f"Home Assistant did not start in {START_TIMEOUT:.0f} s")

    async def _provision(self) -> None:
        client_id = f"{self.url}/"
        async with aiohttp.ClientSession() as session:
            async with session.post(
                f"{self.url}/api/onboarding/users", json={"client_id": client_id, **OWNER}
            ) as response:
                response.raise_for_status()
                code = (await response.json())["auth_code"]
            async with session.post(
                f"{self.url}/auth/token",
                data={"grant_type": "authorization_code", "code": code, "client_id": client_id},
            ) as response:
                response.raise_for_status()
                access = (await response.json())["access_token"]
            async with session.ws_connect(f"{self.url}/api/websocket") as ws:
                await ws.receive_json()  # auth_required
                await ws.send_json({"type": "auth", "access_token": access})
                if (await ws.receive_json())["type"] != "auth_ok":
                    raise RuntimeError("websocket auth failed")
                await ws.send_json(
                    {
                        "id": 1,
                        "type": "auth/long_lived_access_token",
                        "client_name": "mcp-peers",
                        "lifespan": 1,
                    }
                )
                self.token = (await ws.receive_json())["result"]
            await self._create_gateway_entry(session)

    async def _create_gateway_entry(self, session: aiohttp.ClientSession) -> None:
        headers = {"Authorization": f"Bearer {self.token}"}
        flows = f"{self.url}/api/config/config_entries/flow"
        async with session.post(flows, json={"handler": "mcp_gateway"}, headers=headers) as r:
            r.raise_for_status()
            flow_id = (await r.json())["flow_id"]
        for step in ({"next_step_id": "gateway"}, dict(self.gateway_options)):
            async with session.post(f"{flows}/{flow_id}", json=step, headers=headers) as r:
                r.raise_for_status()
                result = await r.json()
        if result.get("type") != "create_entry":
            raise RuntimeError(f"gateway entry not created: {result}")

    async def api(self, method: str, path: str, **kwargs: Any) -> Any:
        """Call HA's REST API with the owner's token; the JSON answer."""
        headers = {"Authorization": f"Bearer {self.token}"}
        async with (
            aiohttp.ClientSession() as session,
            session.request(method, f"{self.url}{path}", headers=headers, **kwargs) as r,
        ):
            r.raise_for_status()
            return await r.json()
