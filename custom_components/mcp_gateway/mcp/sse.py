"""Incremental decoder for Server-Sent Events (the WHATWG event-stream format).

Written against bytes arriving in arbitrary chunks: a line may be split anywhere, including
between the CR and LF of a CRLF. aiohttp's own line reader refuses lines above 128 KiB, and a
single `data:` line carrying a large `tools/list` result easily exceeds that, hence our own.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass
import re

_LINE_END = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True, slots=True)
class SseEvent:
    """One dispatched event: its type, its data and the last event id in effect."""

    event: str
    data: str
    id: str | None


class SseDecoder:
    """Feed bytes, get events. Keeps `last_event_id` and `retry` (ms) as the stream sets them."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._pending = ""
        self._data: list[str] = []
        self._event = ""
        self._bom_checked = False
        self.last_event_id: str | None = None
        self.retry: int | None = None

    def feed(self, chunk: bytes) -> list[SseEvent]:
        """Decode a chunk and return the events it completes (possibly none)."""
        text = self._pending + self._decoder.decode(chunk)
        if not self._bom_checked and text:
            self._bom_checked = True
            text = text.removeprefix("\ufeff")
        events: list[SseEvent] = []
        start = 0
        for match in _LINE_END.finditer(text):
            # A CR at the very end may be the first half of a CRLF still in flight.
            if match.group() == "\r" and match.end() == len(text):
                break
            event = self._line(text[start : match.start()])
            if event is not None:
                events.append(event)
            start = match.end()
        self._pending = text[start:]
        return events

    def _line(self, line: str) -> SseEvent | None:
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            return None  # a comment, used by servers as keep-alive
        name, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\0" not in value:
                self.last_event_id = value or None
        elif name == "retry" and value.isascii() and value.isdigit():
            self.retry = int(value)
        return None

    def _dispatch(self) -> SseEvent | None:
        data = "\n".join(self._data)
        event = self._event or "message"
        self._data = []
        self._event = ""
        if not data:
            # Priming events carry only an id (and maybe retry); nothing to hand over.
            return None
        return SseEvent(event=event, data=data, id=self.last_event_id)
