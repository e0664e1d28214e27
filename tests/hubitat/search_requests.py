"""The Hubitat hub's search requests, which tests/gateway_protocol/test_search_requests.py
collects per registered backend: a request worded as a person says it → the tools that
do it, as "<backend kind>/<tool>" ("core/<tool>" where Home Assistant's entity for the same
thing lets a core tool do it as well)."""

from __future__ import annotations

# Every row's best hit must be one of its tools.
REQUESTS: list[tuple[str, tuple[str, ...]]] = [
    ("back up the hub", ("hubitat/hub_create_backup",)),
    ("run the Goodnight rule", ("hubitat/hub_call_rule", "core/set_state")),
    ("arm the security system away", ("hubitat/hub_set_hsm", "core/set_state")),
    ("disarm the house alarm", ("hubitat/hub_set_hsm", "core/set_state")),
    ("is the security system armed?", ("hubitat/hub_get_hsm_status", "core/get_state")),
    ("switch the house to night mode", ("hubitat/hub_manage_mode", "core/set_state")),
    ("which mode is the house in right now", ("hubitat/hub_list_modes", "core/get_state")),
    ("what rules do I have", ("hubitat/hub_list_rules",)),
    ("pause the vacation lights rule for now", ("hubitat/hub_set_rule_paused", "core/set_state")),
    ("restart the hub", ("hubitat/hub_reboot",)),
    ("which devices haven't checked in lately", ("hubitat/hub_get_device_health",)),
    ("what rooms are there on the hub", ("hubitat/hub_list_rooms",)),
    ("what are the hub variables set to", ("hubitat/hub_list_variables",)),
    (
        "what did the front door sensor do this morning on the hub",
        ("hubitat/hub_list_device_events", "core/get_history"),
    ),
    ("how busy is the hub, memory and cpu", ("hubitat/hub_get_metrics",)),
]

# Worded apart from REQUESTS and never used to tune the ranking (a share of rows must hold).
EVERYDAY: list[tuple[str, tuple[str, ...]]] = [
    ("put the house in away mode", ("hubitat/hub_manage_mode", "core/set_state")),
    ("is the home security on", ("hubitat/hub_get_hsm_status", "core/get_state")),
    ("turn the security system off", ("hubitat/hub_set_hsm", "core/set_state")),
    ("make a backup of the hub now", ("hubitat/hub_create_backup",)),
    ("show the hub's saved backups", ("hubitat/hub_list_backups",)),
    ("what automation rules does the hub run", ("hubitat/hub_list_rules",)),
    ("fire the Morning rule", ("hubitat/hub_call_rule", "core/set_state")),
    (
        "how much memory is the hub using",
        ("hubitat/hub_get_metrics", "hubitat/hub_get_memory_history"),
    ),
    ("show me the hub's error log", ("hubitat/hub_get_logs",)),
    ("reboot the Hubitat", ("hubitat/hub_reboot",)),
    ("show the hub's rooms", ("hubitat/hub_list_rooms",)),
    ("set the hub variable AwayMode to true", ("hubitat/hub_set_variable",)),
    (
        "what changed on the back door sensor today",
        ("hubitat/hub_list_device_events", "core/get_history"),
    ),
    # Any home, where the hub's device events do it as well.
    (
        "was the garage door opened today",
        ("core/get_history", "hubitat/hub_list_device_events"),
    ),
]
