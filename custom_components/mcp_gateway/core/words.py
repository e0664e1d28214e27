"""Words of names and requests, as the gateway compares them: lowercase, separators and
camelCase split, plurals and accents folded, filler words dropped."""

from __future__ import annotations

import re
from typing import Final
import unicodedata

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_WORD = re.compile(r"[a-z0-9]+")
# Words that match nearly every description and only dilute the ranking.
STOP_WORDS: Final = frozenset(
    {
        *("a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "in", "is", "it"),
        *("of", "on", "or", "the", "this", "to", "with"),
        # The words of a question or a wish: they say what kind of tool is asked for (see
        # `request_intent`), never which one.
        *("what", "which", "who", "do", "does", "did", "can", "could", "would", "i", "me"),
        *("my", "you", "your", "please", "so", "that", "there", "some", "any", "was", "were"),
        *("have", "has", "had", "been", "t", "s", "m", "up", "ll", "re", "ve", "d", "all"),
        *("every", "called", "named", "will", "now", "much"),
        # Numbers are an alarm's time or a level, never what a tool is named for.
        *("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"),
    }
)


def tokenize(text: str) -> list[str]:
    """Lowercase words; snake_case, kebab-case and camelCase split into their parts."""
    return [stem(word) for word in split_words(text) if word not in STOP_WORDS]


def split_words(text: str) -> list[str]:
    return _WORD.findall(_CAMEL.sub(" ", text).lower())


def stem(word: str) -> str:
    """A light plural fold ("devices" ~ "device") so queries need not match number."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def words(text: str) -> list[str]:
    """Lowercase words, separators and camelCase split, plurals and accents folded
    ("Café" is "cafe", "Rob's Flat" is "rob's_flat")."""
    return tokenize(unaccented(text))


def unaccented(text: str) -> str:
    if text.isascii():
        return text
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
