"""Every language says everything English says, with the same placeholders, and nothing more."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

from custom_components import mcp_gateway
from tests.test_hassfest import string_problems

ROOT = Path(mcp_gateway.__file__).parent
SCRIPT = Path(__file__).parent.parent / "scripts" / "sync_translations.py"
HOW_TO_FIX = (
    "Translate the keys strings.json has into each language and drop the ones it no longer has; "
    "`python scripts/sync_translations.py` lists them per language."
)


def _sync() -> ModuleType:
    spec = importlib.util.spec_from_file_location("sync_translations", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_languages_beyond_english_exist() -> None:
    """German and French are shipped beside English."""
    languages = {path.stem for path in (ROOT / "translations").glob("*.json")}
    assert {"en", "de", "fr"} <= languages


def test_every_language_has_every_key() -> None:
    """A key one language lacks shows English (or the raw key) to its users."""
    found = _sync().report(ROOT)
    assert found == {}, f"{json.dumps(found, indent=1)}\n{HOW_TO_FIX}"


def test_every_language_reads_as_written() -> None:
    """The rules hassfest and the frontend apply to English hold for every language."""
    for path in sorted((ROOT / "translations").glob("*.json")):
        assert string_problems(json.loads(path.read_text())) == [], path.name


def test_the_check_names_what_a_language_lacks() -> None:
    """A missing key, an extra one, a lost placeholder and an empty text are each reported."""
    sync = _sync()
    source = {"a": {"b": "Hello {name}", "c": "Bye"}}
    assert sync.problems(source, {"a": {"b": "Hallo {name}", "c": "Tschüss"}}) == {
        "missing": [],
        "extra": [],
        "placeholders": [],
        "empty": [],
    }
    assert sync.problems(source, {"a": {"b": "Hallo", "d": "", "c": " "}}) == {
        "missing": [],
        "extra": ["a.d"],
        "placeholders": ["a.b"],
        "empty": ["a.c", "a.d"],
    }
    assert sync.problems(source, {"a": {"b": "Hallo {name}"}})["missing"] == ["a.c"]
