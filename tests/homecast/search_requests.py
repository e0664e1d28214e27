"""The Homecast account's search requests, which tests/gateway_protocol/test_search_requests.py
collects per registered backend: a request worded as a person says it → the tools that
do it, as "<backend kind>/<tool>" ("core/<tool>" where Home Assistant's entity for the same
thing lets a core tool do it as well)."""

from __future__ import annotations

# Every row's best hit must be one of its tools.
REQUESTS: list[tuple[str, tuple[str, ...]]] = [
    ("run the movie night scene at Rob's Flat", ("homecast/run_scene",)),
    ("make a new scene called Dinner", ("homecast/create_scene",)),
    ("delete the Party scene", ("homecast/delete_scene",)),
    ("what HomeKit automations are set up", ("homecast/get_automations",)),
    ("rename the Evening scene to Late Evening", ("homecast/update_scene",)),
]

# Worded apart from REQUESTS and never used to tune the ranking (a share of rows must hold).
EVERYDAY: list[tuple[str, tuple[str, ...]]] = [
    ("start the Good Morning scene at George Street", ("homecast/run_scene", "core/set_state")),
    ("save the current lights as a scene named Reading", ("homecast/create_scene",)),
    ("remove the Porch at sunset scene", ("homecast/delete_scene",)),
    ("list the HomeKit automations at Rob's Flat", ("homecast/get_automations",)),
    (
        "add a HomeKit automation that turns the porch light on at sunset",
        ("homecast/create_automation", "homecast/create_hc_automation"),
    ),
]
