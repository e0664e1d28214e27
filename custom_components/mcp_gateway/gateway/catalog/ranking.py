"""Which tools answer a request best: BM25's hits weighed by what the request means to do
(read, change, create, delete) against each tool's kind, tier and destructiveness, and the
one-sentence line a search shows of each."""

from __future__ import annotations

from collections.abc import Mapping
import re
from typing import TYPE_CHECKING, Any, Final

from ...core.words import tokenize
from ...framework.base import ToolTier
from .search import Intent, Request

if TYPE_CHECKING:
    from .search import Bm25Index
    from .store import BackendTool, CoreTool

# A search line says what the tool does in about one sentence.
ABOUT_CHARS: Final = 160
# Plain requests rarely mean administration: admin tools rank a little lower, so "reboot the
# hub" still finds hub_reboot but "set an alarm" does not find an admin tool.
TIER_WEIGHT: Final[Mapping[ToolTier, float]] = {
    ToolTier.READ: 1.0,
    ToolTier.CONTROL: 1.0,
    ToolTier.ADMIN: 0.8,
}
# A tool the gateway guards with confirm ranks well below what was asked, unless deleting is
# what was asked; one the backend merely hints may destroy (a mode or an alarm replaced)
# ranks a little lower.
DESTRUCTIVE_WEIGHT: Final = 0.5
DESTRUCTIVE_HINT_WEIGHT: Final = 0.9
# How well a tool's kind fits what the request means to do: (request, tool) → weight.
# A question wants a read; a change may create (setting an alarm stores one) but rarely
# deletes; a request to create or delete wants exactly that.
INTENT_FIT: Final[Mapping[Intent, Mapping[Intent, float]]] = {
    Intent.READ: {Intent.READ: 1.0, Intent.CHANGE: 0.5, Intent.CREATE: 0.5, Intent.DELETE: 0.4},
    Intent.CHANGE: {Intent.READ: 0.5, Intent.CHANGE: 1.0, Intent.CREATE: 0.9, Intent.DELETE: 0.4},
    Intent.CREATE: {Intent.READ: 0.5, Intent.CHANGE: 0.7, Intent.CREATE: 1.0, Intent.DELETE: 0.3},
    Intent.DELETE: {Intent.READ: 0.5, Intent.CHANGE: 0.7, Intent.CREATE: 0.3, Intent.DELETE: 1.0},
}
# The core tools work over every backend with HA's permissions: where a backend's own tool
# does the same, the core one comes first.
CORE_WEIGHT: Final = 1.2
# A tool of several actions (an `action` argument) answers a question a little less well
# than one that only reads.
SEVERAL_ACTIONS_READ_WEIGHT: Final = 0.85
# A tool named for the very action asked for ("stop" → dismiss_session) is preferred.
ACTION_WEIGHT: Final = 1.25
_CREATES: Final = frozenset({"create", "add", "new", "import", "clone", "install"})
# A core tool with an `action` argument does each of its actions: what they mean, besides
# their own word, to a request ("save" creates and updates, "explain" reads).
_ACTION_MEANS: Final[Mapping[str, tuple[str, ...]]] = {
    "save": ("create", "update"),
    "explain": ("get",),
}
_DELETES: Final = frozenset({"delete", "remove", "uninstall", "erase"})
_READS: Final = frozenset({"list", "get", "read", "show", "search", "find"})

_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


def first_line(text: str) -> str:
    """The first sentence of a description (or its first ABOUT_CHARS characters)."""
    line = text.strip().split("\n", 1)[0].strip()
    if len(line) > ABOUT_CHARS and (cut := _SENTENCE_END.search(line)) is not None:
        line = line[: cut.start()]
    if len(line) > ABOUT_CHARS:
        line = line[: ABOUT_CHARS - 1].rstrip() + "…"
    return line


def core_actions(tool: CoreTool) -> frozenset[str]:
    """The words of a core tool's `action` enum, with what each means besides itself."""
    schema = tool.input_schema.get("properties", {}).get("action")
    values = schema.get("enum") if isinstance(schema, Mapping) else None
    if not isinstance(values, list):
        return frozenset()
    words = {
        word
        for value in values
        if isinstance(value, str)
        for word in (value, *_ACTION_MEANS.get(value, ()))
    }
    return frozenset(term for word in words for term in tokenize(word))


