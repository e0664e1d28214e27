"""The demo keeps what a user did: across Settings → Restart and across a second scripts/demo."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from demo.__main__ import RESTART_EXIT_CODE, _serve_until_stopped
from demo.ha import HomeAssistantProcess


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
    assert "18999" in (config / "configuration.yaml").read_text()


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
