"""BM25 ranking over tool names, titles and descriptions.

The catalogs are small (a few hundred tools at most), so the index is built in memory and rebuilt
whenever the set of tools a caller may use changes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
import math
import re
from typing import Final

# Okapi BM25's usual constants: term-frequency saturation and length normalisation.
K1: Final = 1.2
B: Final = 0.75
# A word in a tool's name says more about it than the same word in prose.
NAME_WEIGHT: Final = 3

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_WORD = re.compile(r"[a-z0-9]+")
# Words that match nearly every description and only dilute the ranking.
_STOP: Final = frozenset(
    {
        *("a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "in", "is", "it"),
        *("of", "on", "or", "the", "this", "to", "with"),
    }
)


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
}
# The first synonym is the usual meaning ("set an alarm" creates one), later ones weigh less.
SYNONYM_WEIGHT: Final = 0.5
SYNONYM_DECAY: Final = 0.5


def tokenize(text: str) -> list[str]:
    """Lowercase words; snake_case, kebab-case and camelCase split into their parts."""
    words = _WORD.findall(_CAMEL.sub(" ", text).lower())
    return [_stem(word) for word in words if word not in _STOP]


def _stem(word: str) -> str:
    """A light plural fold ("devices" ~ "device") so queries need not match number."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


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

    def search(self, query: str, limit: int = 10) -> list[SearchHit]:
        """The best `limit` documents for the query, best first; ties keep index order."""
        # term → (weight, idf). A synonym stands in for the word asked, so it weighs as rare as
        # that word: "set" → "create" must not sink because dozens of tools create something.
        weights: dict[str, tuple[float, float]] = {}
        rarest = max(self._idf.values(), default=0.0)
        for term in tokenize(query):
            if term in self._idf:
                weights[term] = (1.0, self._idf[term])
            for rank, synonym in enumerate(SYNONYMS.get(term, ())):
                if synonym in self._idf and synonym not in weights:
                    idf = max(self._idf.get(term, rarest), self._idf[synonym])
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
