"""Roles, tiers, classification and the audit trail."""

from __future__ import annotations

from homeassistant.auth.models import User
from homeassistant.core import HomeAssistant
import pytest
from pytest_homeassistant_custom_component.common import MockUser

from custom_components.mcp_gateway.framework.base import ToolClass, ToolTier
from custom_components.mcp_gateway.permissions.policy import (
    ConfirmationRequired,
    PermissionDenied,
    Role,
    allowed_tiers,
    classify,
    describe_tiers,
    may_use_gateway,
    require_confirmation,
    require_control,
    require_tier,
    user_role,
)


async def test_roles_and_tiers(
    hass: HomeAssistant,
    hass_owner_user: MockUser,
    hass_admin_user: MockUser,
    hass_read_only_user: MockUser,
    hass_user: User,
) -> None:
    """Owner and admins reach every tier, users read and control, read-only users read."""
    assert user_role(hass_owner_user) is Role.ADMIN
    assert user_role(hass_admin_user) is Role.ADMIN
    assert user_role(hass_user) is Role.USER
    assert user_role(hass_read_only_user) is Role.READ_ONLY
    assert allowed_tiers(hass_owner_user) == set(ToolTier)
    assert allowed_tiers(hass_user) == {ToolTier.READ, ToolTier.CONTROL}
    assert allowed_tiers(hass_read_only_user) == {ToolTier.READ}


async def test_admin_in_read_only_group_stays_admin(hass: HomeAssistant) -> None:
    """HA merges group policies; the admin group wins, as it does in HA itself."""
    admin = await hass.auth.async_get_group("system-admin")
    read_only = await hass.auth.async_get_group("system-read-only")
    user = MockUser(groups=[read_only, admin]).add_to_hass(hass)
    assert user_role(user) is Role.ADMIN


async def test_inactive_users_get_nothing(hass: HomeAssistant) -> None:
    """A deactivated account keeps its token only until HA refuses it; we refuse already."""
    admin = await hass.auth.async_get_group("system-admin")
    user = MockUser(is_active=False, groups=[admin]).add_to_hass(hass)
    assert allowed_tiers(user) == frozenset()
    assert not may_use_gateway(user, allow_non_admin=True)


async def test_gateway_switch(
    hass: HomeAssistant, hass_admin_user: MockUser, hass_user: User
) -> None:
    """With non-admins kept out, only admins pass."""
    assert may_use_gateway(hass_user, allow_non_admin=True)
    assert not may_use_gateway(hass_user, allow_non_admin=False)
    assert may_use_gateway(hass_admin_user, allow_non_admin=False)


async def test_require_tier_names_the_tier(
    hass: HomeAssistant, hass_read_only_user: MockUser
) -> None:
    """The message tells the AI what is missing and what the user may do."""
    require_tier(hass_read_only_user, ToolTier.READ, "get_state")
    with pytest.raises(PermissionDenied, match="set_state needs the 'control' tier") as err:
        require_tier(hass_read_only_user, ToolTier.CONTROL, "set_state")
    assert "you act as a read-only user of Home Assistant, who may use: read." in str(err.value)
    assert describe_tiers([ToolTier.ADMIN, ToolTier.READ, ToolTier.CONTROL]) == (
        "read, control, admin"
    )
    assert describe_tiers([]) == "none"


def test_confirmation() -> None:
    """Destructive tools need confirm: true exactly; others never ask."""
    destructive = ToolClass(ToolTier.ADMIN, destructive=True)
    require_confirmation(ToolClass(ToolTier.ADMIN), {}, "x")
    require_confirmation(destructive, {"confirm": True}, "x")
    for arguments in ({}, {"confirm": False}, {"confirm": "true"}):
        with pytest.raises(ConfirmationRequired, match="confirm"):
            require_confirmation(destructive, arguments, "x")


async def test_require_control_uses_entity_permissions(
    hass: HomeAssistant, hass_user: User
) -> None:
    """HA's entity policy decides; denied entities are named."""
    hass_user.mock_policy(
        {"entities": {"entity_ids": {"switch.a": True, "switch.b": {"read": True}}}}
    )
    require_control(hass_user, ["switch.a"], "tool")
    with pytest.raises(PermissionDenied, match=r"addresses switch\.b, which"):
        require_control(hass_user, ["switch.a", "switch.b"], "tool")


def test_classify_defaults_to_admin() -> None:
    """Table first; unknown tools are admin unless marked read-only."""
    table = {"known": ToolClass(ToolTier.CONTROL)}
    assert classify({"name": "known"}, table) == ToolClass(ToolTier.CONTROL)
    assert classify({"name": "new"}, table) == ToolClass(ToolTier.ADMIN)
    assert classify({"name": "new", "annotations": {"readOnlyHint": True}}, table) == ToolClass(
        ToolTier.READ
    )
    assert classify(
        {"name": "new", "annotations": {"readOnlyHint": True}}, table, default_read_only=False
    ) == ToolClass(ToolTier.ADMIN)
    assert classify({"annotations": "junk"}, table) == ToolClass(ToolTier.ADMIN)
