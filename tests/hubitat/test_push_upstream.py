"""Live updates against the hub as upstream runs it: the loop guard's settings, trips and
notifications, Hub Security, answers parsed by content type, forged calls, an https address
the hub cannot verify, push switched off while the engine is off, events capped before their
filter."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
import ssl
import threading
from typing import Any
from unittest.mock import patch

import aiohttp
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from freezegun.api import FrozenDateTimeFactory
from homeassistant.core import HomeAssistant
from homeassistant.helpers import issue_registry as ir
import pytest
from pytest_homeassistant_custom_component.common import async_fire_time_changed

from custom_components.mcp_gateway.backends.hubitat import push as push_module
from custom_components.mcp_gateway.backends.hubitat.const import CONF_PUSH, CONF_WEBHOOK_ID
from custom_components.mcp_gateway.backends.hubitat.push import (
    ISSUE_LEFTOVER,
    MODE_POLLING,
    MODE_PUSH,
    REASON_CERTIFICATE,
    REASON_LOOP_GUARD,
    REASON_NO_CALLS,
    REASON_NOT_ENABLED,
)
from custom_components.mcp_gateway.backends.hubitat.push_rules import LOCATION_RULE, RULE_PREFIX
from custom_components.mcp_gateway.backends.hubitat.runtime import HubitatRuntime
from custom_components.mcp_gateway.core.const import DOMAIN
from simulators.hubitat.rule_engine import RuleEngine

from .conftest import Sim, SimFactory, entity_id, first, make_entry, poll, setup_entry


def _engine(sim: Sim) -> RuleEngine:
    engine: RuleEngine = sim.tools.engine
    return engine


def _our_rules(sim: Sim) -> list[Any]:
    return [r for r in sim.hub.custom_rules.values() if r.name.startswith(RULE_PREFIX)]


def _issue_key(hass: HomeAssistant, issue_id: str) -> str | None:
    issue = ir.async_get(hass).async_get_issue(DOMAIN, issue_id)
    return issue.translation_key if issue is not None else None


async def _settle(
    hass: HomeAssistant, sim: Sim, freezer: FrozenDateTimeFactory | None = None
) -> None:
    """The hub's requests arrive and the debounced reads finish (a frozen clock: by a tick)."""
    await _engine(sim).drain()
    if freezer is not None:
        for _ in range(3):
            freezer.tick(timedelta(seconds=0.3))
            async_fire_time_changed(hass)
            await asyncio.sleep(0)
    await hass.async_block_till_done(wait_background_tasks=True)


async def _push(hass: HomeAssistant, sim: Sim) -> HubitatRuntime:
    runtime = await setup_entry(hass, make_entry(sim, **{CONF_PUSH: True}))
    assert (runtime.push.mode, runtime.push.reason) == (MODE_PUSH, None)
    return runtime


def _phone(sim: Sim) -> int:
    """A selected device that can notify (the hub's mobile app device)."""
    phone = sim.hub.pair_device("presence", "Owner's phone")
    phone.commands["deviceNotification"] = (("text", "STRING"),)
    return phone.id


async def test_answers_are_json(hass: HomeAssistant, ha_url: str, sim_factory: SimFactory) -> None:
    """The hub parses the answer to its POST by the request's content type (JSON): every call
    is answered with a JSON body and type, so the hub logs no error per call."""
    sim = await sim_factory(custom_rule_engine=True)
    runtime = await _push(hass, sim)
    switch = first(sim, "switch")
    sim.hub.set_attribute(switch.id, "switch", "toggled")
    await _settle(hass, sim)
    assert runtime.push.calls == 1
    assert _engine(sim).requests[-1][3] == 200
    assert _engine(sim).parse_errors == 0
    assert not [log for log in sim.hub.debug_logs if "Error executing HTTP" in log["message"]]
    url = _our_rules(sim)[0].actions[0]["url"]
    async with aiohttp.ClientSession() as session, session.post(url, data="x") as response:
        assert response.content_type == "application/json"
        assert await response.json() == {"ok": True}


