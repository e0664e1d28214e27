"""Alarm control panels: Hubitat's HSM and HomeKit security systems."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from homeassistant.components.alarm_control_panel import (
    AlarmControlPanelEntity,
    AlarmControlPanelEntityDescription,
)
from homeassistant.components.alarm_control_panel.const import (
    AlarmControlPanelEntityFeature,
    AlarmControlPanelState,
)

from ..framework.entity import GatewayEntity, GatewayEntityDescription, translate_errors


@dataclass(frozen=True, kw_only=True)
class GatewayAlarmDescription[NativeT](
    GatewayEntityDescription[NativeT], AlarmControlPanelEntityDescription
):
    """How an alarm panel reads and sets a native object."""

    state_fn: Callable[[NativeT], AlarmControlPanelState | None]
    supported_features: AlarmControlPanelEntityFeature
    set_state_fn: Callable[[Any, NativeT, AlarmControlPanelState], Awaitable[Any]]


class GatewayAlarmPanel(GatewayEntity, AlarmControlPanelEntity):
    """A backend alarm panel; no code is asked because the backends take none."""

    entity_description: GatewayAlarmDescription[Any]
    _attr_code_arm_required = False

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self._attr_supported_features = self.entity_description.supported_features

    @property
    def alarm_state(self) -> AlarmControlPanelState | None:
        """Current state."""
        return self.read(self.entity_description.state_fn)

    async def _set(self, target: AlarmControlPanelState) -> None:
        await self.entity_description.set_state_fn(self.runtime, self.native, target)

    @translate_errors
    async def async_alarm_disarm(self, code: str | None = None) -> None:
        """Disarm."""
        await self._set(AlarmControlPanelState.DISARMED)

    @translate_errors
    async def async_alarm_arm_home(self, code: str | None = None) -> None:
        """Arm for people at home."""
        await self._set(AlarmControlPanelState.ARMED_HOME)

    @translate_errors
    async def async_alarm_arm_away(self, code: str | None = None) -> None:
        """Arm for an empty home."""
        await self._set(AlarmControlPanelState.ARMED_AWAY)

    @translate_errors
    async def async_alarm_arm_night(self, code: str | None = None) -> None:
        """Arm for the night."""
        await self._set(AlarmControlPanelState.ARMED_NIGHT)
