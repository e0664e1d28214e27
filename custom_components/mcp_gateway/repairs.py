"""Fix flows of the integration's repair issues: Approve or Decline a call waiting for a person.

HA finds this platform by its name. An approval's issue (gateway/approval/channels.py) opens a
menu; the answer counts for the user signed in to the page that sent it (the flow runs inside
that HTTP request), and only if the approval core lets that user decide it. A long-lived
access token is what an AI app is usually given, and an OAuth sign-in that has called the
gateway is the AI app's own: an answer sent with either does not count
(gateway/approval/phones.py).
"""

from __future__ import annotations

from typing import Any

from homeassistant.components.repairs import ConfirmRepairFlow, RepairsFlow
from homeassistant.core import HomeAssistant

try:
    from homeassistant.components.repairs import (  # type: ignore[attr-defined, unused-ignore]
        RepairsFlowResult as FixFlowResult,
    )
except ImportError:  # HA before repairs flows had their own result type (2025.4)
    from homeassistant.data_entry_flow import (  # type: ignore[assignment, unused-ignore]
        FlowResult as FixFlowResult,
    )

from .gateway.approval.channels import ISSUE_PREFIX, placeholders
from .gateway.approval.manager import Channel, approval_manager
from .gateway.approval.phones import signed_in_person


class ApprovalFlow(RepairsFlow):
    """Approve or decline one waiting call."""

    def __init__(self, approval_id: str) -> None:
        self.approval_id = approval_id

    async def async_step_init(self, user_input: dict[str, str] | None = None) -> FixFlowResult:
        """What waits, who asked, through which client, until when."""
        pending = approval_manager(self.hass).get(self.approval_id)
        if pending is None or not pending.open:
            return self.async_abort(reason="approval_ended")
        return self.async_show_menu(
            step_id="init",
            menu_options=["approve", "decline"],
            description_placeholders=placeholders(pending),
        )

    async def async_step_approve(self, user_input: dict[str, str] | None = None) -> FixFlowResult:
        """Let the call run once."""
        return await self._decide(True)

    async def async_step_decline(self, user_input: dict[str, str] | None = None) -> FixFlowResult:
        """Refuse the call: nothing runs."""
        return await self._decide(False)

    async def _decide(self, approved: bool) -> FixFlowResult:
        manager = approval_manager(self.hass)
        pending = manager.get(self.approval_id)
        if pending is None or not pending.open:
            return self.async_abort(reason="approval_ended")
        person = signed_in_person(self.hass)
        if person is None or not await manager.async_decide(
            self.approval_id, approved, user_id=person.id, channel=Channel.UI
        ):
            return self.async_abort(reason="approval_not_allowed")
        # An abort, not an entry: the frontend ends a created entry with its fixed "The issue
        # is repaired!", while an abort's text is ours and says what the answer did.
        if approved:
            return self.async_abort(
                reason="approved", description_placeholders=placeholders(pending)
            )
        return self.async_abort(reason="declined", description_placeholders=placeholders(pending))


async def async_create_fix_flow(
    hass: HomeAssistant, issue_id: str, data: dict[str, Any] | None
) -> RepairsFlow:
    """The flow of one of the integration's fixable issues."""
    if issue_id.startswith(ISSUE_PREFIX) and data and isinstance(data.get("approval_id"), str):
        return ApprovalFlow(data["approval_id"])
    return ConfirmRepairFlow()
