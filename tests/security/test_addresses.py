"""Backend tools that address devices: the address must be an entity the caller may use.

Homecast's set_state reaches what its home, room and accessory name (by key or display name),
and a home this entry does not follow is no entity at all. Tools that list devices are
filtered to what the caller may read.
"""

from __future__ import annotations

from typing import Any

from custom_components.mcp_gateway.backends.homecast.const import KIND as HOMECAST_KIND
from tests.homecast import sim as homecast_helpers
from tests.results import result_data

from .conftest import HOMECAST_GATEWAY, HUBITAT, SecurityHome, error_code


def _update(home: Any, room: Any, accessory: str, on: bool) -> dict[str, Any]:
    return {"home": home.slug, "room": room.slug, "accessory": accessory, "on": on}


async def _set_state(home: SecurityHome, kind: str, update: dict[str, Any]) -> str | None:
    result = await home.call(
        kind, HOMECAST_GATEWAY, {"tool": "set_state", "args": {"updates": [update]}}
    )
    return error_code(result)


async def test_set_state_in_a_home_the_entry_does_not_follow(home: SecurityHome) -> None:
    """A user allowed to control nothing cannot switch a light in another home."""
    other = home.homecast.homes[1]
    light = next(a for a in other.all_accessories() if a.kind == "light")
    room = other.room_of(light)
    before = light.values["on"]
    for kind in ("policy", "user", "read_only"):
        code = await _set_state(home, kind, _update(other, room, light.slug, not before))
        assert code == "forbidden", kind
    assert light.values["on"] is before


async def test_set_state_by_name_never_reaches_the_namesake(home: SecurityHome) -> None:
    """With two "Ceiling Light"s, a user allowed only the living-room one cannot switch the
    kitchen one by naming it."""
    followed = home.homecast.homes[0]
    hc_sim = home.sims[HOMECAST_KIND]
    living = homecast_helpers.device_of(hc_sim, "light", nth=0)
    kitchen = homecast_helpers.device_of(hc_sim, "light", nth=1)
    assert living.name == kitchen.name == "Ceiling Light"
    kitchen_room, living_room = followed.room_of(kitchen), followed.room_of(living)
    kitchen_before = kitchen.values["on"]
    # By name, in the kitchen: no key matches, so no entity stands for it.
    code = await _set_state(
        home, "policy", _update(followed, kitchen_room, "Ceiling Light", not kitchen_before)
    )
    assert code == "forbidden"
    # By the kitchen light's own keys: an entity the policy user may not control.
    code = await _set_state(
        home, "policy", _update(followed, kitchen_room, kitchen.slug, not kitchen_before)
    )
    assert code == "forbidden"
    # The living-room light in the kitchen: the accessory is not in that room.
    code = await _set_state(
        home, "policy", _update(followed, kitchen_room, living.slug, not kitchen_before)
    )
    assert code == "forbidden"
    assert kitchen.values["on"] is kitchen_before
    # Its own light, by its exact keys, it may switch.
    target = not living.values["on"]
    assert (
        await _set_state(home, "policy", _update(followed, living_room, living.slug, target))
        is None
    )
    assert living.values["on"] is target
    # An administrator may address what no entity stands for (admins reach everything).
    assert (
        await _set_state(home, "admin", _update(followed, kitchen_room, kitchen.slug, True)) is None
    )


async def test_device_lists_are_filtered_per_caller(home: SecurityHome) -> None:
    """hub_list_devices and Homecast's get_state list only what the caller may read."""
    everything = result_data(
        await home.call("admin", HUBITAT, {"tool": "hub_list_devices", "args": {"limit": 500}})
    )["devices"]
    for kind in ("user", "read_only"):
        result = await home.call(
            kind, HUBITAT, {"tool": "hub_list_devices", "args": {"limit": 500}}
        )
        assert result_data(result)["devices"] == everything, kind
    policy = result_data(
        await home.call("policy", HUBITAT, {"tool": "hub_list_devices", "args": {}})
    )
    assert policy["devices"] == []
    assert policy["_gateway"]["withheld"] >= 1
    # Homecast's get_state spans the account: the home this entry does not follow is left out
    # for everyone but administrators (no entity stands for it), the rest per entity.
    other = home.homecast.homes[1].slug
    admin = result_data(
        await home.call("admin", HOMECAST_GATEWAY, {"tool": "get_state", "args": {}})
    )
    assert other in admin
    user = result_data(await home.call("user", HOMECAST_GATEWAY, {"tool": "get_state", "args": {}}))
    assert other not in user
    assert home.homecast.homes[0].slug in user
    policy = result_data(
        await home.call("policy", HOMECAST_GATEWAY, {"tool": "get_state", "args": {}})
    )
    listed = [
        acc
        for home_key, rooms in policy.items()
        if not home_key.startswith("_")
        for room_key, accs in rooms.items()
        if not room_key.startswith("_")
        for acc in accs
    ]
    assert len(listed) == 1, policy
    # What the policy user may read, it reads through the core tools, filtered per entity.
    status, body = await home.rpc("policy", "tools/call", {"name": "get_state", "arguments": {}})
    assert status == 200
    entities = result_data(body["result"])["entities"]
    assert [entity["entity_id"] for entity in entities] == [home.policy_light]
