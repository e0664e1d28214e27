"""The hub's own device commands, checked against what the devices report afterwards.

`hub_call_device_command` answers `success: true` once the command was sent
(libraries/mcp-devices-lib.groovy toolSendCommand: "Whether the command was sent"); the device
acts (or not) when it reports. Each command whose effect the gateway knows is read back.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
import math
from typing import TYPE_CHECKING, Any, Final

from homeassistant.const import UnitOfTemperature
from homeassistant.util.unit_conversion import TemperatureConverter

from ...framework.base import CallConfirmation, Confirmation, async_confirm_by_reading
from .api import HubitatDevice

if TYPE_CHECKING:
    from .coordinator import HubitatCoordinator

# How long a device may take to report a command, read back every READ_EVERY seconds.
CONFIRM_SECONDS: Final = 3.0
READ_EVERY: Final = 0.5

# attribute -> the values that show the command took effect (a number: that number)
type _Wanted = dict[str, tuple[Any, ...]]


def _number(params: list[Any]) -> float | None:
    try:
        return float(params[0])
    except (IndexError, TypeError, ValueError):
        return None


def _moving(final: str, moving: str) -> Callable[[HubitatDevice, list[Any]], _Wanted | None]:
    def wanted(device: HubitatDevice, params: list[Any]) -> _Wanted | None:
        if "valve" in device.attributes:
            return {"valve": (final,)}
        for attribute in ("door", "windowShade"):
            if attribute in device.attributes:
                return {attribute: (moving, final)}
        return None

    return wanted


def _set(attribute: str, value: Any) -> Callable[[HubitatDevice, list[Any]], _Wanted | None]:
    return lambda device, params: {attribute: (value,)}


def _to_number(attribute: str) -> Callable[[HubitatDevice, list[Any]], _Wanted | None]:
    def wanted(device: HubitatDevice, params: list[Any]) -> _Wanted | None:
        value = _number(params)
        return None if value is None else {attribute: (value,)}

    return wanted


def _to_param(attribute: str) -> Callable[[HubitatDevice, list[Any]], _Wanted | None]:
    def wanted(device: HubitatDevice, params: list[Any]) -> _Wanted | None:
        return {attribute: (str(params[0]),)} if params else None

    return wanted


# The commands whose effect is one attribute's value (the drivers' capabilities).
_EFFECTS: Final[dict[str, Callable[[HubitatDevice, list[Any]], _Wanted | None]]] = {
    "on": _set("switch", "on"),
    "off": _set("switch", "off"),
    "lock": _set("lock", "locked"),
    "unlock": _set("lock", "unlocked"),
    "open": _moving("open", "opening"),
    "close": _moving("closed", "closing"),
    "setLevel": _to_number("level"),
    "setPosition": _to_number("position"),
    "setHeatingSetpoint": _to_number("heatingSetpoint"),
    "setCoolingSetpoint": _to_number("coolingSetpoint"),
    "setThermostatMode": _to_param("thermostatMode"),
    "setThermostatFanMode": _to_param("thermostatFanMode"),
    "setSpeed": _to_param("speed"),
}


async def async_confirm_commands(
    coordinator: HubitatCoordinator, arguments: Mapping[str, Any]
) -> CallConfirmation | None:
    """Each command of a hub_call_device_command call: confirmed, not applied, or unknown."""
    commands = _commands(arguments)
    if not commands:
        return None
    heard = {
        device_id: device.last_activity
        for device_id, _, _ in commands
        if (device := coordinator.data.devices.get(device_id)) is not None
    }
    items = await async_confirm_by_reading(
        lambda: [_check(coordinator, heard, *command) for command in commands],
        coordinator.async_read_changes,
        seconds=CONFIRM_SECONDS,
        every=READ_EVERY,
    )
    statuses = {item["status"] for item in items}
    if Confirmation.NOT_APPLIED in statuses:
        status, note = (
            Confirmation.NOT_APPLIED,
            "A device reported since the command, not what it asked: see `device_reports`.",
        )
    elif Confirmation.UNKNOWN in statuses:
        status, note = (
            Confirmation.UNKNOWN,
            f"Sent; not every device reported the command within {CONFIRM_SECONDS:g} s "
            "(or its effect is not one the gateway can check).",
        )
    else:
        status, note = Confirmation.CONFIRMED, "Every device reports what was asked."
    return CallConfirmation(status, note, tuple(items))


def _commands(arguments: Mapping[str, Any]) -> list[tuple[str, str, list[Any]]]:
    entries = arguments.get("commands")
    if not isinstance(entries, list):
        entries = [arguments]
    found = []
    for entry in entries:
        if not isinstance(entry, Mapping):
            continue
        device_id, command = entry.get("deviceId"), entry.get("command")
        params = entry.get("parameters")
        if device_id is not None and isinstance(command, str):
            found.append(
                (str(device_id), command, list(params) if isinstance(params, list) else [])
            )
    return found


def _check(
    coordinator: HubitatCoordinator,
    heard: Mapping[str, str | None],
    device_id: str,
    command: str,
    params: list[Any],
) -> dict[str, Any]:
    item: dict[str, Any] = {"deviceId": device_id, "command": command}
    device = coordinator.data.devices.get(device_id)
    effect = _EFFECTS.get(command)
    wanted = effect(device, params) if device is not None and effect is not None else None
    if device is None or not wanted:
        return {**item, "status": Confirmation.UNKNOWN}
    reports = {name: device.attr(name) for name in wanted}
    item["device_reports"] = reports
    if all(any(_same(reports[name], value) for value in values) for name, values in wanted.items()):
        return {**item, "status": Confirmation.CONFIRMED}
    if device.last_activity != heard.get(device_id):
        # The device spoke since the command, and not of its effect.
        return {**item, "status": Confirmation.NOT_APPLIED}
    return {**item, "status": Confirmation.UNKNOWN}


def _same(reported: Any, wanted: Any) -> bool:
    if isinstance(wanted, float):
        try:
            return math.isclose(float(reported), wanted, abs_tol=0.51)
        except (TypeError, ValueError):
            return False
    return str(reported) == str(wanted)


# The temperature attributes a thermostat or sensor reports, in the hub's scale.
_TEMPERATURES: Final = ("heatingSetpoint", "coolingSetpoint", "thermostatSetpoint", "temperature")


def device_reading(device: HubitatDevice, unit: str, *, only: str | None = None) -> str | None:
    """The device's temperatures as the hub reports them, with HA's `unit` beside, where the
    hub's scale (its temperatureScale, hub_get_info) is another: None where they agree."""
    scale = (
        UnitOfTemperature.CELSIUS
        if (device.temperature_scale or "F").upper().startswith("C")
        else UnitOfTemperature.FAHRENHEIT
    )
    if scale == unit:
        return None
    parts = []
    for name in (only,) if only else _TEMPERATURES:
        value = device.attr(name)
        if isinstance(value, bool):
            continue
        try:
            reported = float(value)
        except (TypeError, ValueError):
            continue
        converted = TemperatureConverter.convert(reported, scale, unit)
        parts.append(f"{name} {reported:g} {scale} ({converted:.1f} {unit})")
    return ", ".join(parts) or None
