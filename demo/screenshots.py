"""Screenshots of the running demo, taken the way a person sees it.

Run `scripts/demo` first, then `scripts/demo-screenshots` (both with `--ha current` for the
current release). Logs in through Home Assistant's own login page in headless Chromium (Debian's
`chromium` package) and saves, in the demo's folder, `integrations.png` (the integration page
with its three entries), `dashboard.png` (the demo's dashboard with entities of all three
backends) and `assist.png` (Assist's settings: conversation and assist_pipeline set up).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
import shutil
import sys

from playwright.async_api import async_playwright

from .dashboard import DASHBOARD_URL_PATH, create_dashboard
from .ha import HomeAssistantProcess
from .paths import DEMO_DIR, shown


def _running_demo() -> HomeAssistantProcess:
    url = (DEMO_DIR / "mcp_url").read_text().strip()
    port = int(url.split(":")[2].split("/")[0])
    username, password = (DEMO_DIR / "login").read_text().split()
    ha = HomeAssistantProcess(
        config_dir=DEMO_DIR / "config", port=port, username=username, password=password
    )
    ha.access_token = (DEMO_DIR / "token").read_text().strip()
    return ha


def _logged_in(url: str) -> bool:
    return "/auth/" not in url and "auth_callback" not in url and url.count("/") > 3


async def take_screenshots(ha: HomeAssistantProcess) -> list[Path]:
    """Log in through the login page and capture the pages."""
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
        # The default dashboard after login: /lovelace/0 on HA 2025, /home/overview on 2026.
        await page.wait_for_url(_logged_in, timeout=30_000)
        for name, path in (
            ("integrations", "/config/integrations/integration/mcp_gateway"),
            ("dashboard", f"/{DASHBOARD_URL_PATH}/0"),
            # Assist's settings page lists the assistant only where conversation and
            # assist_pipeline set up.
            ("assist", "/config/voice-assistants/assistants"),
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
    await create_dashboard(ha, json.loads((DEMO_DIR / "entries.json").read_text()))
    for shot in await take_screenshots(ha):
        print(f"saved {shown(shot)}")


if __name__ == "__main__":
    try:
        asyncio.run(run())
    except FileNotFoundError:
        sys.exit(
            f"Start scripts/demo first: {shown(DEMO_DIR)}/mcp_url, token and login are missing."
        )