async def test_forged_calls_cost_nothing(
    hass: HomeAssistant, ha_url: str, sim_factory: SimFactory
) -> None:
    """A flood of calls without the rules' key (someone learnt the webhook id): no hub read,
    and polling because calls are missing stays so; the hub's own call ends it."""
    sim = await sim_factory(custom_rule_engine=True)
    runtime = await _push(hass, sim)
    push = runtime.push
    push._set_mode(MODE_POLLING, REASON_NO_CALLS)
    url = _our_rules(sim)[0].actions[0]["url"]
    sim.stats.reset()
    bodies = ['{"rule": "1/2"}', '{"rule": "1/2", "key": "guess"}', "{}", "[]", "x" * 5000]
    async with aiohttp.ClientSession() as session:

        async def post(body: str) -> None:
            async with session.post(url, data=body) as response:
                assert response.status == 200

        await asyncio.gather(*(post(bodies[n % len(bodies)]) for n in range(500)))
    await hass.async_block_till_done(wait_background_tasks=True)
    assert sum(sim.stats.tools.values()) == 0
    assert push.reads == 0
    assert push.calls == 0
    assert push.forged == 500
    assert (push.mode, push.reason) == (MODE_POLLING, REASON_NO_CALLS)
    assert push.diagnostics()["forged_calls"] == 500
    sim.hub.set_attribute(first(sim, "switch").id, "switch", "toggled")
    await _settle(hass, sim)
    assert (push.mode, push.reason) == (MODE_PUSH, None)


async def test_a_person_toggling_costs_minutes_not_an_hour(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, ha_url: str, sim_factory: SimFactory
) -> None:
    """Forty toggles of one lamp in ten seconds trip the hub's default loop guard (30 runs in
    60 s): the hub notifies every selected device that can notify; only that rule stops, and
    push is back after ten minutes, not an hour."""
    sim = await sim_factory(custom_rule_engine=True)
    phone = _phone(sim)
    runtime = await _push(hass, sim)
    push = runtime.push
    switch = first(sim, "switch")
    for n in range(40):
        sim.hub.set_attribute(switch.id, "switch", "on" if n % 2 else "off")
        freezer.tick(timedelta(seconds=0.25))
    await _settle(hass, sim, freezer)
    tripped = [rule for rule in _our_rules(sim) if not rule.enabled]
    assert len(tripped) == 1
    assert [device for device, _ in _engine(sim).notifications] == [phone]
    await poll(hass, freezer, 60)
    assert (push.mode, push.reason) == (MODE_POLLING, REASON_LOOP_GUARD)
    await poll(hass, freezer, 300)
    assert push.reason == REASON_LOOP_GUARD  # still within the hub's longest window
    await poll(hass, freezer, 300)
    await poll(hass, freezer, 60)
    assert (push.mode, push.reason) == (MODE_PUSH, None)
    assert all(rule.enabled for rule in _our_rules(sim))
    assert push.diagnostics()["loop_guard_trips"] == {tripped[0].name: 1}


async def test_a_rule_that_keeps_tripping_notifies_ever_more_rarely(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, ha_url: str, sim_factory: SimFactory
) -> None:
    """A device that trips its rule each time it is enabled: the owner's phones hear of it a
    few times a day, not every hour."""
    sim = await sim_factory(custom_rule_engine=True)
    _phone(sim)
    await _push(hass, sim)
    _engine(sim).set_loop_guard(5, 10)
    switch = first(sim, "switch")
    for _ in range(48):  # a day in half hours
        if all(rule.enabled for rule in _our_rules(sim)):
            for n in range(6):
                sim.hub.set_attribute(switch.id, "switch", f"state {n}")
            await _settle(hass, sim, freezer)
        await poll(hass, freezer, 1800)
    trips = len(_engine(sim).notifications)
    assert 3 <= trips <= 8  # re-enabled after 10, 20, 40, 80... minutes; hourly would be 24


