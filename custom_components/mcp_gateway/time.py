"""Times of day: an alarm clock's ring times.

What Home Assistant loads for the platform; the entity class is in platforms/time.py.
"""

from __future__ import annotations

from homeassistant.const import Platform

from .framework.publisher import platform_setup
from .platforms.time import GatewayTime

# Reads come from the coordinators; writes are bounded by each backend itself.
PARALLEL_UPDATES = 0

async_setup_entry = platform_setup(Platform.TIME, GatewayTime)
