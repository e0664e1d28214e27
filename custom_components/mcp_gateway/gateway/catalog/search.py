"""BM25 ranking over tool names, titles and descriptions.

The catalogs are small (a few hundred tools at most), so the index is built in memory and rebuilt
whenever the set of tools a caller may use changes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
import math
from typing import Final

from ...core.words import STOP_WORDS, split_words, stem, tokenize

# Okapi BM25's usual constants: term-frequency saturation and length normalisation.
K1: Final = 1.2
B: Final = 0.75
# A word in a tool's name says more about it than the same word in prose.
NAME_WEIGHT: Final = 3


class Intent(StrEnum):
    """What a request means to do, or what a tool does, in the four kinds people ask for."""

    READ = "read"
    CHANGE = "change"
    CREATE = "create"
    DELETE = "delete"


# The words that tell what a request wants. The first of READ or CHANGE decides ("what alarms
# are set" is a question, "set an alarm" a change); a CREATE or DELETE word anywhere in a
# request that is not a question makes it that ("make a new scene", "get rid of the alarm").
_INTENT_WORDS: Final[dict[Intent, frozenset[str]]] = {
    Intent.READ: frozenset(
        {
            *("what", "which", "who", "when", "where", "why", "how", "is", "are", "was"),
            *("were", "did", "does", "do", "has", "have", "show", "list", "tell", "check"),
            *("see", "find", "get", "any", "whether", "read", "view", "look"),
        }
    ),
    Intent.CHANGE: frozenset(
        {
            *("turn", "switch", "set", "change", "run", "start", "stop", "arm", "disarm"),
            *("lock", "unlock", "open", "close", "dim", "brighten", "pause", "resume", "move"),
            *("rename", "restart", "reboot", "snooze", "dismiss", "activate", "trigger"),
            *("play", "make", "put", "update", "edit", "modify", "enable", "disable", "mute"),
            *("raise", "lower", "execute", "fire", "launch", "end", "silence", "shut"),
        }
    ),
    Intent.CREATE: frozenset({"create", "add", "new", "schedule", "backup", "install"}),
    Intent.DELETE: frozenset({"delete", "remove", "erase", "cancel", "forget", "uninstall"}),
}

# The verbs tool names start with: a tool named for the action asked ("stop" → dismiss_session,
# "run" → hub_call_rule) is the one that does it.
ACTIONS: Final = frozenset(
    {
        *(word for words in _INTENT_WORDS.values() for word in words),
        *("dismiss", "snooze", "trigger", "call", "preview", "manage", "query", "clone"),
        *("import", "export", "test"),
    }
)

# Everyday phrases, rewritten before anything else: two words that mean one thing.
PHRASES: Final[dict[tuple[str, str], tuple[str, ...]]] = {
    ("back", "up"): ("create", "backup"),
    ("get", "rid"): ("delete",),
    ("wake", "me"): ("create", "alarm"),
    ("check", "in"): ("stale",),
    ("checked", "in"): ("stale",),
    ("go", "off"): ("ring",),
    ("went", "off"): ("ring",),
    ("shut", "up"): ("stop",),
    ("half", "past"): (),
    ("quarter", "past"): (),
    ("wake", "up"): ("alarm",),
    ("more", "minutes"): ("snooze",),
    ("turn", "off"): ("turn", "off"),
    ("switch", "off"): ("switch", "off"),
}

# Verbs whose particle may come after their object, at most this many words later.
_VERBS: Final = frozenset({"shut", "turn", "switch", "back"})
PARTICLE_GAP: Final = 3

# How people ask vs how tools are named: a query word also finds its usual tool words, at
# half weight so a literal match still ranks first.
SYNONYMS: Final[dict[str, tuple[str, ...]]] = {
    "set": ("create", "update", "change"),
    "add": ("create",),
    "new": ("create",),
    "make": ("create",),
    "edit": ("update", "change"),
    "modify": ("update", "change"),
    "remove": ("delete",),
    "turn": ("command", "state"),
    "switch": ("command", "state"),
    "control": ("command", "state"),
    "status": ("state", "get"),
    "show": ("get", "list"),
    "find": ("get", "list", "search"),
    "log": ("event", "history"),
    "past": ("history",),
    "offline": ("unavailable", "available", "health"),
    "online": ("available", "health"),
    "unreachable": ("unavailable", "available", "health"),
    "happened": ("history", "event"),
    "last": ("history",),
    "hour": ("history",),
    "yesterday": ("history",),
    "temperature": ("state",),
    "wake": ("alarm",),
    "stop": ("dismiss", "end", "cancel"),
    "off": ("dismiss", "end"),
    "ringing": ("ring", "session"),
    "awake": ("dismiss", "end"),
    "cancel": ("delete", "remove"),
    "delete": ("remove",),
    "run": ("call", "trigger", "execute"),
    "execute": ("call", "run"),
    "trigger": ("call", "run"),
    "arm": ("hsm", "security"),
    "armed": ("arm", "hsm"),
    "disarm": ("hsm", "arm"),
    "security": ("hsm", "safety"),
    "restart": ("reboot",),
    "reboot": ("restart",),
    "move": ("update", "change"),
    "rename": ("update",),
    "house": ("location", "home"),
    "home": ("location",),
    "pause": ("paused",),
    "lately": ("recent", "stale"),
    "connected": ("backend", "available"),
    "integration": ("backend",),
    "morning": ("event", "history"),
    "today": ("event", "history"),
    "busy": ("metric", "cpu", "performance"),
    "sound": ("audio",),
    "another": ("snooze",),
    "memory": ("metric",),
    "next": ("occurrence",),
    "window": ("state",),
    "room": ("area",),
    "using": ("metric",),
}
# A question about several things asks for a listing; one in the past tense, for history.
LISTING: Final = ("list",)
HISTORY: Final = ("history", "event")
_PAST: Final = frozenset(
    {"did", "was", "were", "been", "happened", "changed", "ago", "earlier", "yesterday"}
)
# The first synonym is the usual meaning ("set an alarm" creates one), later ones weigh less.
SYNONYM_WEIGHT: Final = 0.5
SYNONYM_DECAY: Final = 0.5


def _rewrite(words: list[str]) -> list[str]:
    """The request's words with everyday phrases replaced by what they mean."""
    words = _join_particles(words)
    out: list[str] = []
    index = 0
    while index < len(words):
        pair = (words[index], words[index + 1] if index + 1 < len(words) else "")
        if (meaning := PHRASES.get(pair)) is not None:
            out.extend(meaning)
            index += 2
        else:
            out.append(words[index])
            index += 1
    return out


