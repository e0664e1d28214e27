"""Every gateway tool for every kind of caller, over real HTTP: tools/list and tools/call.

The tiers come from each backend's classification table (what the admin's catalog reports);
the test checks that what each caller sees and what each caller may run follow them, and that
entity-level policies are honoured on top (the `policy` user may use one light only).
"""

from __future__ import annotations

from typing import Any

from tests.backend_sims import backend_cases
from tests.results import result_data

from .conftest import SIGNED_IN, SIGNED_OUT, SecurityHome, error_code

# Each backend's own rows (tests/<kind>/security_cases.py), by kind.
CASES = backend_cases("security_cases")
CORE_TIERS = {
    "search_tools": "read",
    "get_state": "read",
    "get_history": "read",
    "list_backends": "read",
    "set_state": "control",
    "automations": "control",
}
TIERS = {
    "admin": {"read", "control", "admin"},
    "user": {"read", "control"},
    "read_only": {"read"},
    "policy": {"read", "control"},
}


async def _catalogs(home: SecurityHome) -> dict[str, dict[str, dict[str, Any]]]:
    """Every backend tool with its tier and flags, as the admin's catalog lists them, by kind."""
    catalogs: dict[str, dict[str, dict[str, Any]]] = {}
    for backend, gateway in home.gateways.items():
        listing = await home.call("admin", gateway, {})
        assert not listing["isError"], listing
        catalogs[backend] = {t["name"]: t for t in result_data(listing)["tools"]}
        assert catalogs[backend], gateway
    return catalogs


def _expected(kind: str, backend: str, tool: dict[str, Any]) -> str | None:
    """The error code a call of `tool` with empty arguments must give `kind` (None: runs)."""
    if tool["tier"] not in TIERS[kind]:
        return "forbidden"
    if tool.get("destructive"):
        return "confirmation_required"
    refusal: str | None = CASES[backend].refusal(kind, tool["name"])
    return refusal


async def test_tools_list_per_kind(home: SecurityHome) -> None:
    """tools/list per kind of user: core tools plus the backends, or 401."""
    for kind in SIGNED_IN:
        status, body = await home.rpc(kind, "tools/list")
        assert status == 200, (kind, body)
        names = {tool["name"] for tool in body["result"]["tools"]}
        core = {name for name, tier in CORE_TIERS.items() if tier in TIERS[kind]}
        gateways = set(home.gateways.values())
        assert names - gateways == core, kind
        assert gateways <= names, kind
    for kind in SIGNED_OUT:
        status, body = await home.rpc(kind, "tools/list")
        assert status == 401, (kind, status, body)


async def test_each_catalog_lists_only_the_callers_tiers(home: SecurityHome) -> None:
    """Each catalog lists only the tiers its caller may use."""
    catalogs = await _catalogs(home)
    for kind in SIGNED_IN:
        for backend, tools in catalogs.items():
            gateway = home.gateways[backend]
            listing = await home.call(kind, gateway, {})
            seen = {t["name"] for t in result_data(listing)["tools"]}
            assert seen == {n for n, t in tools.items() if t["tier"] in TIERS[kind]}, (
                kind,
                gateway,
            )


async def test_every_backend_tool_for_every_kind(home: SecurityHome) -> None:
    """Every backend tool for every kind of user is allowed or refused as the matrix says."""
    catalogs = await _catalogs(home)
    outcomes: dict[tuple[str, str, str], str | None] = {}
    for backend, tools in catalogs.items():
        gateway = home.gateways[backend]
        for name, tool in sorted(tools.items()):
            for kind in SIGNED_IN:
                result = await home.call(kind, gateway, {"tool": name, "args": {}})
                code = error_code(result)
                expected = _expected(kind, backend, tool)
                outcomes[(kind, gateway, name)] = code
                if expected is None:
                    assert code not in ("forbidden", "confirmation_required"), (
                        kind,
                        gateway,
                        name,
                        result,
                    )
                else:
                    assert code == expected, (kind, gateway, name, result)
            for kind in SIGNED_OUT:
                status, _ = await home.rpc(
                    kind,
                    "tools/call",
                    {"name": gateway, "arguments": {"tool": name, "args": {}}},
                )
                assert status == 401, (kind, gateway, name)
    # Every kind was both allowed and refused somewhere (the matrix is not one-sided).
    for kind in ("user", "read_only", "policy"):
        codes = [code for (k, _, _), code in outcomes.items() if k == kind]
        assert "forbidden" in codes, kind
        assert any(code not in ("forbidden", "confirmation_required") for code in codes), kind


async def test_every_core_tool_for_every_kind(home: SecurityHome) -> None:
    """Every core tool for every kind of user is allowed or refused as the matrix says."""
    arguments: dict[str, dict[str, Any]] = {
        "search_tools": {"query": "light"},
        "get_state": {"entity_ids": [home.policy_light]},
        "get_history": {"entity_ids": [home.policy_light]},
        "list_backends": {},
        "set_state": {"updates": [{"entity_id": home.policy_light, "state": "on"}]},
        "automations": {"action": "list"},
    }
    for name, tier in CORE_TIERS.items():
        for kind in SIGNED_IN:
            result = await home.call(kind, name, arguments[name])
            if tier in TIERS[kind]:
                assert error_code(result) != "forbidden", (kind, name, result)
            else:
                assert result["isError"], (kind, name, result)
        for kind in SIGNED_OUT:
            status, _ = await home.rpc(
                kind, "tools/call", {"name": name, "arguments": arguments[name]}
            )
            assert status == 401, (kind, name)
