"""Screenshots of the running demo, taken the way a person sees it.

Run `scripts/demo` first, then `scripts/demo-screenshots`. Logs in through Home Assistant's own
login page in headless Chromium (Debian's `chromium` package), saves `.demo/integrations.png`
(the integration page with its three entries) and `.demo/dashboard.png` (a dashboard with
entities of all three backends, which this script creates through the websocket API).
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
import json
from pathlib import Path
import shutil
import sys
from typing import Any

from playwright.async_api import async_playwright

from .ha import REPO, HomeAssistantProcess

DEMO_DIR = REPO / ".demo"
DASHBOARD_URL_PATH = "mcp-demo"
# Per backend, which entity domains the dashboard shows first (a few of each tells the story).
SHOWCASE = {
    "hubitat": [
        "alarm_control_panel",
        "select",
        "light",
        "cover",
        "lock",
        "binary_sensor",
        "sensor",
    ],
    "homecast": ["light", "climate", "lock", "select", "switch", "sensor"],
    "robine_wake": ["sensor", "switch", "button", "binary_sensor", "event"],
}
PER_CARD = 8


def _running_demo() -> HomeAssistantProcess:
    url = (DEMO_DIR / "mcp_url").read_text().strip()
    port = int(url.split(":")[2].split("/")[0])
    username, password = (DEMO_DIR / "login").read_text().split()
    ha = HomeAssistantProcess(
        config_dir=DEMO_DIR / "config", port=port, username=username, password=password
    )
    ha.access_token = (DEMO_DIR / "token").read_text().strip()
    return ha


async def create_dashboard(ha: HomeAssistantProcess) -> None:
    """A dashboard with one card per backend, listing a few entities of each."""
    kinds: dict[str, str] = json.loads((DEMO_DIR / "entries.json").read_text())
    entries = await ha.websocket_command({"type": "config_entries/get", "domain": "mcp_gateway"})
    registry = await ha.websocket_command({"type": "config/entity_registry/list"})
    by_entry: dict[str, list[str]] = defaultdict(list)
    for entity in registry:
        if entity["platform"] == "mcp_gateway" and not entity.get("disabled_by"):
            by_entry[entity["config_entry_id"]].append(entity["entity_id"])
    cards: list[dict[str, Any]] = []
    for entry in entries:
        order = SHOWCASE.get(kinds.get(entry["entry_id"], ""), [])
        entity_ids = by_entry.get(entry["entry_id"], [])
        if entity_ids:
            picked = sorted(entity_ids, key=lambda e: (_rank(e, order), e))[:PER_CARD]
            cards.append({"type": "entities", "title": entry["title"], "entities": picked})
    dashboards = await ha.websocket_command({"type": "lovelace/dashboards/list"})
    if not any(d["url_path"] == DASHBOARD_URL_PATH for d in dashboards):
        await ha.websocket_command(
            {
                "type": "lovelace/dashboards/create",
                "url_path": DASHBOARD_URL_PATH,
                "title": "MCP demo",
                "icon": "mdi:home-assistant",
                "show_in_sidebar": True,
                "require_admin": False,
                "mode": "storage",
            }
        )
    await ha.websocket_command(
        {
            "type": "lovelace/config/save",
            "url_path": DASHBOARD_URL_PATH,
            "config": {"views": [{"title": "Home", "type": "masonry", "cards": cards}]},
        }
    )


def _rank(entity_id: str, order: list[str]) -> int:
    domain = entity_id.split(".", 1)[0]
    return order.index(domain) if domain in order else len(order)


async def take_screenshots(ha: HomeAssistantProcess) -> list[Path]:
    """Log in through the login page and capture the two pages."""
    browser_path = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser_path is None:
        raise SystemExit("Chromium is needed: apt-get install chromium")
    shots: list[Path] = []
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=browser_path,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ],
        )
        page = await browser.new_page(viewport={"width": 1400, "height": 1000})
        await page.goto(ha.base_url)
        await page.locator('input[name="username"]').fill(ha.username)
        await page.locator('input[name="password"]').fill(ha.password)
        await page.keyboard.press("Enter")
        await page.wait_for_url(f"{ha.base_url}/lovelace/**", timeout=30_000)
        for name, path in (
            ("integrations", "/config/integrations/integration/mcp_gateway"),
            ("dashboard", f"/{DASHBOARD_URL_PATH}/0"),
        ):
            await page.goto(f"{ha.base_url}{path}")
            await page.wait_for_load_state("networkidle")
            await page.wait_for_timeout(2000)  # cards render after the data arrives
            shot = DEMO_DIR / f"{name}.png"
            await page.screenshot(path=str(shot), full_page=True)
            shots.append(shot)
        await browser.close()
    return shots


async def run() -> None:
    """Create the dashboard, then capture both pages."""
    ha = _running_demo()
    await create_dashboard(ha)
    for shot in await take_screenshots(ha):
        print(f"saved {shot.relative_to(REPO)}")


if __name__ == "__main__":
    try:
        asyncio.run(run())
    except FileNotFoundError:
        sys.exit(
            "Start scripts/demo first: .demo/mcp_url, .demo/token and .demo/login are missing."
        )