async def test_mode_changes_count_in_a_rule_of_their_own(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, ha_url: str, sim_factory: SimFactory
) -> None:
    """Every run counts, mode and HSM too: a burst of mode changes trips only the location
    rule; the devices' rules keep pushing."""
    sim = await sim_factory(custom_rule_engine=True)
    runtime = await _push(hass, sim)
    _engine(sim).set_loop_guard(5, 60)
    for n in range(8):
        sim.hub.set_mode("Away" if n % 2 else "Day")
    await _settle(hass, sim, freezer)
    disabled = [rule.name for rule in _our_rules(sim) if not rule.enabled]
    assert len(disabled) == 1
    assert disabled[0].endswith(LOCATION_RULE)
    switch = first(sim, "switch")
    entity = entity_id(hass, sim, f"{switch.id}_switch", "switch")
    calls = runtime.push.calls
    sim.hub.set_attribute(switch.id, "switch", "on")
    await _settle(hass, sim, freezer)
    assert runtime.push.calls == calls + 1
    assert hass.states.get(entity).state == "on"


async def test_loop_guard_under_hub_security(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, ha_url: str, sim_factory: SimFactory
) -> None:
    """Hub Security keeps the location events (and the loop guard's) from the app: a poll finds
    a change no call announced, then the check finds the disabled rule and push comes back
    once it is enabled again, without reloading the entry."""
    sim = await sim_factory(custom_rule_engine=True, hub_security_blocks=True)
    runtime = await _push(hass, sim)
    push = runtime.push
    _engine(sim).set_loop_guard(5, 60)
    switch = first(sim, "switch")
    for n in range(6):
        sim.hub.set_attribute(switch.id, "switch", f"state {n}")
    await _settle(hass, sim, freezer)
    assert not all(rule.enabled for rule in _our_rules(sim))
    freezer.tick(timedelta(seconds=10))
    sim.hub.set_attribute(switch.id, "switch", "changed unannounced")
    await poll(hass, freezer, 60)
    assert push.reason == REASON_NO_CALLS
    await poll(hass, freezer, 300)  # the check lists the rules
    assert push.reason == REASON_LOOP_GUARD
    for _ in range(3):
        await poll(hass, freezer, 300)
    assert (push.mode, push.reason) == (MODE_PUSH, None)
    assert all(rule.enabled for rule in _our_rules(sim))


async def test_push_off_with_the_engine_off(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, ha_url: str, sim_factory: SimFactory
) -> None:
    """Push off while the engine is off: the hub keeps its rules (and, with the write key,
    refuses to disable them); their calls cost no read, a repair names them, and once the
    engine is on the next check removes them and the webhook."""
    sim = await sim_factory(custom_rule_engine=True)
    runtime = await _push(hass, sim)
    entry = runtime.entry
    _engine(sim).enabled = False
    hass.config_entries.async_update_entry(entry, options={CONF_PUSH: False})
    await hass.async_block_till_done()
    push = entry.runtime_data.push
    assert push.reason == REASON_NOT_ENABLED
    # Read-only mode refuses even disabling them: the write key counts as a change.
    assert all(rule.enabled for rule in _our_rules(sim))
    issue_id = f"{ISSUE_LEFTOVER}_{entry.entry_id}"
    assert _issue_key(hass, issue_id) == ISSUE_LEFTOVER
    # A leftover rule still posts: answered, nothing read.
    rule = _our_rules(sim)[0]
    sim.stats.reset()
    device_ids = rule.triggers[0]["deviceIds"]
    sim.hub.set_attribute(int(device_ids[0]), rule.triggers[0]["attribute"], "poked")
    await _settle(hass, sim, freezer)
    assert _engine(sim).requests[-1][3] == 200
    assert push.calls == 1
    assert push.reads == 0
    assert sum(sim.stats.tools.values()) == 0
    _engine(sim).enabled = True
    await poll(hass, freezer, 300)
    assert _our_rules(sim) == []
    assert _issue_key(hass, issue_id) is None
    assert CONF_WEBHOOK_ID not in entry.data


