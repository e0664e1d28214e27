"""Stale marks: an entity whose device its backend has not heard from for longer than the
device's kind goes may show a value that is no longer true. get_state marks its state so,
get_history its history; each entity's key and silence are kept between reads."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta, tzinfo
import functools
from typing import Any, Final
import weakref

from homeassistant.const import Platform
from homeassistant.core import HomeAssistant
from homeassistant.util import dt as dt_util
from homeassistant.util.hass_dict import HassKey

from ...core.const import DOMAIN
from ...core.localtime import local_iso
from ...framework.base import BackendRuntime, Silence
from ..finding.selection import EntityRef, spec_key
from .state_items import MAX_KEPT_ENTITIES


class _SilenceCache:
    """What reads keep of each entity, by entity id: its key in its backend and its
    silence there."""

    def __init__(self) -> None:
        self.keys: dict[str, _SpecKey] = {}
        self.silences: dict[str, _KeptSilence] = {}


DATA_SILENCES: Final[HassKey[_SilenceCache]] = HassKey(f"{DOMAIN}_silences")


def _silence_cache(hass: HomeAssistant) -> _SilenceCache:
    if (cache := hass.data.get(DATA_SILENCES)) is None:
        cache = hass.data[DATA_SILENCES] = _SilenceCache()
    return cache


class Heard:
    """Which entities' devices are silent, for one page: each backend's runtime found once per
    page, each entity's key in it once per registry change (`keys`, kept across reads), and
    its silence once per backend data and until the clock may change it (`silences`)."""

    def __init__(self, hass: HomeAssistant, now: datetime, tz: tzinfo) -> None:
        self.hass = hass
        self.now = now
        self.tz = tz
        cache = _silence_cache(hass)
        self._keys = cache.keys
        self._silences = cache.silences
        self._runtimes: dict[str, tuple[BackendRuntime | None, object | None]] = {}

    def silence(self, ref: EntityRef) -> Silence | None:
        """The entity's device silent for longer than its kind goes (None: not, or unknown)."""
        entry_id = ref.backend.entry.entry_id
        if (seen := self._runtimes.get(entry_id)) is None:
            found_runtime = ref.backend.runtime
            epoch = found_runtime.silence_epoch() if found_runtime is not None else None
            seen = self._runtimes[entry_id] = (found_runtime, epoch)
        runtime, epoch = seen
        if runtime is None:
            return None
        known = self._keys.get(ref.entity_id)
        if known is None or known[0]() is not runtime or known[1] != ref.unique_id:
            if len(self._keys) >= MAX_KEPT_ENTITIES:
                self._keys.clear()  # entities removed or renamed long ago: start afresh
                self._silences.clear()
            known = self._keys[ref.entity_id] = (
                weakref.ref(runtime),
                ref.unique_id,
                spec_key(self.hass, runtime, ref),
            )
        found = known[2]
        if found is None:
            return None
        if epoch is None:
            return runtime.silence(*found, self.now)
        kept = self._silences.get(ref.entity_id)
        if (
            kept is not None
            and kept[0] is epoch
            and kept[1] is found
            and (kept[3] is None or self.now <= kept[3])
        ):
            return kept[2]
        silence, until = runtime.silence_until(*found, self.now)
        self._silences[ref.entity_id] = (epoch, found, silence, until)
        return silence


# An entity's key in its backend, as found for a runtime (weakly: a removed entry's runtime
# is not kept alive by it) and unique id.
_SpecKey = tuple[weakref.ref[BackendRuntime], str, tuple[Platform, str] | None]
# An entity's silence as its backend said it: for that data (the epoch) and key, until when
# the clock alone may change it (None: it cannot).
_KeptSilence = tuple[object, tuple[Platform, str], Silence | None, datetime | None]


def mark_stale(
    heard: Heard, ref: EntityRef, item: dict[str, Any], *, history: bool = False
) -> None:
    """A device silent for longer than its kind normally goes (its backend says) may show a
    value that is no longer true: say since when, and that reading again gives nothing newer."""
    if (silence := heard.silence(ref)) is None:
        return
    item["stale"] = dict(_stale_mark(silence, heard.tz, history))


def history_stale_marker(hass: HomeAssistant) -> Callable[[EntityRef, dict[str, Any]], None]:
    """Marks a history answer's entity whose device is silent as get_state marks its state:
    no change from a device nobody hears from is not "nothing happened"."""
    heard = Heard(hass, dt_util.utcnow(), dt_util.get_default_time_zone())
    return functools.partial(mark_stale, heard, history=True)


@functools.lru_cache(maxsize=4096)
def _stale_mark(silence: Silence, tz: tzinfo, history: bool = False) -> dict[str, Any]:
    # A silent device's mark is the same read after read: made once, copied per answer.
    if silence.since is None:
        note = (
            "its backend has never heard from the device: no change here is unknown, "
            "not nothing happened"
            if history
            else "its backend has never heard from the device: this value is no reading"
        )
    else:
        usual = f" (its kind checks in within {_span(silence.usual)})" if silence.usual else ""
        held = "no change after that is unknown" if history else "its backend holds nothing newer"
        note = f"no word from the device since then{usual}; {held}"
    return {
        "since": local_iso(silence.since, tz) if silence.since is not None else None,
        "note": note,
    }


def _span(span: timedelta) -> str:
    hours = span.total_seconds() / 3600
    return f"{hours / 24:g} days" if hours >= 48 and hours % 24 == 0 else f"{hours:g} h"
