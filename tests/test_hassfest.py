"""What Home Assistant's hassfest would check, since hassfest itself cannot run here.

Manifest keys and order, translations equal to strings.json, every flow error and abort key
translated, every entity translation key named, services.yaml matching the registered actions,
and icons.json well formed.
"""

from __future__ import annotations

import ast
from dataclasses import fields
import importlib
import json
from pathlib import Path
import pkgutil
import re
from typing import Any

from awesomeversion import AwesomeVersion
from homeassistant.core import HomeAssistant
from homeassistant.helpers.entity import EntityDescription
from homeassistant.setup import async_setup_component
import pytest
import yaml

from custom_components import mcp_gateway
from custom_components.mcp_gateway.const import DOMAIN

ROOT = Path(mcp_gateway.__file__).parent
MANIFEST = json.loads((ROOT / "manifest.json").read_text())
STRINGS = json.loads((ROOT / "strings.json").read_text())
ICONS = json.loads((ROOT / "icons.json").read_text())
SERVICES = yaml.safe_load((ROOT / "services.yaml").read_text()) or {}


def _python_sources() -> list[Path]:
    return sorted(ROOT.rglob("*.py"))


def test_manifest_keys_order_and_values() -> None:
    """domain and name first, then the rest sorted, as hassfest demands."""
    keys = list(MANIFEST)
    assert keys[:2] == ["domain", "name"]
    assert keys[2:] == sorted(keys[2:])
    assert MANIFEST["domain"] == DOMAIN
    assert MANIFEST["config_flow"] is True
    # http serves the gateway; application_credentials backs Homecast's OAuth fallback.
    assert MANIFEST["dependencies"] == ["application_credentials", "http"]
    assert MANIFEST["requirements"] == []
    assert MANIFEST["integration_type"] == "hub"
    assert MANIFEST["iot_class"] in {"local_polling", "cloud_polling", "local_push"}
    assert AwesomeVersion(MANIFEST["version"]).valid
    for url_key in ("documentation", "issue_tracker"):
        assert MANIFEST[url_key].startswith("https://")


def test_hacs_minimum_version_is_the_one_we_test() -> None:
    """hacs.json names the oldest HA release the test pins run."""
    hacs = json.loads((ROOT.parent.parent / "hacs.json").read_text())
    assert hacs["homeassistant"] == "2025.4.0"


def test_translations_equal_strings() -> None:
    """translations/en.json is the copy of strings.json (scripts/sync_translations.py)."""
    assert json.loads((ROOT / "translations" / "en.json").read_text()) == STRINGS


def _string_literals(pattern: str) -> set[str]:
    found: set[str] = set()
    for path in _python_sources():
        found.update(re.findall(pattern, path.read_text()))
    return found


def test_every_flow_error_and_abort_is_translated() -> None:
    """Each errors[...] value and abort reason used in code has a text."""
    errors = _string_literals(r'errors\[[^\]]+\]\s*=\s*"([a-z_]+)"')
    errors |= _string_literals(r'"base":\s*"([a-z_]+)"')
    aborts = _string_literals(r'async_abort\(\s*reason\s*=\s*"([a-z_]+)"')
    aborts |= _string_literals(r'_abort_if_unique_id_mismatch\(\s*reason\s*=\s*"([a-z_]+)"')
    config = STRINGS["config"]
    assert errors - set(config.get("error", {})) == set()
    assert aborts - set(config.get("abort", {})) == set()


def test_every_exception_translation_key_exists() -> None:
    """translation_key=... of raised HA errors name an `exceptions` entry."""
    used = _string_literals(r'translation_key\s*=\s*"([a-z0-9_]+)"')
    entity_keys = {key for platform in STRINGS.get("entity", {}).values() for key in platform}
    exception_keys = set(STRINGS.get("exceptions", {}))
    issue_keys = set(STRINGS.get("issues", {}))
    # translation_key names entity texts, exception texts and repair issue texts.
    assert used - entity_keys - exception_keys - issue_keys == set()


def _descriptions() -> list[tuple[str, EntityDescription]]:
    """Every module-level entity description constant of the integration, with its platform."""
    found: list[tuple[str, EntityDescription]] = []
    for info in pkgutil.walk_packages([str(ROOT)], prefix=f"{mcp_gateway.__name__}."):
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            candidates = value if isinstance(value, tuple | list) else (value,)
            for candidate in candidates:
                if isinstance(candidate, EntityDescription) and type(
                    candidate
                ).__module__.startswith(mcp_gateway.__name__):
                    platform = type(candidate).__module__.rsplit(".", 1)[-1]
                    found.append((platform, candidate))
    return found


def test_every_entity_translation_key_is_named() -> None:
    """Descriptions with a translation_key have a name under entity.<platform>.<key>."""
    missing = [
        f"{platform}.{description.translation_key}"
        for platform, description in _descriptions()
        if description.translation_key is not None
        and description.translation_key not in STRINGS.get("entity", {}).get(platform, {})
    ]
    assert missing == []


def test_icons_json_is_well_formed() -> None:
    """Every icon is an mdi: name, in the structure HA reads."""
    assert set(ICONS) <= {"entity", "services"}
    for platform, keys in ICONS.get("entity", {}).items():
        for key, icon in keys.items():
            assert set(icon) <= {"default", "state", "range"}, (platform, key)
            assert icon.get("default", "mdi:x").startswith("mdi:"), (platform, key)
            for state_icon in icon.get("state", {}).values():
                assert state_icon.startswith("mdi:"), (platform, key)
    for service, icon in ICONS.get("services", {}).items():
        assert service in SERVICES, service
        assert icon["service"].startswith("mdi:"), service


async def test_services_yaml_matches_registered_actions(hass: HomeAssistant) -> None:
    """services.yaml, strings.json and the registered actions name the same set."""
    assert await async_setup_component(hass, DOMAIN, {})
    registered = set(hass.services.async_services_for_domain(DOMAIN))
    assert registered == set(SERVICES)
    for service, spec in SERVICES.items():
        texts = STRINGS.get("services", {}).get(service)
        assert texts is not None, service
        assert "name" in texts, service
        assert "description" in texts, service
        for field_name in (spec or {}).get("fields", {}):
            assert field_name in texts.get("fields", {}), (service, field_name)


def test_data_description_for_every_flow_field() -> None:
    """Each config flow step with data has a data_description for every field (Bronze rule)."""
    for step_id, step in STRINGS["config"].get("step", {}).items():
        data: dict[str, Any] = step.get("data", {})
        described = step.get("data_description", {})
        assert set(data) - set(described) == set(), step_id


@pytest.mark.parametrize("path", _python_sources(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_blocking_calls_in_integration_code(path: Path) -> None:
    """No time.sleep or requests in code that runs in the event loop."""
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            assert (node.value.id, node.attr) != ("time", "sleep"), path
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [alias.name for alias in node.names]
            module = getattr(node, "module", None) or ""
            assert "requests" not in [module, *names], path


def test_platform_descriptions_are_frozen() -> None:
    """Descriptions are immutable constants, as in HA core."""
    for _, description in _descriptions():
        params = type(description).__dataclass_params__  # type: ignore[attr-defined]
        assert params.frozen, type(description).__name__
        assert {f.name for f in fields(description)} >= {"key"}
