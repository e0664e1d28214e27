"""Screenshots of the running demo, taken the way a person sees it.

Run `scripts/demo` first, then `scripts/demo-screenshots` (both with `--ha current` for the
current release). Logs in through Home Assistant's own login page in headless Chromium (Debian's
`chromium` package) and saves, in the demo's folder, `integrations.png` (the integration page
with its three entries), `dashboard.png` (the demo's dashboard with entities of all three
backends) and `assist.png` (Assist's settings: conversation and assist_pipeline set up).

Then it shows a person approving: an MCP client (the owner's long-lived token, as an AI app is
given; it declares no elicitation, so Home Assistant's UI is where the person answers) asks to
unlock one of the demo's locks; once the request waits, the browser (the owner's own sign-in,
not the client's) opens Settings → Repairs and saves `approval-repairs.png` (the waiting
request) and `approval-dialog.png` (its Approve/Decline dialog), approves, saves
`approval-approved.png` (what the dialog then says), and checks that the call then succeeds and
the lock was unlocked exactly once.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import pairwise
import json
from pathlib import Path
import shutil
import sys
import time
from typing import Any
from urllib.parse import quote

import aiohttp
from playwright.async_api import FloatRect, Locator, Page, async_playwright

from .dashboard import DASHBOARD_URL_PATH, create_dashboard
from .ha import HomeAssistantProcess
from .paths import DEMO_DIR, shown
from .smoke import McpSession

# How long the gateway's request may take to show up under Repairs (it is asked at once).
PENDING_SECONDS = 30.0
# What HA's own screen waits for at most: the rendering of a page after its data arrived.
RENDER_MS = 2000
# Room around the approval dialog's texts in its screenshot: its edges and some of the page.
DIALOG_MARGIN = 80


class ApprovalDemoError(RuntimeError):
    """The approval did not go as a person would see it go."""


@dataclass
class Unlock:
    """The client's side of the approval: its session, its call and the lock it unlocks."""

    client: McpSession
    session: aiohttp.ClientSession
    lock: str
    name: str
    started: str  # ISO time, for the lock's history since then
    call: asyncio.Task[dict[str, Any]] | None = None

    @property
    def arguments(self) -> dict[str, Any]:
        return {"updates": [{"entity_id": self.lock, "state": "unlocked"}]}

    def start(self) -> None:
        """Send the unlock; the gateway holds it while the person is asked."""
        self.call = asyncio.create_task(
            self.client.request(
                self.session, "tools/call", {"name": "set_state", "arguments": self.arguments}
            )
        )


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


async def _demo_lock(ha: HomeAssistantProcess) -> tuple[str, str]:
    """A lock of the demo's backends, locked (HA's own service: not the gateway, not gated)."""
    locks = sorted(
        (s for s in await ha.get("/api/states") if s["entity_id"].startswith("lock.")),
        key=lambda s: s["entity_id"],
    )
    usable = [s for s in locks if s["state"] in ("locked", "unlocked")]
    if not usable:
        raise ApprovalDemoError(f"no lock to unlock: {[s['entity_id'] for s in locks]}")
    lock = usable[0]
    if lock["state"] != "locked":
        await ha.api("POST", "/api/services/lock/lock", json={"entity_id": lock["entity_id"]})
        await _wait_for_state(ha, lock["entity_id"], "locked")
    return lock["entity_id"], lock["attributes"].get("friendly_name", lock["entity_id"])


async def _wait_for_state(ha: HomeAssistantProcess, entity_id: str, state: str) -> None:
    deadline = time.monotonic() + 15
    while (now := (await ha.get(f"/api/states/{entity_id}"))["state"]) != state:
        if time.monotonic() > deadline:
            raise ApprovalDemoError(f"{entity_id} is {now}, not {state}")
        await asyncio.sleep(0.5)


async def _pending_issue(ha: HomeAssistantProcess) -> dict[str, Any]:
    """The Repairs issue of the waiting request, once the gateway has opened it."""
    deadline = time.monotonic() + PENDING_SECONDS
    while time.monotonic() < deadline:
        issues = (await ha.websocket_command({"type": "repairs/list_issues"}))["issues"]
        for issue in issues:
            if issue["domain"] == "mcp_gateway" and issue["issue_id"].startswith("approval_"):
                return dict(issue)
        await asyncio.sleep(0.5)
    raise ApprovalDemoError("no approval request under Settings → Repairs")


def _tool_error(result: dict[str, Any]) -> dict[str, Any] | None:
    """The error a tools/call result carries (its `code` and `message`), None on success."""
    if not result.get("isError"):
        return None
    try:
        error = json.loads(result["content"][0]["text"])["error"]
    except (KeyError, IndexError, TypeError, ValueError):
        return {"message": result.get("content")}
    return dict(error) if isinstance(error, dict) else {"message": error}


async def _issue_gone(ha: HomeAssistantProcess, issue_id: str) -> None:
    deadline = time.monotonic() + PENDING_SECONDS
    while time.monotonic() < deadline:
        issues = (await ha.websocket_command({"type": "repairs/list_issues"}))["issues"]
        if not any(issue["issue_id"] == issue_id for issue in issues):
            return
        await asyncio.sleep(0.5)
    raise ApprovalDemoError("the request stayed under Settings → Repairs after Approve")


