"""Keep translations/ in step with strings.json.

    python scripts/sync_translations.py           copy strings.json to translations/en.json and
                                                  list what each other language lacks or has extra
    python scripts/sync_translations.py --check   the same check, without writing; exit 1 when a
                                                  language lacks a key or has one strings.json lacks

English is strings.json itself, as HA's tooling makes translations/en.json for core integrations.
Every other language (translations/<language>.json) needs every key of strings.json, translated,
with the same {placeholders}; a key strings.json no longer has goes.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
import json
from pathlib import Path
import re
import shutil
import sys
from typing import Any

ROOT = Path(__file__).resolve().parent.parent / "custom_components" / "mcp_gateway"
PLACEHOLDER = re.compile(r"\{[a-z_][a-z0-9_]*\}")


def leaves(tree: Mapping[str, Any], path: str = "") -> Iterator[tuple[str, str]]:
    """Each text of a strings tree with its dotted key."""
    for key, value in tree.items():
        where = f"{path}.{key}" if path else key
        if isinstance(value, Mapping):
            yield from leaves(value, where)
        else:
            yield where, value


def problems(source: Mapping[str, Any], translation: Mapping[str, Any]) -> dict[str, list[str]]:
    """What a translation lacks, has extra, or translates with other placeholders."""
    wanted = dict(leaves(source))
    given = dict(leaves(translation))
    return {
        "missing": sorted(wanted.keys() - given.keys()),
        "extra": sorted(given.keys() - wanted.keys()),
        "placeholders": sorted(
            key
            for key in wanted.keys() & given.keys()
            if sorted(PLACEHOLDER.findall(wanted[key])) != sorted(PLACEHOLDER.findall(given[key]))
        ),
        "empty": sorted(key for key, text in given.items() if not str(text).strip()),
    }


def report(root: Path = ROOT) -> dict[str, dict[str, list[str]]]:
    """Per language other than English, its problems (only languages that have some)."""
    source = json.loads((root / "strings.json").read_text())
    found: dict[str, dict[str, list[str]]] = {}
    for path in sorted((root / "translations").glob("*.json")):
        if path.stem == "en":
            continue
        issues = problems(source, json.loads(path.read_text()))
        if any(issues.values()):
            found[path.stem] = issues
    return found


def main(argv: list[str]) -> int:
    """Copy English (unless --check), then list every language's problems."""
    if "--check" not in argv:
        shutil.copyfile(ROOT / "strings.json", ROOT / "translations" / "en.json")
    found = report()
    for language, issues in found.items():
        for kind, keys in issues.items():
            for key in keys:
                print(f"translations/{language}.json: {kind}: {key}")
    return 1 if found and "--check" in argv else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
