"""What Home Assistant's hassfest would check, since hassfest itself cannot run here.

Manifest keys and order, imports of other components declared in the manifest, translations
equal to strings.json and free of HTML and stray braces, every flow error and abort key
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
from homeassistant.const import Platform
from homeassistant.core import HomeAssistant
from homeassistant.helpers import config_validation as cv
from homeassistant.helpers.entity import EntityDescription
from homeassistant.setup import async_setup_component
import pytest
import voluptuous as vol
import yaml

from custom_components import mcp_gateway
from custom_components.mcp_gateway.core.const import DOMAIN
from custom_components.mcp_gateway.registry import BACKENDS

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
    # http serves the gateway; application_credentials backs a backend's OAuth fallback.
    # auth: the gateway's OAuth metadata and registration use HA's login and token endpoints.
    assert MANIFEST["dependencies"] == ["application_credentials", "auth", "http", "webhook"]
    # recorder: get_history reads it when it runs, and works without it. config and trace:
    # the automations tool uses HA's automation editor and traces where they are loaded.
    assert MANIFEST["after_dependencies"] == ["config", "recorder", "trace"]
    assert MANIFEST["requirements"] == []
    assert MANIFEST["integration_type"] == "hub"
    # Both hubs push their changes; one value stands for every backend (README says so).
    assert MANIFEST["iot_class"] == "local_push"
    assert AwesomeVersion(MANIFEST["version"]).valid
    for url_key in ("documentation", "issue_tracker"):
        assert MANIFEST[url_key].startswith("https://")


def test_hacs_minimum_version_is_the_one_we_test() -> None:
    """hacs.json names the oldest HA release the test pins run, and the README the same."""
    repo = ROOT.parent.parent
    hacs = json.loads((repo / "hacs.json").read_text())
    pinned = re.search(r"^homeassistant==(\S+)", (repo / "locks" / "min.txt").read_text(), re.M)
    assert pinned is not None
    assert hacs["homeassistant"] == pinned[1]
    readme = (repo / "README.md").read_text()
    assert f"- Home Assistant {hacs['homeassistant']} or newer" in readme


def test_translations_equal_strings() -> None:
    """translations/en.json is the copy of strings.json (scripts/sync_translations.py)."""
    assert json.loads((ROOT / "translations" / "en.json").read_text()) == STRINGS


# Repair fix flows: their aborts are texts of the issue (issues.<key>.fix_flow.abort).
FIX_FLOWS = ROOT / "repairs.py"


def _string_literals(pattern: str, *, fix_flows: bool = False) -> set[str]:
    found: set[str] = set()
    for path in _python_sources():
        if (path == FIX_FLOWS) is fix_flows:
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


def test_every_fix_flow_abort_is_translated() -> None:
    """A repair flow's abort is read from its issue's fix_flow texts, in every issue it serves."""
    aborts = _string_literals(r'async_abort\(\s*reason\s*=\s*"([a-z_]+)"', fix_flows=True)
    assert aborts
    for key, issue in STRINGS["issues"].items():
        if "fix_flow" in issue:
            assert aborts - set(issue["fix_flow"].get("abort", {})) == set(), key


def _form_error_keys(source: str) -> set[str]:
    """Keys a flow module can put in `errors["base"]` through FormError / a `*_key` function."""
    keys: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "FormError":
            keys.update(
                arg.value
                for arg in node.args
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str)
            )
        elif isinstance(node, ast.FunctionDef) and node.name.endswith("_key"):
            keys.update(
                ret.value.value
                for ret in ast.walk(node)
                if isinstance(ret, ast.Return)
                and isinstance(ret.value, ast.Constant)
                and isinstance(ret.value.value, str)
            )
    return keys


def test_every_form_error_key_is_translated() -> None:
    """A FormError's key reaches the form as errors["base"], or an abort as `<prefix>_<key>`.

    The check above sees only literal `errors[...] = "…"`; these keys travel in an exception.
    """
    config = STRINGS["config"]
    missing = set()
    flows = [path for path in _python_sources() if path.name in ("config_flow.py", "flow.py")]
    for path in flows:
        source = path.read_text()
        prefixes = set(re.findall(r'reason=f"([a-z_]*)\{err\.key\}"', source))
        for key in _form_error_keys(source):
            texts = {key in config["error"]} | {
                f"{prefix}{key}" in config["abort"] for prefix in prefixes
            }
            if not any(texts):
                missing.add(f"{path.relative_to(ROOT)}: {key}")
    assert missing == set()
    found = _form_error_keys("\n".join(path.read_text() for path in flows))
    assert {"unknown", "not_loaded"} <= found
    # A backend's own "this is not one" key is found too.
    assert any(f"not_{backend.kind}" in found for backend in BACKENDS), found


def test_every_exception_translation_key_exists() -> None:
    """translation_key=... of raised HA errors name an `exceptions` entry."""
    used = _string_literals(r'translation_key\s*=\s*"([a-z0-9_]+)"')
    entity_keys = {key for platform in STRINGS.get("entity", {}).values() for key in platform}
    exception_keys = set(STRINGS.get("exceptions", {}))
    issue_keys = set(STRINGS.get("issues", {}))
    # translation_key names entity texts, exception texts and repair issue texts.
    assert used - entity_keys - exception_keys - issue_keys == set()


# The errors Home Assistant shows a user (a dialog, an action's toast, an entry's state).
_USER_ERRORS = frozenset(
    {
        "HomeAssistantError",
        "ServiceValidationError",
        "ConfigEntryNotReady",
        "ConfigEntryAuthFailed",
        "ConfigEntryError",
        "UpdateFailed",
    }
)
# Where an error's key is a parameter, the literal keys callers pass for it.
_KEY_PARAMETERS = {"entry_runtime": ("not_found", "not_loaded")}


def _callee(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _user_errors(source: str) -> list[str]:
    """Each user-visible error built in `source`: its literal key, or why it has none.

    An error is built by naming its class, or by calling a variable the code `raise`s
    (`raise error_class(...)`). Keys passed through a parameter (`entry_runtime`'s
    `not_found=` / `not_loaded=`, ActionUnauthorized's key) count at their callers.
    """
    found: list[str] = []
    tree = ast.parse(source)
    raised = {
        id(node.exc)
        for node in ast.walk(tree)
        if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call)
    }
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = _callee(node)
        if name in _KEY_PARAMETERS:
            found += [
                kw.value.value
                for kw in node.keywords
                if kw.arg in _KEY_PARAMETERS[name]
                and isinstance(kw.value, ast.Constant)
                and isinstance(kw.value.value, str)
            ]
            continue
        if name == "ActionUnauthorized":
            key = node.args[1] if len(node.args) > 1 else None
            if isinstance(key, ast.Constant):
                found.append(key.value)
            elif not (isinstance(key, ast.Subscript) and ast.unparse(key.value) == "_REFUSAL_KEYS"):
                found.append("<ActionUnauthorized key not literal>")  # _REFUSAL_KEYS: below
            continue
        if name not in _USER_ERRORS and not (id(node) in raised and name[:1].islower()):
            continue
        keywords = {kw.arg: kw.value for kw in node.keywords}
        domain, key = keywords.get("translation_domain"), keywords.get("translation_key")
        if not (isinstance(domain, ast.Name) and domain.id == "DOMAIN"):
            found.append(f"<{name} without translation_domain=DOMAIN>")
        elif isinstance(key, ast.Constant) and isinstance(key.value, str):
            found.append(key.value)
        elif not isinstance(key, ast.Name):  # a parameter, checked at its callers above
            found.append(f"<{name} without translation_key>")
    return found


def test_every_user_visible_error_is_translated() -> None:
    """Every HA error the code builds has translation_domain=DOMAIN and an `exceptions` key.

    Without them the user reads the raw English (or exception) text, untranslated.
    """
    exception_keys = set(STRINGS.get("exceptions", {}))
    missing = {
        f"{path.relative_to(ROOT)}: {key}"
        for path in _python_sources()
        for key in _user_errors(path.read_text())
        if key not in exception_keys
    }
    assert missing == set()
    refusals = importlib.import_module(f"{mcp_gateway.__name__}.permissions.actions")._REFUSAL_KEYS
    assert set(refusals.values()) <= exception_keys


def test_the_error_check_finds_untranslated_errors() -> None:
    """The scan above sees raw texts, missing domains and keys, and keys passed along."""
    assert _user_errors(
        """
raise HomeAssistantError("The tools need a user.")
raise UpdateFailed(translation_domain="other", translation_key="x")
raise ServiceValidationError(translation_domain=DOMAIN, translation_key="known")
raise error_class(translation_domain=DOMAIN)
raise ActionUnauthorized(call.context, "refused")
entry_runtime(call, KIND, not_found="gone", not_loaded="asleep")
raise ValueError("not a user-visible error")
"""
    ) == [
        "<HomeAssistantError without translation_domain=DOMAIN>",
        "<UpdateFailed without translation_domain=DOMAIN>",
        "known",
        "<error_class without translation_key>",
        "refused",
        "gone",
        "asleep",
    ]


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
    """Each config and options flow step with data has a data_description for every field."""
    for section in ("config", "options"):
        for step_id, step in STRINGS[section].get("step", {}).items():
            data: dict[str, Any] = step.get("data", {})
            described = step.get("data_description", {})
            assert set(data) - set(described) == set(), f"{section}.step.{step_id}"


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


# script/hassfest/dependencies.py, ALLOWED_USED_COMPONENTS: components any integration may import
# without declaring them (besides the entity platforms).
_ALLOWED_USED_COMPONENTS = {
    *(platform.value for platform in Platform),
    "alert",
    "automation",
    "conversation",
    "default_config",
    "device_automation",
    "frontend",
    "group",
    "homeassistant",
    "input_boolean",
    "input_button",
    "input_datetime",
    "input_number",
    "input_select",
    "input_text",
    "media_source",
    "onboarding",
    "panel_custom",
    "persistent_notification",
    "person",
    "script",
    "shopping_list",
    "sun",
    "system_health",
    "system_log",
    "timer",
    "webhook",
    "websocket_api",
    "zone",
    "mjpeg",
    "stream",
}


class _ComponentImports(ast.NodeVisitor):
    """The components a module references, as hassfest's ImportCollector finds them.

    script/hassfest/dependencies.py, ImportCollector: `from homeassistant.components.X…`,
    `from homeassistant.components import X`, `import homeassistant.components.X` and
    `hass.components.X`, except inside `if TYPE_CHECKING:` and http's `async_sign_path`.
    """

    def __init__(self) -> None:
        self.found: set[str] = set()

    def visit_If(self, node: ast.If) -> None:
        if isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            return
        self.generic_visit(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.module is None:
            return
        if node.module == "homeassistant.components.http.auth" and [
            alias.name for alias in node.names
        ] == ["async_sign_path"]:
            return
        if node.module.startswith("homeassistant.components."):
            self.found.add(node.module.split(".")[2])
        elif node.module == "homeassistant.components":
            self.found.update(alias.name for alias in node.names)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name.startswith("homeassistant.components."):
                self.found.add(alias.name.split(".")[2])

    def visit_Attribute(self, node: ast.Attribute) -> None:
        value = node.value
        owner = value.value if isinstance(value, ast.Attribute) else None
        if (
            isinstance(value, ast.Attribute)
            and value.attr == "components"
            and (
                (isinstance(owner, ast.Name) and owner.id == "hass")
                or (isinstance(owner, ast.Attribute) and owner.attr in ("hass", "_hass"))
            )
        ):
            self.found.add(node.attr)
        else:
            self.generic_visit(node)


def undeclared_components(root: Path, manifest: dict[str, Any]) -> dict[str, set[str]]:
    """Per module, the components it imports that the manifest does not allow.

    script/hassfest/dependencies.py, calc_allowed_references and
    find_non_referenced_integrations: allowed are the listed components, the manifest's
    dependencies and after_dependencies, and components the integration has a platform for.
    """
    allowed = (
        _ALLOWED_USED_COMPONENTS
        | set(manifest.get("dependencies", []))
        | set(manifest.get("after_dependencies", []))
    )
    found: dict[str, set[str]] = {}
    for path in sorted(root.rglob("*.py")):
        collector = _ComponentImports()
        collector.visit(ast.parse(path.read_text()))
        refused = {
            ref
            for ref in collector.found
            if ref != manifest["domain"]
            and ref not in allowed
            and not (root / f"{ref}.py").is_file()
            and not (root / ref).is_dir()
        }
        if refused:
            found[str(path.relative_to(root))] = refused
    return found


def test_imported_components_are_declared_in_the_manifest() -> None:
    """hassfest: 'Using component X but it's not in dependencies or after_dependencies'."""
    assert undeclared_components(ROOT, MANIFEST) == {}


def test_the_import_check_finds_an_undeclared_component() -> None:
    """Without after_dependencies, recorder (imported by get_history.py) is an error."""
    manifest = {key: value for key, value in MANIFEST.items() if key != "after_dependencies"}
    assert undeclared_components(ROOT, manifest) == {
        "core/compat.py": {"config", "trace"},
        "gateway/tools/get_history.py": {"recorder"},
    }
    assert "http" in {
        ref
        for refs in undeclared_components(ROOT, {**manifest, "dependencies": []}).values()
        for ref in refs
    }


def _texts(node: Any, path: str = "") -> list[tuple[str, str]]:
    if isinstance(node, dict):
        return [item for key, value in node.items() for item in _texts(value, f"{path}.{key}")]
    return [(path.lstrip("."), node)] if isinstance(node, str) else []


# A placeholder is {name}; any other brace is read as ICU message syntax by the frontend.
_PLACEHOLDER = re.compile(r"\{[a-z_][a-z0-9_]*\}")
# What current hassfest reads as a URL ("the string should not contain URLs, please use
# description placeholders instead"; HA core tests/hassfest/test_translations.py refuses
# "https://example.com", "www.example.com", "http://example.com:8080").
_URL = re.compile(
    r"(((ftp|ftps|scp|http|https|mqtt|mqtts|socket|socks5):\/\/|www\.)"
    r"[a-z0-9]+([\-\.]{1}[a-z0-9]+)*\.[a-z]{2,5}(:[0-9]{1,5})?(\/.*)?)",
    re.IGNORECASE,
)


def string_problems(strings: dict[str, Any]) -> list[str]:
    """What hassfest's translation validator and the frontend's formatter refuse.

    script/hassfest/translations.py, translation_value_validator: no HTML-like tags
    (`cv.string_with_no_html`; the frontend drops them), no single-quoted placeholders, no
    URLs (newer releases), no leading or trailing spaces. Braces: the frontend formats texts
    as ICU messages, where `{…}` that is not a placeholder breaks or vanishes.
    """
    problems: list[str] = []
    for path, text in _texts(strings):
        try:
            cv.string_with_no_html(text)
        except vol.Invalid:
            problems.append(f"{path}: HTML-like tag")
        if "{" in _PLACEHOLDER.sub("", text) or "}" in _PLACEHOLDER.sub("", text):
            problems.append(f"{path}: stray brace")
        if re.search(r"'\{[a-z_][a-z0-9_]*\}'", text):
            problems.append(f"{path}: single-quoted placeholder")
        if _URL.search(text):
            problems.append(f"{path}: URL")
        if text != text.strip():
            problems.append(f"{path}: leading or trailing space")
    return problems


@pytest.mark.parametrize("name", ["strings.json", "translations/en.json"])
def test_strings_have_no_html_or_stray_braces(name: str) -> None:
    """Every text reads in the frontend as written (hassfest checks en.json of custom ones)."""
    assert string_problems(json.loads((ROOT / name).read_text())) == []


def test_the_string_check_finds_tags_and_braces() -> None:
    """The shapes hassfest and the frontend trip on are reported."""
    assert string_problems(
        {
            "a": "local (http://<hub>/apps/api/<app id>/mcp)",
            "b": {"c": 'List of {"accessory": "<key>"}'},
            "d": "Fine: {name} at {url}, a < b and b > c, e.g. 192.168.1.20 or localhost:6274.",
            "e": "Quoted '{name}'",
            "f": "The cloud service is https://api.example.cloud/mcp.",
            "g": "Or www.example.com ",
        }
    ) == [
        "a: HTML-like tag",
        "b.c: HTML-like tag",
        "b.c: stray brace",
        "e: single-quoted placeholder",
        "f: URL",
        "g: URL",
        "g: leading or trailing space",
    ]


@pytest.mark.parametrize(
    "backend", [step for row in BACKENDS for step in (row.kind, *row.menu_steps)]
)
async def test_first_form_supplies_its_placeholders(hass: HomeAssistant, backend: str) -> None:
    """Each backend's first form gives every {placeholder} its texts name (URLs among them)."""
    result = await hass.config_entries.flow.async_init(DOMAIN, context={"source": "user"})
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {"next_step_id": backend}
    )
    assert result["type"] == "form"
    step = STRINGS["config"]["step"][result["step_id"]]
    named = {
        name for _, text in _texts(step) for name in re.findall(r"\{([a-z_][a-z0-9_]*)\}", text)
    }
    assert named, result["step_id"]  # the URL hints carry placeholders
    assert named <= set(result["description_placeholders"] or {})
    # What the user reads has no placeholder left, and the URLs are back.
    texts = " ".join(text for _, text in _texts(step)).format(**result["description_placeholders"])
    assert "{" not in texts
    assert "://" in texts
