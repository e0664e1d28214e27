"""Entity mapping on its own: capability → platform, value conversions, command choices."""

from __future__ import annotations

from dataclasses import replace
import types
from typing import Any

from homeassistant.components.alarm_control_panel import AlarmControlPanelState
from homeassistant.components.climate import HVACMode
from homeassistant.components.light import ColorMode
from homeassistant.const import Platform, UnitOfTemperature
from homeassistant.core import HomeAssistant
import pytest

from custom_components.mcp_gateway.backends.hubitat import entities as e
from custom_components.mcp_gateway.backends.hubitat.api import (
    HsmStatus,
    HubInfo,
    HubitatDevice,
    Modes,
)
from custom_components.mcp_gateway.backends.hubitat.coordinator import HubitatData
from custom_components.mcp_gateway.platforms.climate import ClimateTarget
from custom_components.mcp_gateway.platforms.light import LightCommand


class FakeRuntime:
    """Records the device commands an entity would send."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, str, list[str], dict[str, Any]]] = []

    async def async_command(
        self, device_id: str, command: str, parameters: list[str], expect: dict[str, Any]
    ) -> None:
        self.sent.append((device_id, command, parameters, dict(expect)))


def device(*capabilities: str, commands: tuple[str, ...] = (), **attributes: Any) -> HubitatDevice:
    return HubitatDevice(
        id="7",
        name="Driver",
        capabilities=frozenset(capabilities),
        commands=frozenset(commands),
        attributes=dict(attributes),
    )


@pytest.mark.parametrize(
    ("capabilities", "attributes", "expected"),
    [
        (("Thermostat",), {}, (Platform.CLIMATE, e.CLIMATE)),
        (("FanControl", "Switch"), {}, (Platform.FAN, e.FAN)),
        (("WindowBlind", "SwitchLevel"), {}, (Platform.COVER, e.SHADE)),
        (("GarageDoorControl", "DoorControl"), {}, (Platform.COVER, e.GARAGE_DOOR)),
        (("DoorControl",), {}, (Platform.COVER, e.DOOR)),
        (("Lock",), {}, (Platform.LOCK, e.LOCK)),
        (("Valve",), {}, (Platform.VALVE, e.VALVE)),
        (("SecurityKeypad",), {}, (Platform.ALARM_CONTROL_PANEL, e.KEYPAD)),
        (("Switch", "SwitchLevel"), {}, (Platform.LIGHT, e.LIGHT)),
        (("Switch", "PowerMeter"), {}, (Platform.SWITCH, e.SWITCH)),
        ((), {"switch": "on"}, (Platform.SWITCH, e.SWITCH)),
        (("ContactSensor",), {"contact": "open"}, None),
    ],
)
def test_primary_platform(
    capabilities: tuple[str, ...], attributes: dict[str, Any], expected: Any
) -> None:
    """The reference table's mapping, first match wins."""
    assert e.primary(device(*capabilities, **attributes), set(), set()) == expected


def test_overrides_flip_light_and_switch() -> None:
    """A per-device override turns a dimmer into a switch and a plug into a light."""
    dimmer = device("Switch", "SwitchLevel")
    plug = device("Switch")
    assert e.primary(dimmer, {"7"}, set()) == (Platform.SWITCH, e.SWITCH)
    assert e.primary(plug, set(), {"7"}) == (Platform.LIGHT, e.LIGHT)
    assert e.is_light_capable(dimmer)
    assert e.is_plain_switch(plug)


def test_value_conversions() -> None:
    """Numbers as strings, JSON lists as strings, the hub's temperature scale."""
    assert e._num("21.5") == 21.5
    assert e._num(True) is None
    assert e._num("warm") is None
    assert e._str_list('["heat", "off"]') == ["heat", "off"]
    assert e._str_list("[broken") is None
    assert e._str_list(5) is None
    celsius = replace(device(temperature=21), temperature_scale="C")
    assert e._temperature_unit(celsius) == UnitOfTemperature.CELSIUS
    assert e._temperature_unit(device()) == UnitOfTemperature.FAHRENHEIT


def test_light_reads() -> None:
    """Hue 0-100 becomes 0-360; a level-only device is a brightness light."""
    bulb = device("ColorControl", "ColorTemperature", hue=50, saturation=80, level=100)
    assert e._hs(bulb) == (180.0, 80)
    assert e._brightness(bulb) == 255
    assert e._color_mode(bulb) is ColorMode.HS
    assert e._color_modes(device("Switch", level=10)) == {ColorMode.BRIGHTNESS}
    assert e._color_modes(device("Switch")) == {ColorMode.ONOFF}
    assert e._hs(device(hue=None)) is None


async def test_light_colour_temperature_with_level() -> None:
    """setColorTemperature takes the level as its second argument."""
    runtime = FakeRuntime()
    bulb = device("ColorTemperature", commands=("setColorTemperature",))
    await e._light_on(runtime, bulb, LightCommand(brightness=128, color_temp_kelvin=3000))  # type: ignore[arg-type]
    assert runtime.sent[-1][1:3] == ("setColorTemperature", ["3000", "50"])
    await e._light_on(runtime, bulb, LightCommand(transition=3))  # type: ignore[arg-type]
    assert runtime.sent[-1][1] == "on"


