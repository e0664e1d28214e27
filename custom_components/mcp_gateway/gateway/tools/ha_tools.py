"""The Home Assistant-level core tools: state, control and history of the integration's entities.

They work on the entities of every exposed backend entry, through HA itself: states come from
the state machine, writes are HA service calls under the caller's context (so HA's own entity
permissions apply), history comes from HA's recorder. Nothing here talks to a backend directly.
Each tool lives in its own module; this table is what the handler offers.

Their parameters are JSON schemas in the portable subset (catalog/schemas/subset.py), not
voluptuous schemas turned into JSON by voluptuous_openapi as HA's own LLM tools are: that
conversion never closes an object (`additionalProperties: false`, which OpenAI's strict mode
needs) and bounds an array's length with minLength/maxLength, not minItems/maxItems.
"""

from __future__ import annotations

from typing import Final

from ...framework.base import ToolTier
from ..catalog.store import CoreTool
from .automations import AUTOMATIONS_SCHEMA, DESCRIPTION, TOOL, async_automations
from .get_history import GET_HISTORY_SCHEMA, async_get_history
from .get_state import GET_STATE_SCHEMA, async_get_state
from .list_backends import LIST_BACKENDS_SCHEMA, async_list_backends
from .set_state import SET_STATE_SCHEMA, async_set_state, prepare_set_state

HA_TOOLS: Final[tuple[CoreTool, ...]] = (
    CoreTool(
        name="get_state",
        title="Get entity states",
        description=(
            "Current state of every backend's entities you may read, as their devices last "
            "reported: authoritative, no backend re-check needed. On, open, locked, "
            "temperatures, offline (available=false)."
        ),
        input_schema=GET_STATE_SCHEMA,
        tier=ToolTier.READ,
        read_only=True,
        run=async_get_state,
    ),
    CoreTool(
        name="set_state",
        title="Set entity states",
        description=(
            "Control entities through Home Assistant, several per call: turn lights and "
            "switches on/off, dim, lock, open/close, set temperature, modes and values: "
            'updates=[{"entity_id": "light.kitchen", "state": "on", "brightness_pct": 60}]. '
            "Runs as you, with your Home Assistant permissions."
        ),
        input_schema=SET_STATE_SCHEMA,
        tier=ToolTier.CONTROL,
        read_only=False,
        open_world=True,
        run=async_set_state,
        prepare=prepare_set_state,
    ),
    CoreTool(
        name="get_history",
        title="Get entity history",
        description=(
            "What happened in the last hours or days (motion, doors, lights, temperatures, "
            "any backend): HA's recorder, with the backend's own history merged where it "
            "holds less, sources and coverage said. Authoritative: one call."
        ),
        input_schema=GET_HISTORY_SCHEMA,
        tier=ToolTier.READ,
        read_only=True,
        run=async_get_history,
    ),
    CoreTool(
        name="list_backends",
        title="List backends",
        description=(
            "Each backend behind this gateway: its gateway tool, health, protocol version, "
            "latency and the number of its tools you may use."
        ),
        input_schema=LIST_BACKENDS_SCHEMA,
        tier=ToolTier.READ,
        read_only=True,
        run=async_list_backends,
    ),
    CoreTool(
        name=TOOL,
        title="Automations",
        description=DESCRIPTION,
        input_schema=AUTOMATIONS_SCHEMA,
        tier=ToolTier.CONTROL,
        read_only=False,
        destructive=True,
        idempotent=False,
        run=async_automations,
    ),
)
