"""Refusals that point the right way: what a request matched that Home Assistant does not
expose to assistants is named as such, with the setting that changes it, to every caller who
may read it, and to no one else.

On a plain installation HA exposes no lock to assistants; the owner's first "unlock the back
door" must not read as "there is no such lock". Over real HTTP, as the owner, an ordinary
user, a read-only user and a user who may read one light only.
"""

from __future__ import annotations

import json
from typing import Any

from homeassistant.components.homeassistant.exposed_entities import (
    async_expose_entity,
    async_should_expose,
)
from homeassistant.const import ATTR_FRIENDLY_NAME
from homeassistant.helpers import entity_registry as er

from custom_components.mcp_gateway.core.const import DOMAIN
from custom_components.mcp_gateway.gateway.finding.unexposed import (
    GATEWAY_OPTION,
    NONE_AT_ALL,
    NONE_READABLE,
    SETTING,
)
from tests.results import result_data

from .conftest import SecurityHome
from .test_scope import _exposure_on

NOT_EXPOSED = "not exposed to assistants"


def _locks(home: SecurityHome) -> list[str]:
    """The backends' locks, none of them exposed to assistants (HA's default)."""
    registry = er.async_get(home.hass)
    locks = sorted(
        entry.entity_id
        for entry in registry.entities.values()
        if entry.platform == DOMAIN and entry.domain == "lock" and entry.disabled_by is None
    )
    assert locks
    assert not any(async_should_expose(home.hass, "conversation", lock) for lock in locks)
    return locks


def _text(result: dict[str, Any]) -> str:
    return json.dumps(result_data(result), ensure_ascii=False)


async def test_the_owner_is_told_a_lock_is_not_exposed_and_where_to_change_it(
    home: SecurityHome,
) -> None:
    """get_state and set_state (by id and by name) as the owner: each names the
    unexposed lock and both settings; nothing is sent to the lock."""
    await _exposure_on(home)
    locks = _locks(home)
    lock = locks[0]
    before = home.hass.states.get(lock)
    assert before is not None

    found = await home.call("admin", "get_state", {"domain": ["lock"]})
    assert not found["isError"], found
    data = result_data(found)
    assert data["entities"] == []
    for words in (lock, NOT_EXPOSED, SETTING, GATEWAY_OPTION):
        assert words in data["hint"], data

    # Locking needs no approval: whichever gate is on, the refusal is the exposure's.
    target = "locked"
    by_id = await home.call(
        "admin", "set_state", {"updates": [{"entity_id": lock, "state": target}]}
    )
    text = _text(by_id)
    assert NOT_EXPOSED in text, text
    assert SETTING in text, text
    assert "Nothing was sent" in text, text
    assert "exists among the ones you may control" not in text, text

    name = str(before.attributes[ATTR_FRIENDLY_NAME])
    by_name = await home.call("admin", "set_state", {"updates": [{"name": name, "state": target}]})
    assert NOT_EXPOSED in _text(by_name), by_name
    assert lock in _text(by_name), by_name
    await home.hass.async_block_till_done()
    after = home.hass.states.get(lock)
    assert after is not None
    assert after.state == before.state


async def test_users_who_may_read_it_are_told_to_ask_an_administrator(
    home: SecurityHome,
) -> None:
    """An ordinary and a read-only user may read the lock: named, with the administrator's
    setting (not theirs to change)."""
    await _exposure_on(home)
    lock = _locks(home)[0]
    for kind in ("user", "read_only"):
        data = result_data(await home.call(kind, "get_state", {"domain": ["lock"]}))
        assert data["entities"] == [], (kind, data)
        assert lock in data["hint"], (kind, data)
        assert "An administrator can expose" in data["hint"], (kind, data)
        assert GATEWAY_OPTION not in data["hint"], (kind, data)


