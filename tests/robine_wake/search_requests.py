"""The Robine Wake clock's search requests, which tests/gateway_protocol/test_search_requests.py
collects per registered backend: a request worded as a person says it → the tools that
do it, as "<backend kind>/<tool>" ("core/<tool>" where Home Assistant's entity for the same
thing lets a core tool do it as well)."""

from __future__ import annotations

# Every row's best hit must be one of its tools.
REQUESTS: list[tuple[str, tuple[str, ...]]] = [
    ("stop the alarm, I'm awake", ("robine_wake/dismiss_session", "core/set_state")),
    ("what alarms are set", ("robine_wake/list_alarms",)),
    ("wake me up at 6:30 tomorrow", ("robine_wake/create_alarm",)),
    ("give me ten more minutes, snooze it", ("robine_wake/snooze_session", "core/set_state")),
    ("get rid of my Saturday alarm", ("robine_wake/delete_alarm",)),
    ("move my weekday alarm to 7 o'clock", ("robine_wake/update_alarm",)),
    ("which sounds can I wake up to", ("robine_wake/list_sounds",)),
    ("when would an alarm at 5:45 on weekdays go off", ("robine_wake/preview_alarm",)),
    ("make the alarm ring right now so I can hear it", ("robine_wake/trigger_alarm",)),
    ("turn off the alarm that is ringing", ("robine_wake/dismiss_session", "core/set_state")),
]

# Worded apart from REQUESTS and never used to tune the ranking (a share of rows must hold).
EVERYDAY: list[tuple[str, tuple[str, ...]]] = [
    ("shut the alarm up", ("robine_wake/dismiss_session", "core/set_state")),
    ("I need another five minutes in bed", ("robine_wake/snooze_session", "core/set_state")),
    ("show me all my wake-up times", ("robine_wake/list_alarms",)),
    ("set an alarm for half past seven on Saturday", ("robine_wake/create_alarm",)),
    ("remove the 6:45 alarm", ("robine_wake/delete_alarm",)),
    ("change my Sunday alarm to 9", ("robine_wake/update_alarm",)),
    ("what ringtones does the clock have", ("robine_wake/list_sounds",)),
    ("play the alarm now as a test", ("robine_wake/trigger_alarm",)),
    ("when will my next alarm ring", ("robine_wake/list_alarms", "core/get_state")),
]