async def _around(page: Page, approve: Locator) -> FloatRect:
    """The dialog's area with a margin: its title, text and both options."""
    boxes = [
        await locator.bounding_box()
        for locator in (
            page.get_by_text("Approve this action?").first,
            approve,
            page.get_by_text("Decline", exact=True).first,
        )
    ]
    if any(box is None for box in boxes):
        raise ApprovalDemoError("the approval dialog is not on the screen")
    found = [box for box in boxes if box is not None]
    left = max(min(box["x"] for box in found) - DIALOG_MARGIN, 0)
    top = max(min(box["y"] for box in found) - DIALOG_MARGIN, 0)
    right = max(box["x"] + box["width"] for box in found) + DIALOG_MARGIN
    bottom = max(box["y"] + box["height"] for box in found) + DIALOG_MARGIN
    return {"x": left, "y": top, "width": right - left, "height": bottom - top}


async def _approve_in_repairs(
    page: Page, ha: HomeAssistantProcess, title: str, issue_id: str
) -> list[Path]:
    """Open Settings → Repairs, capture the request and its dialog, and approve it."""
    shots = [DEMO_DIR / f"approval-{name}.png" for name in ("repairs", "dialog", "approved")]
    await page.goto(f"{ha.base_url}/config/repairs")
    # Playwright's text and css selectors pierce the frontend's shadow roots.
    issue = page.get_by_text(title, exact=True).first
    await issue.wait_for(timeout=30_000)
    await page.wait_for_timeout(RENDER_MS)
    await page.screenshot(path=str(shots[0]), full_page=True)
    await issue.click()
    approve = page.get_by_text("Approve: run it once", exact=True).first
    await approve.wait_for(timeout=30_000)
    await page.wait_for_timeout(RENDER_MS)  # the dialog's opening animation
    # The dialog alone (the page behind it is approval-repairs.png): from its title to its
    # last option, found by their texts, as the dialog's own elements differ between releases.
    await page.screenshot(path=str(shots[1]), clip=await _around(page, approve))
    await approve.click()
    # Approved once the gateway has taken the request off Repairs; then what the dialog says.
    await _issue_gone(ha, issue_id)
    await page.wait_for_timeout(RENDER_MS)
    await page.screenshot(path=str(shots[2]))
    return shots


async def _states_since(ha: HomeAssistantProcess, entity_id: str, since: str) -> list[str]:
    """The entity's states from `since` on, once the recorder has written the current one (it
    commits every few seconds)."""
    deadline = time.monotonic() + 15
    while True:
        history = await ha.get(
            f"/api/history/period/{quote(since)}?filter_entity_id={entity_id}"
            "&minimal_response&no_attributes"
        )
        rows = history[0] if history else []
        current = await ha.get(f"/api/states/{entity_id}")
        if (rows and rows[-1]["last_changed"] == current["last_changed"]) or (
            time.monotonic() > deadline
        ):
            return [row["state"] for row in rows]
        await asyncio.sleep(1)


async def _finish_unlock(ha: HomeAssistantProcess, unlock: Unlock) -> str:
    """The client's call ends in success and the lock unlocked once; what happened, in words."""
    assert unlock.call is not None
    result = await asyncio.wait_for(unlock.call, timeout=60)
    how = "the held call returned"
    if (error := _tool_error(result)) and error.get("code") == "approval_pending":
        # Approved after the gateway stopped holding the call: the client asks again, as the
        # answer tells it to, with the same arguments, and that call runs.
        result = await unlock.client.request(
            unlock.session, "tools/call", {"name": "set_state", "arguments": unlock.arguments}
        )
        how = "the call was answered 'waiting for approval'; the same call again"
        error = _tool_error(result)
    if error is not None:
        raise ApprovalDemoError(f"the unlock did not run after the approval: {error}")
    await _wait_for_state(ha, unlock.lock, "unlocked")
    states = await _states_since(ha, unlock.lock, unlock.started)
    unlocks = sum(1 for before, now in pairwise(states) if now == "unlocked" != before)
    if unlocks != 1:
        raise ApprovalDemoError(f"{unlock.lock} went through {states}: not unlocked exactly once")
    return f"{how} success; {unlock.name} ({unlock.lock}) unlocked once: {' → '.join(states)}"


async def take_screenshots(ha: HomeAssistantProcess, unlock: Unlock | None = None) -> list[Path]:
    """Log in through the login page and capture the pages; with `unlock`, the approval too."""
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
        if unlock is not None:
            # Signed in already: the request's time limit (60 s) runs from here.
            unlock.start()
            issue = await _pending_issue(ha)
            title = f"Approve: {issue['translation_placeholders']['summary']}"
            print(f"waiting for approval under Settings → Repairs: {title}", flush=True)
            shots += await _approve_in_repairs(page, ha, title, issue["issue_id"])
        await browser.close()
    return shots


async def run() -> None:
    """Create the dashboard, capture the pages, then approve an unlock in Repairs."""
    ha = _running_demo()
    await create_dashboard(ha, json.loads((DEMO_DIR / "entries.json").read_text()))
    lock, name = await _demo_lock(ha)
    client = McpSession((DEMO_DIR / "mcp_url").read_text().strip(), ha.access_token or "")
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=120)) as session:
        await client.request(
            session,
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},  # no elicitation: the person answers in Home Assistant
                "clientInfo": {"name": "Demo assistant", "version": "1"},
            },
        )
        await client.notify(session, "notifications/initialized")
        started = datetime.now(UTC).isoformat()
        unlock = Unlock(client, session, lock, name, started)
        try:
            for shot in await take_screenshots(ha, unlock):
                print(f"saved {shown(shot)}")
            print(await _finish_unlock(ha, unlock))
        finally:
            if unlock.call is not None and not unlock.call.done():
                unlock.call.cancel()


if __name__ == "__main__":
    try:
        asyncio.run(run())
    except ApprovalDemoError as err:
        sys.exit(f"approval: {err}")
    except FileNotFoundError:
        sys.exit(
            f"Start scripts/demo first: {shown(DEMO_DIR)}/mcp_url, token and login are missing."
        )
