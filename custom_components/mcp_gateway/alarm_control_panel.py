"""Alarm control panels: Hubitat's HSM and HomeKit security systems.

What Home Assistant loads for the platform; the entity class is in platforms/alarm_control_panel.py.
"""

from __future__ import annotations

from homeassistant.const import Platform

from .framework.publisher import platform_setup
from .platforms.alarm_control_panel import GatewayAlarmPanel

# Reads come from the coordinators; writes are bounded by each backend itself.
PARALLEL_UPDATES = 0

async_setup_entry = platform_setup(Platform.ALARM_CONTROL_PANEL, GatewayAlarmPanel)
