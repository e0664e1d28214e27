"""The AI app's own prompt for an approval (MCP elicitation), for its person to answer."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from enum import StrEnum
from typing import TYPE_CHECKING, Final

from homeassistant.util import dt as dt_util

from ...mcp.elicitation import ElicitationUnsupportedError
from ...mcp.types import ElicitRequestedSchema
from . import texts

if TYPE_CHECKING:
    from ...mcp.server import RequestContext
    from .manager import Pending

# The client's prompt for one approval: True approve, False decline, None no answer.
type ClientPrompt = Callable[[Pending], Awaitable[bool | None]]


APPROVE_SCHEMA: Final[ElicitRequestedSchema] = {
    "type": "object",
    "properties": {
        "approve": {
            "type": "boolean",
            "title": "Approve",
            "description": "Allow this action to run once.",
            "default": False,
        }
    },
    "required": ["approve"],
}


def prompt_message(pending: Pending) -> str:
    """What the person at the AI app is asked."""
    seconds = max(0, int((pending.deadline - dt_util.utcnow()).total_seconds()))
    return texts.prompt_message(
        pending.summary, pending.user_name, pending.client_name, seconds, pending.details
    )


class ClientAnswer(StrEnum):
    """What the person at the AI app answered, if anything."""

    ACCEPT = "accept"  # approved: the form accepted with the box ticked
    DECLINE = "decline"  # refused, or the form sent without the box ticked
    CANCEL = "cancel"  # dismissed, or no answer within the time limit
    UNSUPPORTED = "unsupported"  # the client cannot show the question: other channels


async def async_ask_in_client(
    ctx: RequestContext,
    message: str,
    *,
    timeout: float,  # noqa: ASYNC109 - the approval's remaining time
) -> ClientAnswer:
    """Ask the person at the AI app (MCP elicitation), in whichever protocol era the call
    came: the client shows `message` and an Approve box, the person accepts or declines."""
    if ctx.elicit is None:
        return ClientAnswer.UNSUPPORTED
    try:
        result = await ctx.elicit(message, APPROVE_SCHEMA, timeout=max(timeout, 0.0))
    except ElicitationUnsupportedError:
        return ClientAnswer.UNSUPPORTED
    if result.accepted:
        # A client that sends forms back with their defaults cannot approve by itself.
        approved = result.content.get("approve") is True
        return ClientAnswer.ACCEPT if approved else ClientAnswer.DECLINE
    if result.action == "decline" and result.answered:
        return ClientAnswer.DECLINE
    return ClientAnswer.CANCEL


def client_prompt(ctx: RequestContext) -> ClientPrompt | None:
    """The client's own prompt for approvals, when it declared elicitation (else None)."""
    if ctx.elicit is None:
        return None

    async def prompt(pending: Pending) -> bool | None:
        remaining = (pending.deadline - dt_util.utcnow()).total_seconds()
        answer = await async_ask_in_client(ctx, prompt_message(pending), timeout=remaining)
        if answer is ClientAnswer.ACCEPT:
            return True
        if answer is ClientAnswer.DECLINE:
            return False
        # Dismissed, unanswered or unsupported: the phone and HA's UI may still decide.
        return None

    return prompt
