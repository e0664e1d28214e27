"""Description callables on hand-made accessories: the edges the simulator does not produce."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from homeassistant.components.alarm_control_panel import AlarmControlPanelState
from homeassistant.components.climate import HVACAction, HVACMode
from homeassistant.components.light import ColorMode
from homeassistant.const import Platform
import pytest

from custom_components.mcp_gateway.backends.homecast import entities as ent
from custom_components.mcp_gateway.backends.homecast.api import (
    VIRTUAL_KEYS,
    Accessory,
    VirtualInfo,
)
from custom_components.mcp_gateway.platforms.climate import ClimateTarget


def _acc(kind: str = "other", settable: tuple[str, ...] = (), **values: Any) -> Accessory:
    return Accessory(
        home_key="home_0001",
        room_key="room_0002",
        key="thing_0003",
        uid="0003",
        type=kind,
        name="Thing",
        room_name="Room",
        values=dict(values),
        settable=frozenset(settable),
        options={},
    )


class _Runtime:
    """Records the writes a description makes."""

    def __init__(self) -> None:
        self.writes: list[dict[str, Any]] = []
        self.api = SimpleNamespace(async_set=self._set)
        # The coordinator shows what was written at once.
        self.coordinator = SimpleNamespace(
            expect_write=lambda acc, values: acc.values.update(values)
        )

    async def _set(self, acc: Accessory, props: dict[str, Any]) -> None:
        self.writes.append(dict(props))


def test_light_with_colour_and_white() -> None:
    """A colour-and-white light reports HS or colour temperature by saturation."""
    acc = _acc("light", hue=10, saturation=0, color_temp=300, brightness=0, on=True)
    assert ent.LIGHT.supported_color_modes_fn(acc) == {ColorMode.HS, ColorMode.COLOR_TEMP}
    assert ent.LIGHT.color_mode_fn(acc) == ColorMode.COLOR_TEMP
    acc.values["saturation"] = 80
    assert ent.LIGHT.color_mode_fn(acc) == ColorMode.HS
    assert ent.LIGHT.supported_color_modes_fn(_acc("light", on=False)) == {ColorMode.ONOFF}
    assert ent.LIGHT.brightness_fn(_acc("light", on=True)) is None
    assert ent.LIGHT.color_temp_kelvin_fn(_acc("light", color_temp=0)) is None


def test_lock_raw_states() -> None:
    """Lock states outside locked/unlocked read as unknown, jammed as jammed."""
    assert ent.LOCK.is_locked_fn(_acc("lock", locked=1)) is True
    assert ent.LOCK.is_locked_fn(_acc("lock", locked=0)) is False
    jammed = _acc("lock", locked=2)
    assert ent.LOCK.is_locked_fn(jammed) is None
    assert ent.LOCK.is_jammed_fn(jammed) is True
    assert ent.LOCK.is_jammed_fn(_acc("lock", locked=True)) is False
    assert ent.LOCK.is_locked_fn(_acc("lock", locked="?")) is None


def test_alarm_raw_states() -> None:
    """Raw alarm states map to HA's alarm states."""
    acc = _acc("alarm", alarm_state=1, alarm_target=1)
    assert ent.ALARM.state_fn(acc) == AlarmControlPanelState.ARMED_AWAY
    assert ent.ALARM.state_fn(_acc("alarm", alarm_state=4)) == AlarmControlPanelState.TRIGGERED


async def test_refused_modes() -> None:
    """Modes a device cannot take are validation errors, not writes."""
    runtime = _Runtime()
    with pytest.raises(ValueError, match="cannot be set"):
        await ent.ALARM.set_state_fn(runtime, _acc("alarm"), AlarmControlPanelState.ARMED_VACATION)
    with pytest.raises(ValueError, match="no dry mode"):
        await ent.HEATER_COOLER.set_hvac_mode_fn(runtime, _acc("climate"), HVACMode.DRY)
    assert runtime.writes == []


async def test_heater_cooler_edges() -> None:
    """Heater-coolers with one setpoint or an odd mode still read sensibly."""
    runtime = _Runtime()
    only_heat = _acc("climate", active=True, heat_target=20.0)
    assert ent.HEATER_COOLER.target_temperature_fn(only_heat) == 20.0
    only_cool = _acc("climate", active=1, cool_target=24.0, hvac_mode="auto")
    assert ent.HEATER_COOLER.target_temperature_fn(only_cool) == 24.0
    assert ent.HEATER_COOLER.hvac_mode_fn(_acc("climate", hvac_mode="heat")) == HVACMode.HEAT
    await ent.HEATER_COOLER.set_temperature_fn(
        runtime, only_heat, ClimateTarget(temperature=21.26, hvac_mode=HVACMode.OFF)
    )
    await ent.HEATER_COOLER.set_temperature_fn(runtime, only_heat, ClimateTarget())
    assert runtime.writes == [{"active": False, "heat_target": 21.3}]


