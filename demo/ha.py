"""A real Home Assistant process on loopback, driven the way a user's browser drives it.

Starts `hass -c <dir> --skip-pip` (in a given or a throw-away configuration directory), onboards
an owner through the REST onboarding API, obtains tokens, and runs websocket commands and config
flows through the same APIs the frontend uses. Nothing here reaches into Home Assistant's
internals. Used by the demo, the peer checks (tests/peers) and the benchmark (bench/gateway.py).

    async with HomeAssistantProcess(gateway_options={...}) as ha:   # started and onboarded
        await ha.api("GET", "/api/states")
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
import contextlib
from dataclasses import dataclass, field
from datetime import UTC, datetime
import importlib.util
import json
import os
from pathlib import Path
import shutil
import signal
import socket
import sys
import tempfile
from typing import Any, Self

import aiohttp

REPO = Path(__file__).resolve().parent.parent
INTEGRATION = REPO / "custom_components" / "mcp_gateway"
HASS = Path(sys.executable).with_name("hass")

# Only what every user needs: default_config pulls integrations whose packages are absent here.
# Callers add their own integrations through `extra_yaml`.
BASE_CONFIGURATION = """\
homeassistant:
  name: {name}
  time_zone: Europe/Berlin
  country: DE
  unit_system: metric
  currency: EUR
  latitude: 52.52
  longitude: 13.40
  elevation: 34
  external_url: "{base_url}"
  internal_url: "{base_url}"
{http}frontend:
config:
api:
{extra}
"""


# Where HA 2025 reads its listening address from.
HTTP_YAML = """\
http:
  server_host: 127.0.0.1
  server_port: {port}
"""


def http_settings_stored() -> bool:
    """Whether this HA keeps its HTTP settings in storage (2026.x).

    It migrates YAML once, as a trial that reverts (restarting HA on port 8123) unless the user
    confirms it within five minutes, and ignores YAML after. There the settings are stored as
    confirmed ones on every start, so a demo moved to another port follows it. Looked up
    without importing Home Assistant.
    """
    spec = importlib.util.find_spec("homeassistant")
    if spec is None or spec.origin is None:
        return False
    return (Path(spec.origin).parent / "components" / "http" / "config.py").exists()


class HomeAssistantError(RuntimeError):
    """Home Assistant did not do what we asked."""


def port_in_use(port: int) -> bool:
    """Whether something already listens on the loopback port (or it cannot be bound)."""
    with socket.socket() as sock:
        # As the servers bind (asyncio's default): connections of a demo just stopped, left in
        # TIME_WAIT, do not hold the port.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


def free_port() -> int:
    """A free TCP port on the loopback interface."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def wait_for_port(port: int, *, seconds: float, pause: float) -> None:
    """Until something accepts connections on the loopback port, at most `seconds`.

    For a process we started and do not control (a simulator); gives up quietly, so the
    caller's first request reports what went wrong.
    """
    for _ in range(max(1, round(seconds / pause))):
        with contextlib.suppress(OSError):
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.close()
            return
        await asyncio.sleep(pause)