def _join_particles(words: list[str]) -> list[str]:
    """A verb's particle said after its object ("shut the alarm up") moved next to it."""
    words = list(words)
    for index, word in enumerate(words):
        for gap in range(2, PARTICLE_GAP + 2):
            end = index + gap
            if end < len(words) and (word, words[end]) in PHRASES and word in _VERBS:
                words.insert(index + 1, words.pop(end))
                break
    return words


def request_intent(words: list[str]) -> Intent | None:
    """What a request (already rewritten) means to do; None when nothing says it."""
    first: Intent | None = None
    for word in words:
        if word in _INTENT_WORDS[Intent.READ] or word in _INTENT_WORDS[Intent.CHANGE]:
            first = Intent.READ if word in _INTENT_WORDS[Intent.READ] else Intent.CHANGE
            break
    if first is Intent.READ:
        return first
    for intent in (Intent.DELETE, Intent.CREATE):
        if any(word in _INTENT_WORDS[intent] for word in words):
            return intent
    return first


@dataclass(frozen=True, slots=True)
class Request:
    """A search request, read: its terms (stemmed, stop words gone) and what it means to do."""

    terms: list[str]
    intent: Intent | None
    # A question about many things ("what alarms are set") asks for a listing.
    plural: bool
    # A question about the past ("what did the door do") asks for history.
    past: bool = False

    def actions(self) -> frozenset[str]:
        """The verbs asked for, said or meant: "stop" also asks to dismiss."""
        asked = {term for term in self.terms if term in ACTIONS}
        for term, synonyms in self.expanded():
            asked.update(word for word in synonyms if word in ACTIONS)
            if term in ACTIONS:
                asked.add(term)
        if self.intent is Intent.READ and self.plural:
            # "show the rooms" lists them; a tool that gets one is not what was asked.
            asked.discard("get")
            asked.update(LISTING)
        return frozenset(asked)

    def expanded(self) -> list[tuple[str, tuple[str, ...]]]:
        """Each term with the tool words it also finds; "" stands for the request's form."""
        expanded: list[tuple[str, tuple[str, ...]]] = []
        for term in self.terms:
            # In a question, a verb of change is not asked for: "what alarms are set" lists.
            asks = self.intent is not Intent.READ or not _writes(term)
            synonyms = SYNONYMS.get(term, ()) if asks else ()
            if self.intent is Intent.READ and self.plural:
                # Many things asked for are listed, not got one by one ("show the rooms").
                synonyms = tuple(word for word in synonyms if word != "get")
            expanded.append((term, synonyms))
        if self.intent is Intent.READ and self.plural:
            expanded.append(("", LISTING))
        if self.intent is Intent.READ and self.past:
            expanded.append(("", HISTORY))
        return expanded

    @classmethod
    def parse(cls, text: str) -> Request:
        """The request as the index reads it."""
        words = _rewrite(split_words(text))
        intent = request_intent(words)
        kept = [word for word in words if word not in STOP_WORDS]
        terms = [stem(word) for word in kept]
        plural = any(term != word for term, word in zip(terms, kept, strict=True))
        return cls(terms, intent, plural, past=bool(_PAST.intersection(words)))


