"""Buttons: one-shot actions such as running a rule or snoozing an alarm.

What Home Assistant loads for the platform; the entity class is in platforms/button.py.
"""

from __future__ import annotations

from homeassistant.const import Platform

from .framework.publisher import platform_setup
from .platforms.button import GatewayButton

# Reads come from the coordinators; writes are bounded by each backend itself.
PARALLEL_UPDATES = 0

async_setup_entry = platform_setup(Platform.BUTTON, GatewayButton)