@pytest.fixture
def self_signed(tmp_path: Path) -> Iterator[str]:
    """An https server with a self-signed certificate (as many HA installs have), in a thread
    of its own: the handshakes it sees fail, and that is not HA's loop's business."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "homeassistant.local")])
    now = datetime.now(UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(days=1))
        .not_valid_after(now + timedelta(days=30))
        .sign(key, hashes.SHA256())
    )
    pem = tmp_path / "cert.pem"
    pem.write_bytes(
        cert.public_bytes(serialization.Encoding.PEM)
        + key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(pem)
    server = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    server.handle_error = lambda *_args: None  # type: ignore[method-assign]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"https://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


async def test_https_with_its_own_certificate(
    hass: HomeAssistant, ha_url: str, sim_factory: SimFactory, self_signed: str
) -> None:
    """HA on https with a certificate the hub cannot verify (and its http_request cannot skip
    the check): found when push is set up; no rules, a repair says what to do."""
    sim = await sim_factory(custom_rule_engine=True)
    with patch.object(push_module, "get_url", return_value=self_signed):
        runtime = await setup_entry(hass, make_entry(sim, **{CONF_PUSH: True}))
    push = runtime.push
    assert (push.mode, push.reason) == (MODE_POLLING, REASON_CERTIFICATE)
    assert _our_rules(sim) == []
    issue = ir.async_get(hass).async_get_issue(DOMAIN, f"hubitat_push_{runtime.entry.entry_id}")
    assert issue is not None
    assert issue.translation_key == "hubitat_push_certificate"
    assert issue.translation_placeholders == {"name": runtime.entry.title, "url": self_signed}


async def test_history_of_a_busy_device(
    hass: HomeAssistant, ha_url: str, sim_factory: SimFactory
) -> None:
    """The hub caps a device's events before filtering them by attribute: the history read
    asks for as many as it gives, so motion behind a hundred other reports is still found."""
    sim = await sim_factory()
    runtime = await setup_entry(hass, make_entry(sim))
    sensor = first(sim, "motion")
    since = datetime.now(UTC) - timedelta(seconds=1)
    motion = "inactive" if sensor.value("motion") == "active" else "active"
    sim.hub.set_attribute(sensor.id, "motion", motion)
    for n in range(150):
        sim.hub.set_attribute(sensor.id, "temperature", 60 + n)
    spec = next(
        spec
        for spec in runtime._derive()
        if spec.device.key == str(sensor.id) and spec.platform == "binary_sensor"
    )
    call = runtime.history_call(spec, since)
    assert call is not None
    result = await runtime.async_call_tool(*call)
    events = runtime.history_events(result)
    assert events is not None
    assert [value for _, value in events] == [motion]
    # Without the limit (the hub's default 100), the same read finds nothing.
    _, args = call
    result = await runtime.async_call_tool(call[0], {k: v for k, v in args.items() if k != "limit"})
    assert runtime.history_events(result) == []


async def test_rule_handlers_run_one_at_a_time(
    hass: HomeAssistant, ha_url: str, sim_factory: SimFactory
) -> None:
    """Simulator: a rule's http_request is synchronous, so a slow answer holds up its next
    events (never two of its requests at once)."""
    sim = await sim_factory(custom_rule_engine=True)
    await _push(hass, sim)
    engine = _engine(sim)
    active = peak = 0
    real_send = engine._send

    async def slow_send(action: dict[str, Any]) -> None:
        nonlocal active, peak
        active += 1
        peak = max(peak, active)
        await asyncio.sleep(0.01)
        await real_send(action)
        active -= 1

    switch = first(sim, "switch")
    with patch.object(engine, "_send", slow_send):
        for n in range(5):
            sim.hub.set_attribute(switch.id, "switch", f"state {n}")
        await _settle(hass, sim)
    assert peak == 1
    assert len([r for r in engine.requests if r[3] == 200]) >= 5
