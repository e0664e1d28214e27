"""Writes: coalesced batches, the two-writes cap, per-caller results and the key gate."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from unittest.mock import patch

from homeassistant.components.light import DOMAIN as LIGHT_DOMAIN
from homeassistant.components.switch import DOMAIN as SWITCH_DOMAIN
from homeassistant.const import ATTR_ENTITY_ID, SERVICE_TURN_OFF, SERVICE_TURN_ON
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers import issue_registry as ir
import pytest

from custom_components.mcp_gateway.backends.hubitat.api import (
    Command,
    CommandOutcome,
    HubitatKeyRefusedError,
)
from custom_components.mcp_gateway.backends.hubitat.coalescer import WriteCoalescer
from custom_components.mcp_gateway.backends.hubitat.const import CONF_SEND_KEY, ISSUE_KEY_REFUSED
from custom_components.mcp_gateway.core.const import DOMAIN
from custom_components.mcp_gateway.mcp.errors import (
    McpConnectionError,
    McpRpcError,
    McpToolError,
)

from .conftest import Sim, SimFactory, entity_id, first, make_entry, setup_entry


async def _lights(hass: HomeAssistant, sim: Sim, count: int) -> list[tuple[object, str]]:
    """Pair `count` dimmers on the hub before HA loads it; their sim devices and entity ids."""
    devices = [sim.hub.pair_device("dimmer", f"Area Dimmer {n}", "Den") for n in range(count)]
    for device in devices:
        sim.hub.set_attribute(device.id, "switch", "off")
    await setup_entry(hass, make_entry(sim))
    return [(d, entity_id(hass, sim, f"{d.id}_light", "light")) for d in devices]


async def test_area_of_20_lights_is_one_call(hass: HomeAssistant, sim: Sim) -> None:
    """Turning on 20 Hubitat lights at once is one batched hub_call_device_command."""
    lights = await _lights(hass, sim, 20)
    sim.stats.reset()
    await hass.services.async_call(
        LIGHT_DOMAIN,
        SERVICE_TURN_ON,
        {ATTR_ENTITY_ID: [entity for _, entity in lights]},
        blocking=True,
    )
    assert dict(sim.stats.tools) == {"hub_manage_devices": 1}
    assert all(device.value("switch") == "on" for device, _ in lights)
    assert all(hass.states.get(entity).state == "on" for _, entity in lights)


async def test_never_more_than_two_writes_in_flight(hass: HomeAssistant, sim: Sim) -> None:
    """While two writes are open on the hub, later actions wait and then leave as one batch."""
    lights = await _lights(hass, sim, 6)
    entities = [entity for _, entity in lights]
    sim.hub.write_hold = asyncio.Event()
    sim.stats.reset()

    def turn_on(entity: str) -> asyncio.Task[None]:
        return hass.async_create_task(
            hass.services.async_call(
                LIGHT_DOMAIN, SERVICE_TURN_ON, {ATTR_ENTITY_ID: entity}, blocking=True
            )
        )

    first_call = turn_on(entities[0])
    await sim.hub.wait_writes_in_flight(1)
    second_call = turn_on(entities[1])
    await sim.hub.wait_writes_in_flight(2)
    queued = [turn_on(entity) for entity in entities[2:]]
    runtime = hass.config_entries.async_entries(DOMAIN)[0].runtime_data
    # Let the queued actions reach the coalescer; both write slots are still taken.
    for _ in range(10):
        await asyncio.sleep(0)
    assert runtime.coalescer.in_flight == 2
    assert sim.hub.writes_in_flight == 2

    sim.hub.write_hold.set()
    await asyncio.gather(first_call, second_call, *queued)
    assert sim.stats.tools["hub_manage_devices"] == 3
    assert runtime.coalescer.stats.max_in_flight == 2
    assert runtime.coalescer.stats.max_batch == 4
    assert all(device.value("switch") == "on" for device, _ in lights)


async def test_failed_entry_fails_only_its_caller(hass: HomeAssistant, sim: Sim) -> None:
    """One broken device in a batch: its action fails, the others' succeed."""
    lights = await _lights(hass, sim, 3)
    broken, broken_entity = lights[1]
    sim.hub.break_device(broken.id)  # type: ignore[attr-defined]
    results = await asyncio.gather(
        *(
            hass.services.async_call(
                LIGHT_DOMAIN, SERVICE_TURN_ON, {ATTR_ENTITY_ID: entity}, blocking=True
            )
            for _, entity in lights
        ),
        return_exceptions=True,
    )
    assert isinstance(results[1], HomeAssistantError)
    assert results[0] is None
    assert results[2] is None
    assert lights[0][0].value("switch") == "on"  # type: ignore[attr-defined]
    assert broken.value("switch") == "off"  # type: ignore[attr-defined]
    assert hass.states.get(broken_entity).state == "off"


