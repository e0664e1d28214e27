"""The simulated hub's legacy custom rule engine against upstream's behaviour.

Upstream: hubitat-mcp-server.groovy (enableCustomRuleEngine default OFF, the custom-engine gate,
validateTrigger / validateAction), libraries/mcp-custom-rules-lib.groovy (the tools) and
hubitat-mcp-rule.groovy (subscriptions, the loop guard, the http_request action).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
import json
from typing import Any

from aiohttp import web
from aiohttp.test_utils import TestServer
import pytest

from simulators.hubitat import TOOLS
from simulators.hubitat.rule_engine import RuleEngine

from .test_hubitat import KEY, Sim, make_sim as make_sim

pytestmark = pytest.mark.usefixtures("socket_enabled")

ServerFactory = Callable[[web.Application], Awaitable[TestServer]]


@pytest.fixture
async def receiver(aiohttp_server: ServerFactory) -> tuple[TestServer, list[dict[str, Any]]]:
    """An HTTP endpoint the rules post to: what it received, in order."""
    received: list[dict[str, Any]] = []

    async def handle(request: web.Request) -> web.Response:
        received.append({"body": await request.text(), "type": request.headers.get("Content-Type")})
        return web.Response(status=200)

    app = web.Application()
    app.router.add_post("/hook", handle)
    return await aiohttp_server(app), received


def _engine(sim: Sim) -> RuleEngine:
    engine: RuleEngine = sim.client.server.app[TOOLS].engine
    return engine


def _switch(sim: Sim) -> int:
    return sim.hub.find(kind="switch")[0].id


def _rule(url: str, device_id: int, **extra: Any) -> dict[str, Any]:
    return {
        "name": "Push",
        "triggers": [
            {"type": "device_event", "deviceIds": [str(device_id)], "attribute": "switch"}
        ],
        "actions": [
            {
                "type": "http_request",
                "url": url,
                "method": "POST",
                "contentType": "application/json",
                "body": '{"from": "hub"}',
            }
        ],
        **extra,
        **KEY,
    }


async def test_engine_is_off_by_default(make_sim: Callable[..., Awaitable[Sim]]) -> None:
    """Off: read-only mode; creating is refused with upstream's message, reads still work."""
    sim = await make_sim()
    info = await sim.call("hub_get_info")
    assert info["customRuleEngineEnabled"] is False
    error = await sim.error("hub_create_custom_rule", _rule("http://127.0.0.1/x", _switch(sim)))
    assert error["code"] == -32602
    assert "not available in read-only mode" in error["message"]
    assert (await sim.call("hub_get_custom_rule"))["count"] == 1
    # The Read master off too: every custom rule tool is refused.
    _engine(sim).read_enabled = False
    error = await sim.error("hub_get_custom_rule")
    assert "'Enable Custom Rule Engine' is OFF and the Read master is OFF" in error["message"]


async def test_create_validates_like_upstream(make_sim: Callable[..., Awaitable[Sim]]) -> None:
    """validateTrigger / validateAction messages, nothing created on a refusal."""
    sim = await make_sim(custom_rule_engine=True)
    device = _switch(sim)
    good = _rule("http://127.0.0.1/x", device)
    cases: list[tuple[dict[str, Any], str]] = [
        ({**good, "triggers": []}, "At least one trigger is required"),
        ({**good, "actions": []}, "At least one action is required"),
        ({**good, "triggers": [{"type": "nope"}]}, "Unknown trigger type: nope"),
        (
            {
                **good,
                "triggers": [{"type": "device_event", "deviceIds": ["99999"], "attribute": "x"}],
            },
            "Device not found: 99999",
        ),
        (
            {**good, "triggers": [{"type": "device_event", "deviceIds": [str(device)]}]},
            "device_event trigger requires attribute",
        ),
        (
            {**good, "actions": [{"type": "http_request", "url": "ftp://x", "method": "POST"}]},
            "http_request: url must start with http:// or https://",
        ),
        (
            {**good, "actions": [{"type": "http_request", "url": "http://x", "method": "POST"}]},
            "http_request: body is required for POST requests",
        ),
        (
            {**good, "actions": [{"type": "http_request", "url": "http://x", "method": "PUT"}]},
            "http_request: method must be GET or POST",
        ),
    ]
    for args, message in cases:
        error = await sim.error("hub_create_custom_rule", args)
        assert error["code"] == -32602
        assert error["message"] == message
    assert (await sim.call("hub_get_custom_rule"))["count"] == 1


