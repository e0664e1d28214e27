"""Copy strings.json to translations/en.json, as HA's tooling does for core integrations."""

from pathlib import Path
import shutil

ROOT = Path(__file__).resolve().parent.parent / "custom_components" / "mcp_gateway"

if __name__ == "__main__":
    shutil.copyfile(ROOT / "strings.json", ROOT / "translations" / "en.json")