def test_thermostat_without_current_state() -> None:
    """A thermostat without a current state has no action unless idle."""
    assert ent.THERMOSTAT.hvac_action_fn(_acc("climate", heating_cooling_target=1)) is None
    idle = _acc("climate", heating_cooling_target=1, heating_cooling_current=0)
    assert ent.THERMOSTAT.hvac_action_fn(idle) == HVACAction.IDLE


async def test_cover_and_fan_edges() -> None:
    """Cover positions and fan speeds read and write at their edges."""
    runtime = _Runtime()
    assert ent.COVER.position_fn(_acc("blind", target=30)) == 30
    assert ent.COVER.is_closed_fn(_acc("blind")) is None
    fan = _acc("fan", on=True, speed=40)  # an older fan service: power is `on`
    assert ent.FAN.is_on_fn(fan) is True
    await ent.FAN.set_percentage_fn(runtime, fan, 0)
    await ent.FAN.turn_on_fn(runtime, fan, None)
    assert runtime.writes == [{"on": False}, {"on": True}]
    assert ent.FAN.percentage_fn(_acc("fan", active=True)) is None
    assert ent.VALVE.is_closed_fn(_acc("valve")) is None


def test_virtual_edges() -> None:
    """Virtual dates that are no instants read as None; instants are local and aware."""
    date = _acc("date", virtual_datetime="not a date")
    assert ent.V_DATE.value_fn(date) is None
    assert ent.V_DATE.value_fn(_acc("date", virtual_datetime="")) is None
    local = ent.V_DATE.value_fn(_acc("date", virtual_datetime="2026-01-02T03:04:05"))
    assert local is not None
    assert local.utcoffset() is not None
    assert ent.V_DATE_TEXT.value_fn(_acc("other", virtual_datetime="07:30")) == "07:30"
    assert ent.V_DATE_TEXT.value_fn(_acc("other")) is None
    assert ent.V_READONLY.value_fn(_acc("text")) is None
    assert ent.V_READONLY.value_fn(_acc("text", virtual_text=["x"])) is None
    assert ent.V_READONLY.value_fn(_acc("other", virtual_datetime="2026-12-03")) == "2026-12-03"
    assert ent.V_COUNTER.value_fn(_acc("counter", virtual_count=True)) is None
    assert ent.V_TEXT.value_fn(_acc("text")) is None
    assert ent.V_MODE.current_option_fn(_acc("other")) is None
    mode = _acc("mode", virtual_mode="A")
    mode.options = {"virtual_mode": ["A", "B"]}
    assert ent.V_MODE.options_fn(mode) == ["A", "B"]


def _virtual(key: str, value: Any, *, settable: bool = True) -> Accessory:
    acc = _acc("other", (key,) if settable else (), **{key: value})
    acc.virtual = VirtualInfo(kind=VIRTUAL_KEYS[key], key=key, controllable=settable)
    return acc


@pytest.mark.parametrize(
    ("key", "value", "settable", "expected"),
    [
        ("virtual_mode", "Home", True, [("select", "virtual_mode")]),
        ("virtual_number", 55, True, [("number", "virtual_number")]),
        (
            "virtual_count",
            2,
            True,
            [
                ("sensor", "virtual_count"),
                ("button", "virtual_count_increment"),
                ("button", "virtual_count_reset"),
            ],
        ),
        ("virtual_timer", "idle", True, [("switch", "virtual_timer")]),
        ("virtual_text", "hi", True, [("text", "virtual_text")]),
        ("virtual_datetime", "2026-12-03T07:00:00+00:00", True, [("datetime", "virtual_datetime")]),
        ("virtual_datetime", "2026-12-03", True, [("text", "virtual_datetime_text")]),
        ("virtual_datetime", "", True, [("text", "virtual_datetime_text")]),
        ("virtual_timer", "active", False, [("binary_sensor", "virtual_state")]),
        ("virtual_mode", "Away", False, [("sensor", "virtual_value")]),
        ("virtual_datetime", "2026-12-03T07:00:00Z", False, [("sensor", "virtual_value")]),
    ],
)
def test_virtual_kinds(key: str, value: Any, settable: bool, expected: list[Any]) -> None:
    """Each kind of virtual accessory, as get_state reports it, on its platform."""
    mapped = [
        (platform.value, d.key)
        for platform, d in ent._main(_virtual(key, value, settable=settable))
    ]
    assert mapped == expected