@dataclass
class HomeAssistantProcess:
    """A `hass` process and the owner's credentials once onboarded.

    `async with` starts, onboards and (when `gateway_options` is set) adds the gateway settings
    entry, and stops it again; `start()`, `onboard()` and `stop()` do the steps one by one.
    Without `config_dir` a temporary directory is used and removed on stop unless `keep`.
    """

    config_dir: Path | None = None
    port: int = field(default_factory=free_port)
    name: str = "MCP Gateway"
    owner_name: str = "Owner"
    username: str = "demo"
    password: str = "demo-password"
    # Written to automations.yaml and included when not None.
    automations: list[dict[str, Any]] | None = None
    extra_yaml: str = ""
    # How to run HA; the benchmark runs it from a venv with core mcp_server's own MCP SDK pin.
    command: Sequence[str] = (str(HASS),)
    # Options of the gateway settings entry created on `async with`; None: no entry.
    gateway_options: Mapping[str, Any] | None = None
    keep: bool = False
    # More custom integrations to link in beside ours (domain -> folder): the bench relay.
    extra_components: Mapping[str, Path] = field(default_factory=dict)
    log_path: Path | None = None
    # Lifespan (days) of the long-lived token onboarding creates.
    token_lifespan: int = 365
    process: asyncio.subprocess.Process | None = None
    access_token: str | None = None
    long_lived_token: str | None = None
    _temporary: bool = field(default=False, repr=False)

    def __post_init__(self) -> None:
        if self.config_dir is None:
            self.config_dir = Path(tempfile.mkdtemp(prefix="mcp-gateway-ha-"))
            self._temporary = True
        if self.log_path is None:
            self.log_path = self.config_dir / "hass.log"

    @property
    def directory(self) -> Path:
        """The configuration directory (always set after construction)."""
        assert self.config_dir is not None
        return self.config_dir

    @property
    def log(self) -> Path:
        """Where HA's own output goes."""
        assert self.log_path is not None
        return self.log_path

    @property
    def base_url(self) -> str:
        """Where Home Assistant listens."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def client_id(self) -> str:
        """The OAuth client id we log in as (HA's own frontend uses its base URL)."""
        return f"{self.base_url}/"

    @property
    def token(self) -> str:
        """The owner's long-lived token (for MCP clients and the APIs)."""
        if not self.long_lived_token:
            raise HomeAssistantError("not onboarded yet")
        return self.long_lived_token

    @property
    def headers(self) -> dict[str, str]:
        """Authorization headers of the owner."""
        return {"Authorization": f"Bearer {self.access_token or self.long_lived_token}"}

    async def __aenter__(self) -> Self:
        await self.start()
        try:
            await self.onboard()
            if self.gateway_options is not None:
                await self.add_gateway_entry(self.gateway_options)
        except BaseException:
            await self.stop()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    @property
    def onboarded(self) -> bool:
        """Whether the configuration directory holds an owner from an earlier run."""
        try:
            done = json.loads((self.directory / ".storage" / "onboarding").read_text())
        except (OSError, ValueError):
            return False
        return "user" in done.get("data", {}).get("done", [])

    def write_configuration(self, *, keep_state: bool = False) -> None:
        """A configuration directory with our integration linked in: a fresh one, or with
        `keep_state` the earlier run's users, entries and history kept (configuration.yaml
        and the links are written anew)."""
        config_dir = self.directory
        if not keep_state and not self._temporary and config_dir.exists():
            shutil.rmtree(config_dir)
        (config_dir / "custom_components").mkdir(parents=True, exist_ok=True)
        links = {"mcp_gateway": INTEGRATION} | {
            domain: folder.resolve() for domain, folder in self.extra_components.items()
        }
        for domain, target in links.items():
            link = config_dir / "custom_components" / domain
            if link.is_symlink() or link.exists():
                link.unlink()
            link.symlink_to(target)
        extra = self.extra_yaml
        if self.automations is not None:
            automations = config_dir / "automations.yaml"
            # A kept run keeps the automations saved since (Settings → Automations, or an
            # assistant's, approved). JSON is valid YAML, and it keeps the automations exactly
            # as the caller wrote them.
            if not (keep_state and automations.exists()):
                automations.write_text(json.dumps(self.automations, indent=2))
            extra = f"automation: !include automations.yaml\n{extra}"
        stored_http = http_settings_stored()
        (config_dir / "configuration.yaml").write_text(
            BASE_CONFIGURATION.format(
                name=self.name,
                base_url=self.base_url,
                http="" if stored_http else HTTP_YAML.format(port=self.port),
                extra=extra,
            )
        )
        if stored_http:
            self._write_http_store()
        if keep_state and self.onboarded:
            return
        # Mark every onboarding step but the owner's as done: the location, analytics and
        # integration steps would add default integrations (weather, radio, TTS) whose
        # packages a --skip-pip install does not have.
        storage = config_dir / ".storage"
        storage.mkdir(exist_ok=True)
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

    def _write_http_store(self) -> None:
        """HA 2026.x's stored HTTP settings: loopback and our port, confirmed."""
        settings = {
            "server_host": ["127.0.0.1"],
            "server_port": self.port,
            "cors_allowed_origins": ["https://cast.home-assistant.io"],
            "login_attempts_threshold": -1,
            "ip_ban_enabled": True,
            "ssl_profile": "modern",
            "use_x_frame_options": True,
            "created_at": datetime.now(UTC).isoformat(),
            "error": None,
            "error_message": None,
        }
        storage = self.directory / ".storage"
        storage.mkdir(exist_ok=True)
        (storage / "http").write_text(
            json.dumps(
                {
                    "version": 2,
                    "minor_version": 2,
                    "key": "http",
                    "data": {"stable": settings, "pending": None, "yaml_migration_done": True},
                },
                indent=2,
            )
        )

    async def start(self, wait_seconds: float = 180.0, *, keep_state: bool = False) -> None:
        """Write the configuration, start `hass` and wait until its HTTP API answers.

        With `keep_state`, what an earlier run of this configuration directory stored (users,
        entries, history) is kept: a restart, or the demo run again.
        """
        if port_in_use(self.port):
            # hass would fall back to its default port or wait in recovery mode: say it now.
            raise HomeAssistantError(f"port {self.port} is already in use")
        self.write_configuration(keep_state=keep_state)
        self.log.parent.mkdir(parents=True, exist_ok=True)
        # A kept configuration's log goes on (a restart's reason stays readable).
        with self.log.open("ab" if keep_state else "wb") as log:
            self.process = await asyncio.create_subprocess_exec(
                *self.command,
                "-c",
                str(self.directory),
                "--skip-pip",
                stdout=log,
                stderr=asyncio.subprocess.STDOUT,
                env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
                # Its own process group, so Ctrl-C in the terminal reaches our process, which
                # then stops Home Assistant's whole group in order (no orphan left behind).
                start_new_session=True,
            )
        try:
            await self._wait_until_up(wait_seconds)
        except BaseException:
            await self.stop()
            raise

    async def _wait_until_up(self, wait_seconds: float) -> None:
        onboarded = self.onboarded
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait_seconds
        async with aiohttp.ClientSession() as session:
            while loop.time() < deadline:
                if self.process is not None and self.process.returncode is not None:
                    raise HomeAssistantError(
                        f"hass exited with {self.process.returncode}; see {self.log}"
                    )
                with contextlib.suppress(aiohttp.ClientError):
                    async with session.get(f"{self.base_url}/api/onboarding") as response:
                        # HA serves HTTP once started; onboarding's API is gone once done.
                        if response.status == 200 or (response.status == 404 and onboarded):
                            return
                await asyncio.sleep(0.5)  # polling a process we do not control
        raise HomeAssistantError(f"Home Assistant did not start within {wait_seconds:.0f} s")

    async def stop(self, grace_seconds: float = 60.0) -> None:
        """Stop `hass` (politely, then firmly); remove a temporary config dir unless kept."""
        process, self.process = self.process, None
        if process is not None and process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
            try:
                await asyncio.wait_for(process.wait(), grace_seconds)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                await process.wait()
        if self._temporary and not self.keep:
            shutil.rmtree(self.directory, ignore_errors=True)

    async def onboard(self) -> None:
        """Create the owner and finish onboarding, as the first-run wizard does."""
        async with aiohttp.ClientSession() as session:
            code = await _json(
                session.post(
                    f"{self.base_url}/api/onboarding/users",
                    json={
                        "client_id": self.client_id,
                        "name": self.owner_name,
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
            {
                "type": "auth/long_lived_access_token",
                "client_name": "MCP client",
                "lifespan": self.token_lifespan,
            }
        )

    async def websocket_commands(self, *commands: Mapping[str, Any]) -> list[Any]:
        """Run websocket commands as the owner, in order on one connection; their results."""
        results: list[Any] = []
        async with (
            aiohttp.ClientSession() as session,
            session.ws_connect(f"{self.base_url}/api/websocket") as ws,
        ):
            await ws.receive_json()  # auth_required
            token = self.access_token or self.long_lived_token
            await ws.send_json({"type": "auth", "access_token": token})
            answer = await ws.receive_json()
            if answer.get("type") != "auth_ok":
                raise HomeAssistantError(f"websocket auth failed: {answer.get('type')}")
            for number, command in enumerate(commands, 1):
                await ws.send_json({"id": number, **command})
                result = await ws.receive_json()
                if not result.get("success"):
                    raise HomeAssistantError(f"{command['type']} failed: {result.get('error')}")
                results.append(result.get("result"))
        return results

    async def websocket_command(self, command: Mapping[str, Any]) -> Any:
        """Run one websocket command as the owner and return its result."""
        (result,) = await self.websocket_commands(command)
        return result

    async def config_flow_steps(self, handler: str, *steps: Mapping[str, Any]) -> dict[str, Any]:
        """Start a config flow and answer its steps with exactly `steps`; the created entry."""
        flows = "/api/config/config_entries/flow"
        result = await self.api("POST", flows, json={"handler": handler})
        for step in steps:
            result = await self.api("POST", f"{flows}/{result['flow_id']}", json=dict(step))
        if result.get("type") != "create_entry":
            raise HomeAssistantError(f"{handler} flow did not finish: {result}")
        return dict(result)

    async def config_flow(
        self, handler: str, menu_choice: str, values: Mapping[str, Any]
    ) -> dict[str, Any]:
        """Run a config flow through the REST API the frontend uses, as a user would.

        Picks `menu_choice` in the first menu, then fills each form from `values` (a
        multi-select takes every option, as a user adding all homes would); returns the
        created entry.
        """
        return await self._run_flow({"handler": handler}, menu_choice, values, "create_entry")

    async def reconfigure(
        self, handler: str, entry_id: str, values: Mapping[str, Any]
    ) -> dict[str, Any]:
        """Reconfigure an entry as a user does from its menu, answering its forms from
        `values`; the flow's final result (an abort with reason reconfigure_successful)."""
        return await self._run_flow(
            {"handler": handler, "entry_id": entry_id}, "", values, "reconfigure_successful"
        )

    async def _run_flow(
        self, start: Mapping[str, Any], menu_choice: str, values: Mapping[str, Any], done: str
    ) -> dict[str, Any]:
        """Start a flow, answer its menus and forms; its result once of type or reason `done`."""
        handler = start["handler"]
        flows = "/api/config/config_entries/flow"
        result = await self.api("POST", flows, json={**start, "show_advanced_options": False})
        for _ in range(10):  # no flow of ours has more steps; a loop here is a bug
            kind = result.get("type")
            if done in (kind, result.get("reason")):
                return dict(result)
            if kind == "menu":
                answer: dict[str, Any] = {"next_step_id": menu_choice}
            elif kind == "form":
                if result.get("errors"):
                    raise HomeAssistantError(f"{handler} flow: {result['errors']}")
                answer = _fill_form(result.get("data_schema", []), values)
            else:
                raise HomeAssistantError(f"{handler} flow ended with {result}")
            result = await self.api("POST", f"{flows}/{result['flow_id']}", json=answer)
        raise HomeAssistantError(f"{handler} flow did not finish: {result}")

    async def add_gateway_entry(self, options: Mapping[str, Any]) -> dict[str, Any]:
        """Create the gateway's settings entry with exactly these options."""
        return await self.config_flow_steps(
            "mcp_gateway", {"next_step_id": "gateway"}, dict(options)
        )

    async def api(self, method: str, path: str, **kwargs: Any) -> Any:
        """Call the REST API as the owner; the JSON answer (None when empty)."""
        async with aiohttp.ClientSession(headers=self.headers) as session:
            return await _json(session.request(method, f"{self.base_url}{path}", **kwargs))

    async def get(self, path: str) -> Any:
        """GET a REST API path as the owner."""
        return await self.api("GET", path)


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
