"""info.md, the short store text, says what the README says on the facts both state."""

from __future__ import annotations

import json
from pathlib import Path
import re

from custom_components.mcp_gateway.core.const import DOMAIN

REPO = Path(__file__).parent.parent
INFO = (REPO / "info.md").read_text()
README = (REPO / "README.md").read_text()
# The three backends and the system each one brings, as the README's opening names them.
BACKENDS = ("Hubitat Elevation", "MCP Rule Server", "Homecast", "Apple HomeKit", "Robine Wake")


def _minimum(text: str) -> str:
    found = re.findall(r"Home Assistant (\d{4}\.\d+\.\d+) or newer", text)
    assert len(set(found)) == 1, found
    return str(found[0])


def test_minimum_release_is_the_readmes_and_hacs() -> None:
    hacs = json.loads((REPO / "hacs.json").read_text())
    assert _minimum(INFO) == _minimum(README) == hacs["homeassistant"]


def test_backends_and_gateway_named_as_in_the_readme() -> None:
    for name in BACKENDS:
        assert f"**{name}**" in INFO or f"*{name}*" in INFO, name
        assert name in README, name
    endpoint = f"/api/{DOMAIN}"
    assert endpoint in INFO
    assert endpoint in README


def test_short_and_pointing_at_sections_that_exist() -> None:
    """A store card, not a second README; the sections it names are the README's."""
    assert len(INFO.splitlines()) <= 30
    headings = set(re.findall(r"^#+ (.+)$", README, re.M))
    for named in re.findall(r"README's \*([^*]+)\*", INFO):
        assert named in headings, named


def test_the_readmes_first_section_is_trying_it_without_hardware() -> None:
    """Right after the opening: two commands, a clone and the demo."""
    sections = re.split(r"^## ", README, flags=re.M)
    assert sections[1].startswith("Try it without hardware\n")
    commands = re.search(r"```bash\n(.*?)```", sections[1], re.S)
    assert commands is not None
    lines = commands[1].strip().splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("git clone ")
    assert lines[1] == "scripts/demo"


def test_the_readme_and_the_repair_name_the_key_option_as_the_form_does() -> None:
    """The form said "best-practice key" where the README said "write key"."""
    strings = json.loads(
        (REPO / "custom_components" / DOMAIN / "strings.json").read_text(encoding="utf-8")
    )
    label = strings["options"]["step"]["hubitat"]["data"]["hubitat_send_key"]
    assert f"*{label}*" in README.replace("\n  ", " ")
    assert "write key" not in README
    repair = strings["issues"]["hubitat_key_refused"]["description"]
    assert f'"{label}"' in repair
