"""Constants shared across the integration."""

from __future__ import annotations

from typing import Final

import homeassistant.const as ha_const

DOMAIN: Final = "mcp_gateway"

# Which backend a config entry talks to, stored in entry.data: a backend's KIND (its
# const.py; registry.py lists them) or core.settings.KIND_GATEWAY.
CONF_BACKEND: Final = "backend"

GATEWAY_URL: Final = "/api/mcp_gateway"

# Option every backend entry has: whether the MCP gateway exposes it.
CONF_GATEWAY_EXPOSED: Final = "gateway_exposed"

# Unit strings whose HA constants moved: CONCENTRATION_* are deprecated from 2026.x (importing
# them would stop the integration loading once removed, 2027.8) and their successors do not
# exist in 2025.4, the oldest release supported. 2026.x also spells micro with the Greek mu.
PARTS_PER_MILLION: Final = "ppm"
_DENSITY = getattr(ha_const, "UnitOfDensity", None)
MICROGRAMS_PER_CUBIC_METER: Final[str] = (
    str(_DENSITY.MICROGRAMS_PER_CUBIC_METER) if _DENSITY is not None else "\u00b5g/m\u00b3"
)
