"""Device info carries no hub link: the publisher links devices to hubs by registry device id."""

from __future__ import annotations

from custom_components.mcp_gateway.framework.entity import DeviceSpec, device_info


def test_device_info_names_no_via_device() -> None:
    """DeviceInfo's via_device is deprecated (HA 2026.x warns; removal 2027.8)."""
    hub = DeviceSpec(key="hub", name="Hub")
    plug = DeviceSpec(key="plug_1", name="Plug", suggested_area="Kitchen", via=hub)
    info = device_info("entry-uid", plug)
    assert "via_device" not in info
    assert "via_device_id" not in info  # 2025.4's DeviceInfo has no such key
    assert info["identifiers"] == {("mcp_gateway", "entry-uid_plug_1")}
    assert info["suggested_area"] == "Kitchen"
