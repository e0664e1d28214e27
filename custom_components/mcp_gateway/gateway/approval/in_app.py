"""Approval in the AI app (MCP elicitation): for which requests an answer there counts.

The AI app shows the question and sends the answer back, so the app itself can answer: an
agent that handles questions with its model, a client written to tick the box. An answer in
the app therefore counts only for the requester's own call, only when the requester is an
approver like any other (the approval core checks both), and only for the categories the owner
allows in the gateway settings. By default those are destructive backend tools and what the
owner added: unlocking, disarming, opening a garage door, gate or door, and storing a rule,
automation or scene (which may do any of those later, with no one asked) are approved on a
phone or in Home Assistant, which the AI app cannot reach.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from ...core.settings import (
    CATEGORY_ALARMS,
    CATEGORY_AUTOMATIONS,
    CATEGORY_COVERS,
    CATEGORY_LOCKS,
    CATEGORY_OTHER,
    GatewaySettings,
)

_DOMAIN_CATEGORIES: Final = {
    "lock": CATEGORY_LOCKS,
    "alarm_control_panel": CATEGORY_ALARMS,
    "cover": CATEGORY_COVERS,
}
# Tools whose name says they store or run something that acts later: hub rules, Rule
# Machine, HomeKit scenes and automations, HA's own automations and scripts.
_STORED_WORDS: Final = ("rule", "automation", "scene", "script", "trigger")
# Tools whose name says they act on an alarm system (a hub's security monitor).
_ALARM_WORDS: Final = ("hsm", "alarm", "security")


def approval_categories(tool: str, entity_ids: Iterable[str]) -> frozenset[str]:
    """What a request is about: one category per entity it acts on, and what its tool's name
    says; "other" when nothing more specific applies. In the app, every one must be allowed."""
    categories = {
        _DOMAIN_CATEGORIES.get(entity_id.split(".", 1)[0], CATEGORY_OTHER)
        for entity_id in entity_ids
    }
    name = tool.lower()
    if any(word in name for word in _STORED_WORDS):
        categories.add(CATEGORY_AUTOMATIONS)
    if any(word in name for word in _ALARM_WORDS):
        categories.add(CATEGORY_ALARMS)
    return frozenset(categories or {CATEGORY_OTHER})


def in_app_allowed(settings: GatewaySettings, tool: str, entity_ids: Iterable[str]) -> bool:
    """Whether the settings allow this request to be approved in the AI app."""
    return approval_categories(tool, entity_ids) <= set(settings.in_app_approval)