async def test_nothing_is_named_to_a_user_who_may_not_read_it(home: SecurityHome) -> None:
    """A user who may read one light only learns of no lock, however it is asked for."""
    await _exposure_on(home)
    locks = _locks(home)
    found = await home.call("policy", "get_state", {"domain": ["lock"]})
    text = _text(found)
    assert NOT_EXPOSED not in text, text
    assert not any(lock in text for lock in locks), text
    state = home.hass.states.get(locks[0])
    assert state is not None
    name = str(state.attributes[ATTR_FRIENDLY_NAME])
    for args in ({"entity_id": locks[0], "state": "locked"}, {"name": name, "state": "locked"}):
        result = await home.call("policy", "set_state", {"updates": [args]})
        text = _text(result)
        assert NOT_EXPOSED not in text, text
        assert not any(lock in text for lock in locks[1:]), text


async def test_a_hidden_entity_is_called_hidden_and_the_rest_still_answer(
    home: SecurityHome,
) -> None:
    """A light hidden in HA (so not exposed) among exposed lights: the lights are answered,
    and the hidden one is named as hidden beside them."""
    await _exposure_on(home)
    registry = er.async_get(home.hass)
    lights = sorted(
        entry.entity_id
        for entry in registry.entities.values()
        if entry.platform == DOMAIN and entry.domain == "light" and entry.disabled_by is None
    )
    assert len(lights) > 1
    hidden = lights[0]
    registry.async_update_entity(hidden, hidden_by=er.RegistryEntryHider.USER)
    async_expose_entity(home.hass, "conversation", hidden, False)
    for other in lights[1:]:
        async_expose_entity(home.hass, "conversation", other, True)
    data = result_data(await home.call("admin", "get_state", {"domain": ["light"]}))
    shown = {entity["entity_id"] for entity in data["entities"]}
    assert shown == set(lights[1:]), data
    assert hidden in data["unexposed"], data
    assert "hidden)" in data["unexposed"], data
    # A request without a naming filter is not burdened with what it did not ask for.
    data = result_data(await home.call("admin", "get_state", {}))
    assert "unexposed" not in data


async def _no_such(home: SecurityHome, kind: str, name: str, at: str | None = None) -> list[str]:
    """What get_state and set_state answer `kind` for a name: both find nothing."""
    where = {} if at is None else {"home": at}
    found = result_data(await home.call(kind, "get_state", {"name": name, **where}))
    assert found["entities"] == [], (kind, name, found)
    update = {"name": name, "state": "on", **where}
    sent = await home.call(kind, "set_state", {"updates": [update]})
    assert sent["isError"], sent
    return [found["hint"], _text(sent)]


async def test_a_name_nothing_has_is_said_not_to_exist_at_all(home: SecurityHome) -> None:
    """To those who may read every entity (the owner, an ordinary user), a name nothing
    has, hidden from assistants or not, is said to match nothing at all: "there is no such
    device" needs no look through the backends. A hidden match is still named instead."""
    await _exposure_on(home)
    flat = home.homecast.homes[0].name
    for kind in ("admin", "user"):
        for name, at in (("office light", None), ("front door lock", flat)):
            for answer in await _no_such(home, kind, name, at):
                assert NONE_AT_ALL in answer, (kind, name, answer)
                assert NOT_EXPOSED not in answer, (kind, name, answer)
    lock = _locks(home)[0]
    state = home.hass.states.get(lock)
    assert state is not None
    for answer in await _no_such(home, "admin", str(state.attributes[ATTR_FRIENDLY_NAME])):
        assert NOT_EXPOSED in answer, answer
        assert NONE_AT_ALL not in answer, answer


async def test_a_user_who_may_not_read_all_learns_only_of_their_own(home: SecurityHome) -> None:
    """A user who may read one light is told only that none of theirs matches: alike for a
    name nothing has and for a lock's name (never a sign that the lock exists)."""
    await _exposure_on(home)
    lock = _locks(home)[0]
    state = home.hass.states.get(lock)
    assert state is not None
    answers = {
        name: await _no_such(home, "policy", name)
        for name in ("office light", str(state.attributes[ATTR_FRIENDLY_NAME]))
    }
    for name, found in answers.items():
        for answer in found:
            assert NONE_READABLE in answer, (name, answer)
            assert NONE_AT_ALL not in answer, (name, answer)
            assert NOT_EXPOSED not in answer, (name, answer)
            assert lock not in answer, (name, answer)