@dataclass(frozen=True, slots=True)
class SearchDocument:
    """One searchable tool; `key` is whatever the caller needs to find it again."""

    key: str
    name: str
    title: str
    description: str


@dataclass(frozen=True, slots=True)
class SearchHit:
    """A ranked match."""

    key: str
    score: float


class Bm25Index:
    """An immutable BM25 index over a list of documents."""

    def __init__(self, documents: Iterable[SearchDocument]) -> None:
        self._keys: list[str] = []
        self._freqs: list[Counter[str]] = []
        self._lengths: list[int] = []
        doc_freq: Counter[str] = Counter()
        for doc in documents:
            terms = tokenize(doc.name) * NAME_WEIGHT + tokenize(doc.title)
            terms += tokenize(doc.description)
            freq = Counter(terms)
            self._keys.append(doc.key)
            self._freqs.append(freq)
            self._lengths.append(len(terms))
            doc_freq.update(freq.keys())
        count = len(self._keys)
        self._avg_length = (sum(self._lengths) / count) if count else 0.0
        # The "plus one" IDF variant stays positive for terms found in most documents.
        self._idf = {
            term: math.log(1 + (count - df + 0.5) / (df + 0.5)) for term, df in doc_freq.items()
        }

    def __len__(self) -> int:
        return len(self._keys)

    def search(self, query: str | Request, limit: int = 10) -> list[SearchHit]:
        """The best `limit` documents for the query, best first; ties keep index order."""
        request = query if isinstance(query, Request) else Request.parse(query)
        # term → (weight, idf). A synonym stands in for the word asked, so it weighs as rare as
        # that word: "set" → "create" must not sink because dozens of tools create something.
        weights: dict[str, tuple[float, float]] = {}
        rarest = max(self._idf.values(), default=0.0)
        for term, synonyms in request.expanded():
            if term in self._idf:
                weights[term] = (1.0, self._idf[term])
            for rank, synonym in enumerate(synonyms):
                if synonym in self._idf and synonym not in weights:
                    # A signal of the request's form (no word of its own) weighs as its word.
                    own = self._idf.get(term, rarest) if term else 0.0
                    idf = max(own, self._idf[synonym])
                    weights[synonym] = (SYNONYM_WEIGHT * SYNONYM_DECAY**rank, idf)
        if not weights or limit <= 0:
            return []
        scored: list[tuple[float, int]] = []
        for index, freq in enumerate(self._freqs):
            score = 0.0
            norm = K1 * (1 - B + B * self._lengths[index] / (self._avg_length or 1.0))
            for term, (weight, idf) in weights.items():
                tf = freq.get(term)
                if tf:
                    score += weight * idf * tf * (K1 + 1) / (tf + norm)
            if score > 0:
                scored.append((score, index))
        scored.sort(key=lambda item: (-item[0], item[1]))
        return [SearchHit(self._keys[index], score) for score, index in scored[:limit]]


def _writes(term: str) -> bool:
    return any(term in _INTENT_WORDS[intent] for intent in Intent if intent is not Intent.READ)
