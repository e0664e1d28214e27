"""quality_scale.yaml against the checks Home Assistant core's hassfest runs for its rules.

hassfest's quality-scale validators (script/hassfest/quality_scale_validation/ in core) are not
part of any installable package, so the same checks are written out here, each as core states
it, and run for every rule quality_scale.yaml marks done.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
import json
from pathlib import Path
import re
import shutil

from homeassistant.const import Platform
import yaml

from custom_components import mcp_gateway

ROOT = Path(mcp_gateway.__file__).parent
RULES = yaml.safe_load((ROOT / "quality_scale.yaml").read_text())["rules"]
# What the quality scale checks: a name ending in ConfigEntry with something before it.
_TYPED_ENTRY = re.compile(r"^[A-Za-z]+ConfigEntry$")
# Module → function → position of its config entry argument (1-based), as core lists them.
_ENTRY_FUNCTIONS: dict[str, dict[str, int]] = {
    "__init__": {
        "async_migrate_entry": 2,
        "async_remove_config_entry_device": 2,
        "async_remove_entry": 2,
        "async_setup_entry": 2,
        "async_unload_entry": 2,
    },
    "diagnostics": {
        "async_get_config_entry_diagnostics": 2,
        "async_get_device_diagnostics": 2,
    },
    **{platform.value: {"async_setup_entry": 2} for platform in Platform},
}


def _status(rule: str) -> str:
    value = RULES[rule]
    return str(value["status"] if isinstance(value, dict) else value)


def _done() -> set[str]:
    return {rule for rule in RULES if _status(rule) == "done"}


def _module(root: Path, name: str) -> ast.Module | None:
    path = root / f"{name}.py"
    return ast.parse(path.read_text()) if path.is_file() else None


def _top_async(module: ast.Module, name: str) -> ast.AsyncFunctionDef | None:
    return next(
        (f for f in module.body if isinstance(f, ast.AsyncFunctionDef) and f.name == name), None
    )


def _defines_async(module: ast.Module, name: str) -> bool:
    return any(isinstance(n, ast.AsyncFunctionDef) and n.name == name for n in ast.walk(module))


def _calls(node: ast.AST, name: str) -> bool:
    return any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == name
        for n in ast.walk(node)
    )


def _untyped_entry(function: ast.FunctionDef | ast.AsyncFunctionDef, position: int) -> bool:
    if len(function.args.args) < position:
        return True
    annotation = function.args.args[position - 1].annotation
    return not (isinstance(annotation, ast.Name) and _TYPED_ENTRY.match(annotation.id))


def _runtime_data(root: Path, done: set[str]) -> list[str]:
    init = _module(root, "__init__")
    setup = init and _top_async(init, "async_setup_entry")
    if setup is None:
        return ["no async_setup_entry in __init__.py"]
    entry = setup.args.args[1].arg
    problems = []
    if not any(
        isinstance(n, ast.Attribute)
        and isinstance(n.value, ast.Name)
        and n.value.id == entry
        and n.attr == "runtime_data"
        and isinstance(n.ctx, ast.Store)
        for n in ast.walk(setup)
    ):
        problems.append("async_setup_entry does not set entry.runtime_data")
    if "strict-typing" not in done:
        return problems
    for name, functions in _ENTRY_FUNCTIONS.items():
        if (module := _module(root, name)) is None:
            continue
        for function, position in functions.items():
            found = _top_async(module, function)
            if found is not None and _untyped_entry(found, position):
                problems.append(f"{name}.py {function} does not use a typed ConfigEntry")
    flow = _module(root, "config_flow")
    assert flow is not None
    for node in flow.body:
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if (
                    isinstance(item, ast.FunctionDef)
                    and item.name == "async_get_options_flow"
                    and _untyped_entry(item, 1)
                ):
                    problems.append("async_get_options_flow does not use a typed ConfigEntry")
    return problems


def _unique_config_entry(root: Path, done: set[str]) -> list[str]:
    flow = _module(root, "config_flow")
    assert flow is not None
    if _calls(flow, "_async_abort_entries_match") or (
        _calls(flow, "async_set_unique_id") and _calls(flow, "_abort_if_unique_id_configured")
    ):
        return []
    return ["config_flow.py does not prevent the same device from being set up twice"]


def _flow_step(step: str) -> Callable[[Path, set[str]], list[str]]:
    def check(root: Path, done: set[str]) -> list[str]:
        flow = _module(root, "config_flow")
        assert flow is not None
        return [] if _defines_async(flow, step) else [f"config_flow.py lacks {step}"]

    return check


def _config_entry_unloading(root: Path, done: set[str]) -> list[str]:
    init = _module(root, "__init__")
    assert init is not None
    return [] if _top_async(init, "async_unload_entry") else ["no async_unload_entry"]


def _diagnostics(root: Path, done: set[str]) -> list[str]:
    module = _module(root, "diagnostics")
    names = ("async_get_config_entry_diagnostics", "async_get_device_diagnostics")
    if module is None or not any(_defines_async(module, name) for name in names):
        return ["no diagnostics function in diagnostics.py"]
    return []


def _parallel_updates(root: Path, done: set[str]) -> list[str]:
    problems = []
    for platform in Platform:
        module = _module(root, platform.value)
        if module is not None and not any(
            isinstance(item, ast.Assign)
            and isinstance(item.targets[0], ast.Name)
            and item.targets[0].id == "PARALLEL_UPDATES"
            for item in module.body
        ):
            problems.append(f"{platform.value}.py does not set PARALLEL_UPDATES")
    return problems


def _registers_services(function: ast.AsyncFunctionDef) -> bool:
    for node in ast.walk(function):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        if node.func.attr == "async_register_entity_service":
            return True
        owner = node.func.value
        if (
            isinstance(owner, ast.Attribute)
            and isinstance(owner.value, ast.Name)
            and owner.value.id == "hass"
            and owner.attr == "services"
            and node.func.attr in {"async_register", "register"}
        ):
            return True
    return False


def _action_setup(root: Path, done: set[str]) -> list[str]:
    problems = []
    for name in ("__init__", *(platform.value for platform in Platform)):
        module = _module(root, name)
        setup = module and _top_async(module, "async_setup_entry")
        if setup is not None and _registers_services(setup):
            problems.append(f"{name}.py registers actions in async_setup_entry")
    return problems


def _test_before_setup(root: Path, done: set[str]) -> list[str]:
    init = _module(root, "__init__")
    setup = init and _top_async(init, "async_setup_entry")
    if setup is None:
        return ["no async_setup_entry in __init__.py"]
    if _calls(setup, "async_config_entry_first_refresh"):
        return []
    valid = {"ConfigEntryNotReady", "ConfigEntryAuthFailed", "ConfigEntryError"}

    def name(node: ast.expr | None) -> str | None:
        while isinstance(node, ast.Call | ast.Attribute):
            node = node.func if isinstance(node, ast.Call) else node.value
        return node.id if isinstance(node, ast.Name) else None

    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Raise) and name(node.exc) in valid:
                return []
    return ["nothing raises ConfigEntryNotReady, ConfigEntryAuthFailed or ConfigEntryError"]


def _has_entity_name(root: Path, done: set[str]) -> list[str]:
    classes: dict[str, tuple[list[str], bool]] = {}
    for path in root.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ClassDef) or node.name in classes:
                continue
            bases = [
                base.id if isinstance(base, ast.Name) else ast.unparse(base).split("[")[0]
                for base in node.bases
            ]
            found = any(
                isinstance(stmt, ast.Assign)
                and isinstance(target := stmt.targets[0], ast.Name)
                and target.id == "_attr_has_entity_name"
                and isinstance(stmt.value, ast.Constant)
                and stmt.value.value is True
                for stmt in node.body
            )
            classes[node.name] = (bases, found)

    def has(name: str) -> bool:
        if name not in classes:
            return False
        bases, found = classes[name]
        return found or any(has(base) for base in bases)

    return [
        f"{name} does not set _attr_has_entity_name"
        for name, (bases, _) in classes.items()
        if (name.endswith("Entity") or any(base.endswith("Entity") for base in bases))
        and not has(name)
    ]


def _config_flow(root: Path, done: set[str]) -> list[str]:
    manifest = json.loads((root / "manifest.json").read_text())
    if not manifest.get("config_flow") or not (root / "config_flow.py").is_file():
        return ["no config flow"]
    return []


CHECKS: dict[str, Callable[[Path, set[str]], list[str]]] = {
    "action-setup": _action_setup,
    "config-entry-unloading": _config_entry_unloading,
    "config-flow": _config_flow,
    "diagnostics": _diagnostics,
    "has-entity-name": _has_entity_name,
    "parallel-updates": _parallel_updates,
    "reauthentication-flow": _flow_step("async_step_reauth"),
    "reconfiguration-flow": _flow_step("async_step_reconfigure"),
    "runtime-data": _runtime_data,
    "test-before-setup": _test_before_setup,
    "unique-config-entry": _unique_config_entry,
}


def core_problems(root: Path, done: set[str]) -> dict[str, list[str]]:
    """What core's checks of the rules marked done find, per rule."""
    return {
        rule: found for rule in sorted(done & set(CHECKS)) if (found := CHECKS[rule](root, done))
    }


