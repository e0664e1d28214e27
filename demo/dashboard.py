"""The demo's dashboard: one card per backend entry with a few of its entities, so the web UI
shows all three backends at a glance. Created through the websocket API the frontend uses."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from .ha import HomeAssistantProcess

DASHBOARD_URL_PATH = "mcp-demo"
# Per backend, which entity domains the dashboard shows first (a few of each tells the story).
SHOWCASE = {
    "hubitat": [
        "alarm_control_panel",
        "select",
        "light",
        "cover",
        "lock",
        "binary_sensor",
        "sensor",
    ],
    "homecast": ["light", "climate", "lock", "select", "switch", "sensor"],
    "robine_wake": ["sensor", "switch", "button", "binary_sensor", "event"],
}
PER_CARD = 8


async def create_dashboard(ha: HomeAssistantProcess, kinds: Mapping[str, str]) -> None:
    """A dashboard with one card per backend (`kinds`: entry id -> backend), a few entities each."""
    entries = await ha.websocket_command({"type": "config_entries/get", "domain": "mcp_gateway"})
    registry = await ha.websocket_command({"type": "config/entity_registry/list"})
    by_entry: dict[str, list[str]] = defaultdict(list)
    for entity in registry:
        if entity["platform"] == "mcp_gateway" and not entity.get("disabled_by"):
            by_entry[entity["config_entry_id"]].append(entity["entity_id"])
    cards: list[dict[str, Any]] = []
    for entry in entries:
        order = SHOWCASE.get(kinds.get(entry["entry_id"], ""), [])
        entity_ids = by_entry.get(entry["entry_id"], [])
        if entity_ids:
            picked = sorted(entity_ids, key=lambda e: (_rank(e, order), e))[:PER_CARD]
            cards.append({"type": "entities", "title": entry["title"], "entities": picked})
    dashboards = await ha.websocket_command({"type": "lovelace/dashboards/list"})
    if not any(d["url_path"] == DASHBOARD_URL_PATH for d in dashboards):
        await ha.websocket_command(
            {
                "type": "lovelace/dashboards/create",
                "url_path": DASHBOARD_URL_PATH,
                "title": "MCP demo",
                "icon": "mdi:home-assistant",
                "show_in_sidebar": True,
                "require_admin": False,
                "mode": "storage",
            }
        )
    await ha.websocket_command(
        {
            "type": "lovelace/config/save",
            "url_path": DASHBOARD_URL_PATH,
            "config": {"views": [{"title": "Home", "type": "masonry", "cards": cards}]},
        }
    )


def _rank(entity_id: str, order: list[str]) -> int:
    domain = entity_id.split(".", 1)[0]
    return order.index(domain) if domain in order else len(order)
