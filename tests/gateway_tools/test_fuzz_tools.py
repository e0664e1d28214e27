"""Random and mutated arguments for every tool: always a result or a deliberate protocol error.

Hypothesis generates the inputs (synchronously, before the loop runs them); each goes through
GatewayHandler.call_tool. Nothing may raise except the handler's own McpServerError, results
must be well formed, and nothing may be logged at error level.
"""

from __future__ import annotations

import logging
from typing import Any

from homeassistant.core import HomeAssistant
from hypothesis import HealthCheck, given, settings, strategies as st
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry, MockUser

from custom_components.mcp_gateway.gateway.calls import execute as execute_module
from custom_components.mcp_gateway.gateway.handler import GatewayHandler
from custom_components.mcp_gateway.mcp.server import McpServerError, RequestContext

from .conftest import FakeRuntime

GATEWAY = "hubitat_test_hub"
TOOLS = ["search_tools", "get_state", "set_state", "get_history", "list_backends", GATEWAY]

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
    st.sampled_from(
        [
            "switch.kitchen_plug",
            "light.desk_lamp",
            "sensor.hall_thermometer",
            "on",
            "off",
            "2020-13-45T00:00:00",
            "0001-01-01T00:00:00+00:00",
            "9999-12-31T23:59:59+14:00",
            "list_things",
            "reboot_hub",
            "switch_thing",
            "",
        ]
    ),
)
_json = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=12,
)
_keys = st.sampled_from(
    [
        "query",
        "limit",
        "offset",
        "backend",
        "area",
        "domain",
        "name",
        "entity_ids",
        "fields",
        "updates",
        "hours",
        "start",
        "end",
        "tool",
        "args",
        "confirm",
    ]
)
_update = st.dictionaries(
    st.sampled_from(
        ["entity_id", "state", "brightness_pct", "position", "value", "hs_color", "temperature"]
    ),
    _json,
    max_size=4,
)
_arguments = st.one_of(
    st.dictionaries(_keys, _json, max_size=5),
    st.dictionaries(_keys, _json, max_size=3).map(
        lambda d: {**d, "updates": [d.get("updates"), {"entity_id": "light.desk_lamp"}]}
    ),
    st.builds(lambda updates: {"updates": updates}, st.lists(_update, min_size=1, max_size=3)),
    st.builds(lambda tool, args: {"tool": tool, "args": args}, _scalars, _json),
)


def _samples(count: int) -> list[tuple[str, dict[str, Any]]]:
    """Draw inputs with Hypothesis outside the event loop."""
    drawn: list[tuple[str, dict[str, Any]]] = []

    @settings(
        max_examples=count,
        database=None,
        derandomize=True,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(name=st.sampled_from(TOOLS), arguments=_arguments)
    def collect(name: str, arguments: dict[str, Any]) -> None:
        drawn.append((name, arguments))

    collect()
    return drawn


async def test_random_arguments_never_break_a_tool(
    hass: HomeAssistant,
    fake_entry: MockConfigEntry,
    hass_user: MockUser,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Thousands of calls: results are well formed, errors deliberate, the log clean."""
    runtime: FakeRuntime = fake_entry.runtime_data
    runtime.hang.set()
    monkeypatch.setattr(execute_module, "BACKEND_CALL_TIMEOUT", 5)
    handler = GatewayHandler(hass)
    ctx = RequestContext("2025-11-25", "fuzz", hass_user, 1)
    caplog.set_level(logging.ERROR)
    outcomes = {"ok": 0, "error_result": 0, "rpc_error": 0}
    for name, arguments in _samples(2000):
        try:
            result = await handler.call_tool(ctx, name, arguments)
        except McpServerError:
            outcomes["rpc_error"] += 1
            continue
        assert isinstance(result["isError"], bool)
        assert isinstance(result["content"], list)
        outcomes["error_result" if result["isError"] else "ok"] += 1
    await hass.async_block_till_done()
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []
    # The inputs reach both sides: some calls succeed, some are refused as invalid.
    assert outcomes["ok"] > 0
    assert outcomes["error_result"] > 0