async def test_key_gate_refusal_raises_a_repair_issue(
    hass: HomeAssistant, sim_factory: SimFactory
) -> None:
    """The hub wants the key and the entry does not send it: the action fails, a repair issue
    tells the user; once writes pass again the issue goes away."""
    sim = await sim_factory()
    entry = make_entry(sim, **{CONF_SEND_KEY: False})
    await setup_entry(hass, entry)
    plug = first(sim, "switch")
    switch = entity_id(hass, sim, f"{plug.id}_switch", "switch")
    with pytest.raises(HomeAssistantError):
        await hass.services.async_call(
            SWITCH_DOMAIN, SERVICE_TURN_ON, {ATTR_ENTITY_ID: switch}, blocking=True
        )
    issue_id = f"{ISSUE_KEY_REFUSED}_{entry.entry_id}"
    issue = ir.async_get(hass).async_get_issue(DOMAIN, issue_id)
    assert issue is not None
    assert issue.translation_placeholders == {"name": "Home Hub", "sending": "off"}

    hass.config_entries.async_update_entry(entry, options={CONF_SEND_KEY: True})
    await hass.async_block_till_done()
    await hass.services.async_call(
        SWITCH_DOMAIN, SERVICE_TURN_ON, {ATTR_ENTITY_ID: switch}, blocking=True
    )
    assert plug.value("switch") == "on"
    assert ir.async_get(hass).async_get_issue(DOMAIN, issue_id) is None


async def test_changed_key_is_reported(hass: HomeAssistant, sim: Sim) -> None:
    """The hub's key changed under us: our key is refused, which the repair issue reports."""
    entry = make_entry(sim)
    await setup_entry(hass, entry)
    plug = first(sim, "switch")
    switch = entity_id(hass, sim, f"{plug.id}_switch", "switch")
    with (
        patch("simulators.hubitat.tools.BEST_PRACTICE_KEY", "bps-ack-300"),
        pytest.raises(HomeAssistantError),
    ):
        await hass.services.async_call(
            SWITCH_DOMAIN, SERVICE_TURN_OFF, {ATTR_ENTITY_ID: switch}, blocking=True
        )
    issue = ir.async_get(hass).async_get_issue(DOMAIN, f"{ISSUE_KEY_REFUSED}_{entry.entry_id}")
    assert issue is not None
    assert issue.translation_placeholders["sending"] == "on"


async def test_gate_switched_off_needs_no_key(hass: HomeAssistant, sim_factory: SimFactory) -> None:
    """A hub whose owner switched the gate off takes writes without the key."""
    sim = await sim_factory(best_practice_gate=False)
    await setup_entry(hass, make_entry(sim, **{CONF_SEND_KEY: False}))
    plug = first(sim, "switch")
    await hass.services.async_call(
        SWITCH_DOMAIN,
        SERVICE_TURN_ON,
        {ATTR_ENTITY_ID: entity_id(hass, sim, f"{plug.id}_switch", "switch")},
        blocking=True,
    )
    assert plug.value("switch") == "on"


# ---- the coalescer on its own ----------------------------------------------------------------


class FakeHub:
    """A sender that records batches and answers from a script."""

    def __init__(self) -> None:
        self.batches: list[list[Command]] = []
        self.fail_on: set[str] = set()
        self.raise_next: list[BaseException] = []
        self.gate: asyncio.Event | None = None
        self.sent = asyncio.Event()

    async def send(self, commands: Sequence[Command]) -> list[CommandOutcome]:
        self.batches.append(list(commands))
        self.sent.set()
        if self.gate is not None:
            await self.gate.wait()
        if self.raise_next:
            raise self.raise_next.pop(0)
        return [CommandOutcome(c.device_id not in self.fail_on, "driver error") for c in commands]


def cmd(device: str) -> Command:
    return Command(device, "on")


async def test_coalescer_batches_a_tick_and_caps_batch_size() -> None:
    """45 commands issued together: batches of 20, 20, 5, never more than 2 at once."""
    hub = FakeHub()
    queue = WriteCoalescer(hub.send, window=0)
    await asyncio.gather(*(queue.submit(cmd(str(n))) for n in range(45)))
    assert [len(batch) for batch in hub.batches] == [20, 20, 5]
    assert queue.stats.max_in_flight == 2
    assert queue.stats.calls == 3