async def test_rule_posts_on_device_events(
    make_sim: Callable[..., Awaitable[Sim]],
    receiver: tuple[TestServer, list[dict[str, Any]]],
) -> None:
    """A device_event trigger runs the http_request action: a real POST of the static body."""
    server, received = receiver
    sim = await make_sim(custom_rule_engine=True)
    device = _switch(sim)
    created = await sim.call(
        "hub_create_custom_rule", _rule(str(server.make_url("/hook")), device, testRule=True)
    )
    assert created["success"] is True
    current = sim.hub.devices[device].value("switch")
    sim.hub.set_attribute(device, "switch", "off" if current == "on" else "on")
    sim.hub.set_attribute(device, "level", 40)  # not subscribed
    await _engine(sim).drain()
    assert received == [{"body": '{"from": "hub"}', "type": "application/json"}]
    rule = await sim.call("hub_get_custom_rule", {"ruleId": created["ruleId"]})
    assert rule["executionCount"] == 1
    assert rule["source"] == "mcp_custom_engine"
    # toolUpdateRule changes the description when given one (updateData.description).
    await sim.call(
        "hub_update_custom_rule",
        {"ruleId": created["ruleId"], "description": "reworded", **KEY},
    )
    rule = await sim.call("hub_get_custom_rule", {"ruleId": created["ruleId"]})
    assert rule["description"] == "reworded"
    # Disabled: no more posts. Deleting needs confirm; a test rule leaves no backup file.
    await sim.call("hub_update_custom_rule", {"ruleId": created["ruleId"], "enabled": False, **KEY})
    sim.hub.set_attribute(device, "switch", current)
    await _engine(sim).drain()
    assert len(received) == 1
    error = await sim.error("hub_delete_custom_rule", {"ruleId": created["ruleId"], **KEY})
    assert error["message"].startswith("SAFETY CHECK FAILED")
    files = dict(sim.hub.files)
    deleted = await sim.call(
        "hub_delete_custom_rule", {"ruleId": created["ruleId"], "confirm": True, **KEY}
    )
    assert deleted["message"].endswith("(No backup - test rule)")
    assert sim.hub.files == files


async def test_loop_guard_disables_a_busy_rule(
    make_sim: Callable[..., Awaitable[Sim]],
    receiver: tuple[TestServer, list[dict[str, Any]]],
) -> None:
    """30 runs within 60 s: the 31st event disables the rule and sends mcpLoopGuard."""
    server, received = receiver
    sim = await make_sim(custom_rule_engine=True)
    device = _switch(sim)
    created = await sim.call("hub_create_custom_rule", _rule(str(server.make_url("/hook")), device))
    for n in range(31):
        assert sim.hub.set_attribute(device, "switch", f"value {n}") is not None
    await _engine(sim).drain()
    assert len(received) == 30
    rule = await sim.call("hub_get_custom_rule", {"ruleId": created["ruleId"]})
    assert rule["enabled"] is False
    guard = sim.hub.location_events[-1]
    assert (guard.name, guard.value) == ("mcpLoopGuard", "Push")
    events = await sim.call("hub_list_device_events", {"limit": 5})
    assert any(event["name"] == "mcpLoopGuard" for event in events["events"])


async def test_unreachable_target_is_only_logged(
    make_sim: Callable[..., Awaitable[Sim]],
    receiver: tuple[TestServer, list[dict[str, Any]]],
) -> None:
    """executeAction catches the HTTP failure and logs it; the rule stays enabled."""
    server, received = receiver
    sim = await make_sim(custom_rule_engine=True)
    device = _switch(sim)
    created = await sim.call("hub_create_custom_rule", _rule(str(server.make_url("/hook")), device))
    _engine(sim).reachable = False
    sim.hub.set_attribute(device, "switch", "toggled")
    await _engine(sim).drain()
    await asyncio.sleep(0)
    assert received == []
    assert _engine(sim).request_failures == 1
    rule = await sim.call("hub_get_custom_rule", {"ruleId": created["ruleId"]})
    assert rule["enabled"] is True
    assert json.dumps(sim.hub.debug_logs[-1]).count("Error executing HTTP POST") == 1
