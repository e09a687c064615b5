"""Take docs/images/browser-reasoning-path.png: a stored run opened in a real Neo4j Browser.

The Browser is the one `kag-neo4j server start --browser` serves; the commands typed into it are
exactly what `kag-neo4j trace RUN --browser` prints (style sheet, `:param` line, query). Needs
Playwright (`pip install playwright`) and a Chromium on the machine (`apt-get install chromium`);
Playwright drives that Chromium, so none of its own browser downloads are needed.

    kag-neo4j server start --browser && kag-neo4j quickstart
    python docs/images/browser_screenshot.py RUN_ID            # a run id that quickstart printed
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from playwright.sync_api import Page, sync_playwright

from kag_neo4j.browser import browser_query, param_line, style_sheet
from kag_neo4j.config import Settings
from kag_neo4j.store import server as local_server
from kag_neo4j.store.knowledge_base import KnowledgeBase

HERE = Path(__file__).resolve().parent


#: closes Browser's usage-data notice: the nearest button around its text
_CLOSE_USAGE_NOTICE = """() => {
  const text = [...document.querySelectorAll('*')].find(
      e => e.children.length === 0 && e.textContent.includes('To help make Neo4j Browser better'));
  for (let e = text; e; e = e.parentElement) {
    const button = e.querySelector('button, [role=button], svg');
    if (button) { button.closest('button, [role=button], a, div').click(); return; }
  }
}"""


def _run_in_editor(page: Page, command: str) -> None:
    """Paste ``command`` into Browser's editor (pasting, unlike typing, adds no closing brackets) and run it."""
    editor = page.locator("#monaco-main-editor textarea, .monaco-editor textarea").first
    editor.click()
    page.keyboard.press("Control+A")
    page.keyboard.press("Delete")
    page.evaluate("text => navigator.clipboard.writeText(text)", command)
    page.keyboard.press("Control+V")
    page.keyboard.press("Control+Enter")
    page.wait_for_timeout(1500)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_id")
    parser.add_argument("--out", type=Path, default=HERE / "browser-reasoning-path.png")
    parser.add_argument("--chromium", default=shutil.which("chromium") or shutil.which("chromium-browser"))
    parser.add_argument("--kb", default="default")
    args = parser.parse_args()
    settings = Settings()
    state = local_server.read_state(settings)
    if state is None or state.browser_url is None:
        raise SystemExit("start the local server with Neo4j Browser first: kag-neo4j server start --browser")
    auth = local_server.instance_auth(settings)
    if auth is None:
        raise SystemExit("the local server has no password on record; restart it with kag-neo4j server start")
    kb = KnowledgeBase(args.kb)
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=args.chromium)
        context = chromium.new_context(viewport={"width": 1600, "height": 1000}, device_scale_factor=1)
        context.grant_permissions(["clipboard-read", "clipboard-write"])
        page = context.new_page()
        page.goto(state.browser_url)
        page.locator("input[data-testid='password']").fill(auth[1])
        page.locator("button[data-testid='connect']").click()
        page.wait_for_selector("text=You are connected as user", timeout=30_000)
        _run_in_editor(page, ":clear")
        _run_in_editor(page, ":style " + style_sheet(kb))
        _run_in_editor(page, param_line(args.run_id))
        _run_in_editor(page, browser_query(kb).strip())
        page.wait_for_selector("svg .node", timeout=30_000)
        page.evaluate(_CLOSE_USAGE_NOTICE)
        page.locator("article[data-testid='frame']").first.locator("button[title='Fullscreen']").click()
        page.wait_for_timeout(6000)  # let the force layout settle
        for _ in range(2):  # the graph fills a fifth of the frame at first
            page.locator("button[aria-label='zoom-in']").first.click()
            page.wait_for_timeout(800)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(args.out))
        chromium.close()
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
