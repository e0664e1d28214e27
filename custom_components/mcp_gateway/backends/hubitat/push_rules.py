"""The hub-side rules that call Home Assistant's webhook when devices change (pure planning).

They are rules of the MCP app's own custom rule engine (hubitat-mcp-rule.groovy): a
`device_event` trigger per attribute name over the devices that have it, `mode_change` and
`hsm_change` triggers, and one `http_request` action that POSTs a fixed body to the webhook
(the engine sends its body as written: no event data travels, HA reads what changed itself).

The engine disables a rule that runs too often (its loop guard, hub settings of 5 to 200 runs
within 10 to 300 s, 30 in 60 by default; every run counts, mode and HSM changes too:
hubitat-mcp-rule.groovy executeRule), so devices are split over several rules, mode and HSM
have a rule of their own, and attributes that devices report periodically or many times a
minute (power meters, environment sensors, battery, radio figures) are left to the safety poll.
Each rule's body carries the entry's push key, so HA tells the hub's calls from forged ones.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
import hashlib
import json
from typing import Any, Final

from .api import HubitatDevice

# What every rule's name starts with, then the entry's marker and its place ("2/3").
RULE_PREFIX: Final = "Home Assistant live updates"
# Devices per rule: a rule's loop guard counts the events of its devices only.
DEVICES_PER_RULE: Final = 16
# Attributes that devices report periodically or many times a minute: a rule with them
# would trip its loop guard (and notify the owner's phones each time), so polling reads them.
CHATTY_ATTRIBUTES: Final = frozenset(
    {
        *("power", "energy", "voltage", "amperage", "current", "powerFactor", "frequency"),
        *("rssi", "lqi", "healthStatus", "lastCheckin", "lastActivity", "uptime"),
        *("illuminance", "temperature", "humidity", "battery", "pressure", "dewPoint"),
        *("ultravioletIndex", "carbonDioxide", "airQualityIndex", "pm25", "voc", "tvoc"),
        *("soundPressureLevel", "carbonMonoxide", "heatingSetpoint", "coolingSetpoint"),
    }
)
# The name of the rule that reports mode and HSM changes (after the entry's prefix).
LOCATION_RULE: Final = "mode and HSM"
# The start of every rule's description; the rest is the fingerprint of its triggers/actions.
DESCRIPTION_PREFIX: Final = "Managed by Home Assistant (MCP Gateway); do not edit. "


@dataclass(frozen=True, slots=True)
class PushRule:
    """One rule as it must exist on the hub."""

    name: str
    triggers: tuple[Mapping[str, Any], ...]
    actions: tuple[Mapping[str, Any], ...]

    @property
    def fingerprint(self) -> str:
        """Changes whenever the rule's triggers or actions do (stored in its description)."""
        text = json.dumps([self.triggers, self.actions], sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    @property
    def description(self) -> str:
        return DESCRIPTION_PREFIX + self.fingerprint

    def arguments(self) -> dict[str, Any]:
        """hub_create_custom_rule's arguments (a test rule: deleting it writes no backup)."""
        return {
            "name": self.name,
            "description": self.description,
            "triggers": [dict(t) for t in self.triggers],
            "actions": [dict(a) for a in self.actions],
            "enabled": True,
            "testRule": True,
        }


def name_prefix(marker: str) -> str:
    """What the names of one entry's rules start with."""
    return f"{RULE_PREFIX} {marker} "


def is_ours(name: Any, marker: str) -> bool:
    """Whether a rule name is one of this entry's push rules."""
    return isinstance(name, str) and name.startswith(name_prefix(marker))


def plan_rules(devices: Iterable[HubitatDevice], url: str, marker: str, key: str) -> list[PushRule]:
    """The rules that report every device's changes (and mode and HSM) to `url`.

    `key` goes into every body: a call that carries it came from one of these rules.
    """
    selected = sorted(
        (device for device in devices if not device.disabled and _attributes(device)),
        key=lambda device: (len(device.id), device.id),
    )
    chunks = [
        selected[start : start + DEVICES_PER_RULE]
        for start in range(0, len(selected), DEVICES_PER_RULE)
    ]
    rules: list[PushRule] = []
    for index, chunk in enumerate(chunks, start=1):
        name = f"{name_prefix(marker)}{index}/{len(chunks)}"
        by_attribute: dict[str, list[str]] = {}
        for device in chunk:
            for attribute in _attributes(device):
                by_attribute.setdefault(attribute, []).append(device.id)
        triggers: list[Mapping[str, Any]] = [
            {"type": "device_event", "deviceIds": ids, "attribute": attribute}
            for attribute, ids in sorted(by_attribute.items())
        ]
        rules.append(PushRule(name, tuple(triggers), (_post(url, f"{index}/{len(chunks)}", key),)))
    # Mode and HSM apart: their runs do not count against the devices' rules, nor theirs.
    location = ({"type": "mode_change"}, {"type": "hsm_change"})
    rules.append(
        PushRule(f"{name_prefix(marker)}{LOCATION_RULE}", location, (_post(url, "0", key),))
    )
    return rules


def _post(url: str, rule: str, key: str) -> Mapping[str, Any]:
    """The http_request action: a fixed JSON body (the engine sends it as written)."""
    return {
        "type": "http_request",
        "url": url,
        "method": "POST",
        "contentType": "application/json",
        "body": json.dumps({"rule": rule, "key": key}),
    }


def pushed_attributes(device: HubitatDevice) -> frozenset[str]:
    """The attributes of a device whose changes its rule reports."""
    return frozenset(_attributes(device))


def _attributes(device: HubitatDevice) -> list[str]:
    return sorted(name for name in device.attributes if name not in CHATTY_ATTRIBUTES)