def test_every_rule_has_a_status() -> None:
    """done, exempt (with the reason) or todo: nothing else."""
    for rule, value in RULES.items():
        assert _status(rule) in {"done", "exempt", "todo"}, rule
        if _status(rule) == "exempt":
            assert isinstance(value, dict), rule
            assert value.get("comment"), rule


def test_rules_marked_done_pass_cores_checks() -> None:
    """hassfest would accept every rule quality_scale.yaml calls done."""
    assert CHECKS.keys() <= _done()
    assert core_problems(ROOT, _done()) == {}


def test_the_checks_find_an_untyped_options_flow_and_no_duplicate_check(tmp_path: Path) -> None:
    """A flow that types its options flow's entry as plain ConfigEntry and refuses a second
    entry by hand (no _abort_if_unique_id_configured) fails two rules, as in core."""
    shutil.copytree(ROOT, tmp_path, dirs_exist_ok=True)
    (tmp_path / "config_flow.py").write_text(
        "class Flow(ConfigFlow):\n"
        "    async def async_step_user(self, user_input=None):\n"
        "        if await self.async_set_unique_id('x') is not None:\n"
        "            return self.async_abort(reason='already')\n"
        "    async def async_step_reauth(self, data): ...\n"
        "    async def async_step_reconfigure(self, data=None): ...\n"
        "    @staticmethod\n"
        "    def async_get_options_flow(config_entry: ConfigEntry) -> OptionsFlow: ...\n"
    )
    assert core_problems(tmp_path, _done()) == {
        "runtime-data": ["async_get_options_flow does not use a typed ConfigEntry"],
        "unique-config-entry": [
            "config_flow.py does not prevent the same device from being set up twice"
        ],
    }