def test_thermostat_modes_without_options() -> None:
    """Only the modes its setpoints show it can take (plus the one it is in)."""
    heat_only = _acc("climate", heating_cooling_target=1, target_temp=20.0)
    assert ent.THERMOSTAT.hvac_modes_fn(heat_only) == [HVACMode.OFF, HVACMode.HEAT]
    cooling_now = _acc("climate", heating_cooling_target=2, target_temp=20.0)
    assert ent.THERMOSTAT.hvac_modes_fn(cooling_now) == [HVACMode.OFF, HVACMode.HEAT, HVACMode.COOL]
    full = _acc("climate", heating_cooling_target=0, heat_target=18.0, cool_target=24.0)
    assert ent.THERMOSTAT.hvac_modes_fn(full) == [
        HVACMode.OFF,
        HVACMode.HEAT,
        HVACMode.COOL,
        HVACMode.HEAT_COOL,
    ]
    listed = _acc("climate", heating_cooling_target=0)
    listed.options = {"heating_cooling_target": [0, 3]}
    assert ent.THERMOSTAT.hvac_modes_fn(listed) == [HVACMode.OFF, HVACMode.HEAT_COOL]
    cool_only = _acc("climate", active=True, cool_target=24.0)
    assert ent.HEATER_COOLER.hvac_modes_fn(cool_only) == [HVACMode.OFF, HVACMode.COOL]


async def test_climate_fan_speed() -> None:
    """A heater-cooler with a speed gets fan modes, and refuses an unknown one."""
    runtime = _Runtime()
    ac = _acc("climate", active=True, hvac_mode="cool", cool_target=22.0, speed=60)
    assert ent._main(ac) == [(Platform.CLIMATE, ent.HEATER_COOLER_FAN)]
    assert ent.HEATER_COOLER_FAN.fan_mode_fn(ac) == "medium"
    assert ent.HEATER_COOLER_FAN.fan_mode_fn(_acc("climate")) is None
    await ent.HEATER_COOLER_FAN.set_fan_mode_fn(runtime, ac, "high")
    assert runtime.writes == [{"speed": 100}]
    with pytest.raises(ValueError, match="no fan mode"):
        await ent.HEATER_COOLER_FAN.set_fan_mode_fn(runtime, ac, "turbo")


def test_raw_characteristics() -> None:
    """Characteristics passed through under their raw names become entities."""
    acc = _acc(
        "other",
        leak_detected=1,
        smoke_detected=0,
        carbon_monoxide_detected=0,
        current_door_state=4,
        air_quality=2,
        eve_energy_watt=12.5,
    )
    extras = {d.key: d for _, d in ent._extras(acc)}
    assert set(extras) == {
        "leak_detected",
        "smoke_detected",
        "carbon_monoxide_detected",
        "current_door_state",
        "air_quality",
        "eve_energy_watt",
    }
    assert extras["leak_detected"].is_on_fn(acc) is True
    assert extras["smoke_detected"].is_on_fn(acc) is False
    assert extras["current_door_state"].is_on_fn(acc) is True  # stopped half-way: open
    assert extras["current_door_state"].is_on_fn(_acc(current_door_state=1)) is False
    assert extras["air_quality"].value_fn(acc) == "good"
    assert extras["air_quality"].value_fn(_acc(air_quality=9)) is None
    assert extras["eve_energy_watt"].value_fn(acc) == 12.5


async def test_counter_without_definition() -> None:
    """A counter without a definition still increments by one."""
    runtime = _Runtime()
    await ent.V_COUNTER_INCREMENT.press_fn(runtime, _acc("counter", virtual_count="x"))
    assert runtime.writes == [{"virtual_count": 1}]


def test_no_data_no_specs() -> None:
    """Before the first poll there are no specs and sources read None."""
    coordinator = SimpleNamespace(data=None)
    assert ent.derive_specs(coordinator) == []  # type: ignore[arg-type]
    source = ent._accessory_source(coordinator, "home", "0003")  # type: ignore[arg-type]
    assert source() is None


@pytest.mark.parametrize(
    ("kind", "values", "expected"),
    [
        ("light", {"on": True}, ["LIGHT"]),
        ("switch", {"on": True}, ["V_READONLY_ON"]),
        ("outlet", {"on": True}, ["OUTLET"]),
        ("climate", {"target_temp": 20.0}, ["THERMOSTAT"]),
        ("climate", {"active": True}, ["HEATER_COOLER"]),
        ("lock", {}, ["LOCK"]),
        ("alarm", {}, ["ALARM"]),
        ("blind", {}, ["COVER"]),
        ("fan", {}, ["FAN"]),
        ("valve", {}, ["VALVE"]),
        ("speaker", {}, ["VOLUME", "MUTE"]),
        ("doorbell", {}, ["DOORBELL"]),
        ("button", {}, ["BUTTON_EVENT"]),
        ("other", {"on": True}, []),
    ],
)
def test_main_table_by_type(kind: str, values: dict[str, Any], expected: list[str]) -> None:
    """MAIN_ENTITIES' has_fn give each accessory type exactly its own control entities."""
    assert [d for _, d in ent._main(_acc(kind, **values))] == [getattr(ent, n) for n in expected]
    settable = ent._main(_acc("switch", ("on",), on=True))
    assert settable == [(Platform.SWITCH, ent.SWITCH)]