async def test_coalescer_fans_out_per_entry_results() -> None:
    """A failed entry raises for its own caller only."""
    hub = FakeHub()
    hub.fail_on = {"2"}
    queue = WriteCoalescer(hub.send, window=0)
    results = await asyncio.gather(
        *(queue.submit(cmd(str(n))) for n in range(1, 4)), return_exceptions=True
    )
    assert results[0] is None
    assert isinstance(results[1], McpToolError)
    assert "driver error" in str(results[1])
    assert results[2] is None


async def test_coalescer_retries_a_refused_batch_one_by_one() -> None:
    """The hub validates a batch as a whole; on -32602 each command gets its own verdict."""
    hub = FakeHub()
    hub.raise_next = [McpRpcError(-32602, "Device not found: 9"), McpRpcError(-32602, "nope")]
    queue = WriteCoalescer(hub.send, window=0)
    results = await asyncio.gather(
        queue.submit(cmd("9")), queue.submit(cmd("1")), return_exceptions=True
    )
    assert isinstance(results[0], McpRpcError)
    assert results[1] is None
    assert [len(batch) for batch in hub.batches] == [2, 1, 1]


@pytest.mark.parametrize(
    "error",
    [
        HubitatKeyRefusedError(-32602, "requires bestPracticeKey"),
        McpRpcError(-32603, "internal"),
        McpConnectionError("down"),
    ],
)
async def test_coalescer_whole_batch_failures(error: Exception) -> None:
    """Key refusals, internal errors and transport failures fail every caller of the batch."""
    hub = FakeHub()
    hub.raise_next = [error]
    queue = WriteCoalescer(hub.send, window=0)
    results = await asyncio.gather(
        queue.submit(cmd("1")), queue.submit(cmd("2")), return_exceptions=True
    )
    assert results == [error, error]
    assert len(hub.batches) == 1


async def test_coalescer_missing_outcome() -> None:
    """A hub answer that leaves a command out fails that command."""

    async def short(commands: Sequence[Command]) -> list[CommandOutcome]:
        return [CommandOutcome(True)]

    queue = WriteCoalescer(short, window=0)
    results = await asyncio.gather(
        queue.submit(cmd("1")), queue.submit(cmd("2")), return_exceptions=True
    )
    assert results[0] is None
    assert isinstance(results[1], McpToolError)


async def test_coalescer_close_fails_waiting_and_running_commands() -> None:
    """Closing cancels batches on the wire and fails queued commands; later submits fail."""
    hub = FakeHub()
    hub.gate = asyncio.Event()
    queue = WriteCoalescer(hub.send, window=0, max_in_flight=1)
    running = asyncio.ensure_future(queue.submit(cmd("1")))
    await hub.sent.wait()
    waiting = asyncio.ensure_future(queue.submit(cmd("2")))
    await asyncio.sleep(0)
    await queue.async_close()
    with pytest.raises(RuntimeError):
        await waiting
    with pytest.raises((asyncio.CancelledError, RuntimeError)):
        await running
    with pytest.raises(RuntimeError):
        await queue.submit(cmd("3"))


async def test_coalescer_close_cancels_a_pending_timer() -> None:
    """A close during the collection window drops the timer and fails the command."""
    hub = FakeHub()
    queue = WriteCoalescer(hub.send, window=60)
    waiting = asyncio.ensure_future(queue.submit(cmd("1")))
    await asyncio.sleep(0)
    await queue.async_close()
    with pytest.raises(RuntimeError):
        await waiting
    assert hub.batches == []


async def test_coalescer_retries_when_another_client_holds_the_write_slots() -> None:
    """`too_many_writes_in_flight` means nothing ran: the batch is sent again, twice at most."""
    calls = 0

    async def busy_then_ok(commands: Sequence[Command]) -> list[CommandOutcome]:
        nonlocal calls
        calls += 1
        if calls == 1:
            return [CommandOutcome(False, "hub_call_device_command: too_many_writes_in_flight")]
        return [CommandOutcome(True)]

    queue = WriteCoalescer(busy_then_ok, window=0, busy_delay=0)
    await queue.submit(cmd("1"))
    assert calls == 2

    async def always_busy(commands: Sequence[Command]) -> list[CommandOutcome]:
        nonlocal calls
        calls += 1
        return [CommandOutcome(False, "too_many_writes_in_flight")]

    calls = 0
    queue = WriteCoalescer(always_busy, window=0, busy_delay=0)
    with pytest.raises(McpToolError, match="too_many_writes_in_flight"):
        await queue.submit(cmd("1"))
    assert calls == 3
