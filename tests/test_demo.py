"""The demo keeps what a user did: across Settings → Restart and across a second scripts/demo,
follows a move to other ports, and says at once when a port it needs is taken."""

from __future__ import annotations

import asyncio
import importlib.metadata
import json
from pathlib import Path
import socket
from typing import Any

import pytest

import bench.gateway
import demo.__main__ as demo_main
from demo.__main__ import (
    RESTART_EXIT_CODE,
    _loaded_titles,
    _repoint,
    _serve_until_stopped,
    busy_port,
    demo_ports,
)
from demo.ha import HomeAssistantError, HomeAssistantProcess, http_settings_stored, port_in_use
from demo.home import DemoHome


def _onboarded(config: Path) -> HomeAssistantProcess:
    ha = HomeAssistantProcess(config_dir=config, port=18999)
    ha.write_configuration()
    storage = config / ".storage"
    (storage / "onboarding").write_text(
        json.dumps({"data": {"done": ["core_config", "analytics", "integration", "user"]}})
    )
    (storage / "core.config_entries").write_text('{"entries": ["kept"]}')
    (config / "home-assistant_v2.db").write_text("history")
    return ha


def test_kept_configuration_keeps_users_entries_and_history(tmp_path: Path) -> None:
    config = tmp_path / "config"
    ha = _onboarded(config)
    assert ha.onboarded
    ha.write_configuration(keep_state=True)
    assert (config / ".storage" / "core.config_entries").read_text() == '{"entries": ["kept"]}'
    assert (config / "home-assistant_v2.db").read_text() == "history"
    assert "user" in (config / ".storage" / "onboarding").read_text()  # not reset
    assert (config / "custom_components" / "mcp_gateway").is_symlink()
    assert _listening_port(config) == 18999


def _listening_port(config: Path) -> int:
    """The port this Home Assistant will listen on, read where it reads it."""
    yaml = (config / "configuration.yaml").read_text()
    if not http_settings_stored():
        assert "server_host: 127.0.0.1" in yaml
        return int(yaml.split("server_port: ")[1].split()[0])
    # HA 2026.x: YAML http would be a trial reverted after five minutes, then ignored.
    assert "\nhttp:" not in yaml
    stored = json.loads((config / ".storage" / "http").read_text())["data"]
    assert stored["pending"] is None
    assert stored["yaml_migration_done"] is True
    assert stored["stable"]["server_host"] == ["127.0.0.1"]
    return int(stored["stable"]["server_port"])


def test_a_kept_configuration_listens_on_the_new_port(tmp_path: Path) -> None:
    config = tmp_path / "config"
    _onboarded(config)
    moved = HomeAssistantProcess(config_dir=config, port=18990)
    moved.write_configuration(keep_state=True)
    assert _listening_port(config) == 18990


def test_fresh_configuration_starts_over(tmp_path: Path) -> None:
    config = tmp_path / "config"
    ha = _onboarded(config)
    ha.write_configuration()
    assert not (config / ".storage" / "core.config_entries").exists()
    assert not (config / "home-assistant_v2.db").exists()
    assert not ha.onboarded


class _Process:
    """Stands in for hass's process: exits with `code` when told to."""

    def __init__(self, code: int | None) -> None:
        self.code = code
        self.done = asyncio.Event()
        if code is not None:
            self.done.set()

    async def wait(self) -> int:
        await self.done.wait()
        assert self.code is not None
        return self.code


class _Ha:
    """The parts of HomeAssistantProcess the demo's wait loop uses."""

    def __init__(self, first_exit: int) -> None:
        self.process: Any = _Process(first_exit)
        self.starts: list[bool] = []
        self.started = asyncio.Event()
        self.base_url = "http://127.0.0.1:18999"
        self.log = Path(".demo/hass.log")

    async def start(self, *, keep_state: bool = False) -> None:
        self.starts.append(keep_state)
        self.process = _Process(None)  # the restarted hass runs until the demo stops
        self.started.set()


async def test_restart_starts_hass_again_with_its_state() -> None:
    ha = _Ha(RESTART_EXIT_CODE)
    stop = asyncio.Event()
    serving = asyncio.create_task(_serve_until_stopped(ha, stop))  # type: ignore[arg-type]
    await ha.started.wait()
    assert ha.starts == [True]
    assert not serving.done()  # the simulators and the demo keep running
    stop.set()
    assert await serving == 0


async def test_hass_ending_on_its_own_ends_the_demo() -> None:
    ha = _Ha(1)
    assert await _serve_until_stopped(ha, asyncio.Event()) == 1  # type: ignore[arg-type]
    assert ha.starts == []


@pytest.fixture
def held_port(socket_enabled: None) -> Any:
    """A loopback port something else listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


def test_demo_ports_follow_the_base_port(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_GATEWAY_DEMO_PORT", "18900")
    assert demo_ports() == (18900, 18901, 18902, 18903)
    monkeypatch.delenv("MCP_GATEWAY_DEMO_PORT")
    assert demo_ports() == (8123, 8124, 8125, 8126)
    for wrong in ("http", "80", "65534"):
        monkeypatch.setenv("MCP_GATEWAY_DEMO_PORT", wrong)
        with pytest.raises(ValueError):
            demo_ports()


def test_a_held_port_is_named_with_what_needed_it(held_port: int) -> None:
    message = busy_port((held_port, held_port + 1, held_port + 2, held_port + 3))
    assert message is not None
    assert message.startswith(f"scripts/demo: port {held_port} (Home Assistant) is in use")
    assert "MCP_GATEWAY_DEMO_PORT" in message
    assert "\n" not in message
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        unused = free.getsockname()[1]  # free once this socket closes, held by nothing else
    message = busy_port((unused, held_port, unused, unused))
    assert message is not None
    assert f"port {held_port} (Hubitat simulator)" in message


def test_a_port_a_stopped_server_left_in_time_wait_is_free(socket_enabled: None) -> None:
    """Restarting the demo at once: the old server's closed connections hold nothing."""
    with socket.socket() as server:
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as asyncio's servers
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        with socket.create_connection(("127.0.0.1", port)) as client:
            accepted, _ = server.accept()
            accepted.close()  # the server closes first: its side waits in TIME_WAIT
            client.recv(1)
    assert port_in_use(port) is False


