"""The demo's recorded week: the demo-only integration (history_seed/) that writes it, linked
into the configuration beside ours, and the call that has it written on a first run.

A kept demo keeps the week it recorded; the recorder keeps more than that (DEMO_YAML), so the
nightly purge leaves it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

from .ha import HomeAssistantProcess

DOMAIN: Final = "demo_history"
COMPONENT: Final = Path(__file__).with_name("history_seed")
# configuration.yaml's line that loads it.
YAML: Final = f"{DOMAIN}:\n"


async def record_week(ha: HomeAssistantProcess) -> dict[str, Any]:
    """Have Home Assistant record a week of the gateway's entities; what it wrote."""
    result = await ha.websocket_command(
        {"type": "call_service", "domain": DOMAIN, "service": "backfill", "return_response": True}
    )
    response: dict[str, Any] = result.get("response") or {}
    return response