async def test_fans_without_on_off_commands() -> None:
    """Fans that only know setSpeed are switched with setSpeed on/off."""
    runtime = FakeRuntime()
    fan = device("FanControl", commands=("setSpeed",), speed="auto")
    assert e._fan_on(fan) is True
    assert e._fan_percentage(fan) is None
    assert e._fan_on(device("FanControl", switch="off")) is False
    await e._fan_turn_on(runtime, fan, None)  # type: ignore[arg-type]
    await e._fan_turn_off(runtime, fan)  # type: ignore[arg-type]
    assert [sent[1:3] for sent in runtime.sent] == [("setSpeed", ["on"]), ("setSpeed", ["off"])]


def test_covers_locks_and_keypads() -> None:
    """Shades known only by position, jammed locks, keypad states."""
    assert e._shade_closed(device(position=0)) is True
    assert e._shade_closed(device(position=40)) is False
    assert e._shade_closed(device()) is None
    assert e._door_closed(device(door="unknown")) is None
    assert e._is_locked(device(lock="unlocked with timeout")) is False
    assert e._is_locked(device(lock="jammed")) is None
    assert e.LOCK.is_jammed_fn(device(lock="jammed")) is True
    assert e.KEYPAD.state_fn(device(securityKeypad="armed night")) is (
        AlarmControlPanelState.ARMED_NIGHT
    )


async def test_unsupported_targets_are_value_errors() -> None:
    """Targets the hub cannot express become validation errors for the user."""
    runtime = FakeRuntime()
    thermostat = device("Thermostat", thermostatMode="heat")
    with pytest.raises(ValueError, match="HVAC mode"):
        await e._set_hvac_mode(runtime, thermostat, HVACMode.DRY)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="no temperature"):
        await e._set_temperature(runtime, thermostat, ClimateTarget())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="alarm state"):
        await e._set_keypad(  # type: ignore[arg-type]
            runtime, device("SecurityKeypad"), AlarmControlPanelState.ARMED_VACATION
        )
    with pytest.raises(ValueError, match="alarm state"):
        await e._set_hsm(runtime, None, AlarmControlPanelState.ARMED_VACATION)  # type: ignore[arg-type]
    await e._set_keypad(  # type: ignore[arg-type]
        runtime, device("SecurityKeypad"), AlarmControlPanelState.ARMED_AWAY
    )
    assert runtime.sent[-1][1:] == ("armAway", [], {"securityKeypad": "armed away"})


def test_thermostat_reads() -> None:
    """Supported modes from the hub's list; setpoints by mode; ranges only in auto."""
    thermostat = device(
        "Thermostat",
        supportedThermostatModes='["off", "emergency heat", "heat", "bogus"]',
        thermostatMode="off",
        thermostatSetpoint=68,
        heatingSetpoint=66,
    )
    assert e._hvac_modes(thermostat) == [HVACMode.OFF, HVACMode.HEAT]
    assert e._target(thermostat) == 68
    assert e._range("heatingSetpoint")(thermostat) is None
    thermostat = replace(thermostat, attributes={**thermostat.attributes, "thermostatMode": "auto"})
    assert e._target(thermostat) is None
    assert e._range("heatingSetpoint")(thermostat) == 66
    assert e._hvac_modes(device("Thermostat", supportedThermostatModes='["dry"]')) == [HVACMode.OFF]


async def test_on_off_light_ignores_brightness() -> None:
    """A plug shown as a light has no setLevel: a brightness request just turns it on."""
    runtime = FakeRuntime()
    plug = device("Switch", commands=("on", "off"))
    await e._light_on(runtime, plug, LightCommand(brightness=80, transition=2))  # type: ignore[arg-type]
    assert runtime.sent[-1][1:3] == ("on", [])


async def test_a_devices_entities_share_one_source_without_closures(hass: HomeAssistant) -> None:
    """A device's entities read it through one shared source object, a button through its
    own: no closure cells, which made four or five objects per device and button that every
    full garbage collection walks. Sources read the current snapshot, None once it is gone."""
    remote = HubitatDevice(
        id="7",
        name="Remote",
        capabilities=frozenset({"PushableButton", "Battery"}),
        attributes={"numberOfButtons": 2, "battery": 80},
    )
    hub = HubInfo(None, "Hub", None, None, None, None, {})
    data = HubitatData(
        hub=hub,
        devices={"7": remote},
        rules={},
        modes=Modes(None, ()),
        hsm=HsmStatus(None),
        hsm_supported=False,
    )
    coordinator = types.SimpleNamespace(data=data, hass=hass)
    specs = [
        spec
        for spec in e.derive_specs(coordinator, "http://hub", set(), set())  # type: ignore[arg-type]
        if spec.device.key == "7"
    ]
    buttons = [spec for spec in specs if spec.platform is Platform.EVENT]
    others = [spec for spec in specs if spec.platform is not Platform.EVENT]
    assert len(buttons) == 2
    assert others
    assert len({id(spec.source) for spec in others}) == 1
    for spec in specs:
        assert getattr(spec.source, "__closure__", None) is None
    assert others[0].source() is remote
    assert [spec.source() for spec in buttons] == [e.ButtonView(remote, 1), e.ButtonView(remote, 2)]
    coordinator.data = replace(data, devices={})
    assert [spec.source() for spec in specs] == [None] * len(specs)