async def test_hass_is_not_started_on_a_held_port(held_port: int, tmp_path: Path) -> None:
    ha = HomeAssistantProcess(config_dir=tmp_path / "config", port=held_port)
    with pytest.raises(HomeAssistantError, match=f"port {held_port} is already in use"):
        await ha.start(wait_seconds=180)
    assert ha.process is None  # nothing started, nothing waited for


class _Flows:
    """The parts of HomeAssistantProcess that _repoint and _loaded_titles use."""

    def __init__(self, port: int, states: list[str]) -> None:
        self.port = port
        self.base_url = f"http://127.0.0.1:{port}"
        self.log = Path("hass.log")
        self.reconfigured: list[tuple[str, dict[str, Any]]] = []
        self.states = states

    async def reconfigure(
        self, handler: str, entry_id: str, values: dict[str, Any]
    ) -> dict[str, Any]:
        assert handler == "mcp_gateway"
        self.reconfigured.append((entry_id, values))
        return {"type": "abort", "reason": "reconfigure_successful"}

    async def get(self, path: str) -> list[dict[str, Any]]:
        return [{"title": f"entry {n}", "state": s} for n, s in enumerate(self.states)]


HOME = DemoHome(
    hubitat_url="http://127.0.0.1:18911/apps/api/1/mcp?access_token=t",
    homecast_url="http://127.0.0.1:18912/mcp",
    homecast_token="hc",
    robine_url="http://127.0.0.1:18913/mcp",
    robine_password="pw",
)


async def test_a_move_repoints_every_entry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(demo_main, "DEMO_DIR", tmp_path)
    (tmp_path / "mcp_url").write_text("http://127.0.0.1:8123/api/mcp_gateway\n")
    kinds = {"a": "hubitat", "b": "homecast", "c": "robine_wake"}
    (tmp_path / "entries.json").write_text(json.dumps(kinds))
    ha = _Flows(18910, [])
    await _repoint(ha, HOME)  # type: ignore[arg-type]
    assert ha.reconfigured == [
        ("a", {"url": HOME.hubitat_url}),
        ("b", {"url": HOME.homecast_url}),
        ("c", {"url": HOME.robine_url}),
    ]
    assert (tmp_path / "mcp_url").read_text() == "http://127.0.0.1:18910/api/mcp_gateway\n"
    ha.reconfigured.clear()
    await _repoint(ha, HOME)  # type: ignore[arg-type]
    assert ha.reconfigured == []  # the same ports again: nothing to do


async def test_ready_waits_for_the_entries_and_names_those_that_do_not_load(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(demo_main, "LOAD_SECONDS", 1)
    assert await _loaded_titles(_Flows(1, ["loaded", "loaded"])) == ["entry 0", "entry 1"]  # type: ignore[arg-type]
    with pytest.raises(HomeAssistantError, match=r"entry 1 \(setup_retry\)"):
        await _loaded_titles(_Flows(1, ["loaded", "setup_retry"]))  # type: ignore[arg-type]


@pytest.mark.parametrize("same_sdk", [True, False])
def test_home_assistant_runs_with_its_own_mcp_pin(
    monkeypatch: pytest.MonkeyPatch, same_sdk: bool
) -> None:
    """HA's own mcp_server is written against its manifest's exact MCP SDK: where this venv
    has another (the test peer on HA 2025.4), HA runs from the venv that holds core's pins."""
    manifest = json.loads(
        (bench.gateway.HA_COMPONENTS / "mcp_server" / "manifest.json").read_text()
    )
    (pin,) = [r for r in manifest["requirements"] if r.startswith("mcp==")]
    real_version = importlib.metadata.version

    def version(name: str) -> str:
        if name == "mcp":
            return pin.removeprefix("mcp==") if same_sdk else "0.0.1"
        return real_version(name)

    monkeypatch.setattr(importlib.metadata, "version", version)
    monkeypatch.setattr(bench.gateway, "core_venv_python", lambda: "/core-pins/bin/python")
    command = demo_main.ha_command()
    if same_sdk:
        assert command == (str(demo_main.HASS),)
    else:
        assert command == ("/core-pins/bin/python", "-P", "-m", "homeassistant")


def test_kept_configuration_keeps_saved_automations(tmp_path: Path) -> None:
    """Automations saved while the demo ran (an assistant's, approved) survive a kept restart;
    a fresh configuration starts with the caller's."""
    config = tmp_path / "config"
    ha = HomeAssistantProcess(config_dir=config, port=18999, automations=[])
    ha.write_configuration()
    automations = config / "automations.yaml"
    assert json.loads(automations.read_text()) == []
    automations.write_text("- id: ai_0123456789ab\n  alias: Saved\n")
    ha.write_configuration(keep_state=True)
    assert "alias: Saved" in automations.read_text()
    assert "automation: !include automations.yaml" in (config / "configuration.yaml").read_text()
    ha.write_configuration()
    assert json.loads(automations.read_text()) == []
