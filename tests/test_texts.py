"""What people read in dialogs: every step titled, every way a flow can end translated."""

from __future__ import annotations

import json
from pathlib import Path
import re

ROOT = Path(__file__).parent.parent / "custom_components" / "mcp_gateway"
STRINGS = json.loads((ROOT / "strings.json").read_text())
# Reasons Home Assistant's flow helpers abort with on their own (async_set_unique_id,
# _abort_if_unique_id_configured/mismatch, async_update_reload_and_abort).
HA_REASONS = {
    "already_in_progress",
    "already_configured",
    "unique_id_mismatch",
    "reauth_successful",
    "reconfigure_successful",
}


def _code() -> str:
    # repairs.py's fix flows take their abort texts from their issues (test_hassfest checks).
    return "\n".join(path.read_text() for path in ROOT.rglob("*.py") if path != ROOT / "repairs.py")


def test_every_dialog_has_a_title() -> None:
    """A step without a title shows an empty header."""
    for section in ("config", "options"):
        for step, texts in STRINGS.get(section, {}).get("step", {}).items():
            assert texts.get("title"), f"{section}.step.{step}"


def test_every_abort_reason_is_translated() -> None:
    """An untranslated reason shows raw (a dialog saying just "already_in_progress")."""
    code = _code()
    reasons = set(re.findall(r'reason="([a-z_]+)"', code)) | HA_REASONS
    missing = reasons - set(STRINGS["config"].get("abort", {}))
    assert missing == set()


def test_names_drop_what_the_device_name_ends_with() -> None:
    """Device "Home Hub" + "Hub temperature" reads "Home Hub Temperature"."""
    from custom_components.mcp_gateway.framework.entity import without_overlap

    assert without_overlap("Home Hub", "Hub temperature") == "Temperature"
    assert without_overlap("Kitchen Doorbell", "Doorbell") is None
    assert without_overlap("Living Room Outlet", "Outlet 1") == "1"
    assert without_overlap("Garage", "Garage Door Opening") == "Door Opening"
    assert without_overlap("Kitchen Lamp", "Battery") == "Battery"
    assert without_overlap(None, "Battery") == "Battery"