def _action_intent(word: str) -> Intent:
    if word in _READS:
        return Intent.READ
    return tool_intent(word, None, ToolTier.CONTROL)


def tool_intent(name: str, annotations: Any, tier: ToolTier) -> Intent:
    """What a tool does, from its own read-only hint (else its tier) and its name's verb."""
    read_only = annotations.get("readOnlyHint") if isinstance(annotations, Mapping) else None
    if read_only is True or (read_only is None and tier is ToolTier.READ):
        return Intent.READ
    words = set(tokenize(name))
    if words & _DELETES:
        return Intent.DELETE
    if words & _CREATES:
        return Intent.CREATE
    return Intent.CHANGE


def rank_hits(
    index: Bm25Index,
    refs: Mapping[str, tuple[str | None, str]],
    subs: Mapping[tuple[str, str], BackendTool],
    query: str,
    limit: int,
    *,
    core: Mapping[str, CoreTool],
) -> list[tuple[str | None, str]]:
    """The best `limit` tools for the query: BM25, weighed by what the request means to do.

    The request's intent (read, change, create, delete) against each tool's kind, the tool's
    tier and how destructive it is reorder BM25's candidates; text decides among equals.
    """
    request = Request.parse(query)
    asked = request.actions()
    # What the request says, each word in its usual meaning ("set" → create).
    meant = set(request.terms) | {synonyms[0] for _, synonyms in request.expanded() if synonyms}
    weighed: list[tuple[float, int, tuple[str | None, str]]] = []
    for order, hit in enumerate(index.search(request, max(limit * 4, 20))):
        gateway, name = refs[hit.key]
        actions: frozenset[str] = frozenset()
        if gateway is None:
            if (tool := core.get(name)) is None:
                continue
            kind = Intent.READ if tool.read_only else tool_intent(name, None, ToolTier.CONTROL)
            if actions := core_actions(tool):
                # The action that fits the request best is the one it would call.
                kind = max(
                    {_action_intent(action) for action in actions},
                    key=lambda intent: INTENT_FIT[request.intent or Intent.CHANGE][intent],
                )
            weight = CORE_WEIGHT
            destructive, hinted = tool.destructive, tool.destructive
        elif (sub := subs.get((gateway, name))) is not None:
            annotations = sub.definition.get("annotations")
            kind = tool_intent(name, annotations, sub.tool_class.tier)
            # Creating or deleting things is what administration does: no discount then.
            plain = request.intent not in (Intent.CREATE, Intent.DELETE)
            weight = TIER_WEIGHT.get(sub.tool_class.tier, 1.0) if plain else 1.0
            destructive = sub.tool_class.destructive
            hinted = isinstance(annotations, Mapping) and annotations.get("destructiveHint") is True
        else:
            continue
        if request.intent is not None:
            weight *= INTENT_FIT[request.intent][kind]
            if actions and request.intent is Intent.READ:
                # A question is best answered by a tool that only reads.
                weight *= SEVERAL_ACTIONS_READ_WEIGHT
        named = set(tokenize(name))
        # An action of a tool's `action` argument counts as its name's verb where the request
        # creates or deletes: a listing it also offers is no reason to put it first.
        if request.intent not in (Intent.CREATE, Intent.DELETE):
            actions = frozenset()
        if asked and asked & (named | actions):
            weight *= ACTION_WEIGHT
        # A tool named, word for word, for what was asked ("back up the hub" →
        # hub_create_backup) is what the user wants, guarded or not.
        exact = named <= meant
        if request.intent is not Intent.DELETE and not exact:
            if destructive:
                weight *= DESTRUCTIVE_WEIGHT
            elif hinted:
                weight *= DESTRUCTIVE_HINT_WEIGHT
        weighed.append((hit.score * weight, order, (gateway, name)))
    weighed.sort(key=lambda item: (-item[0], item[1]))
    return [ref for _, _, ref in weighed[:limit]]
