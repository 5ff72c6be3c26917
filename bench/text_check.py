"""What one look of a text check costs in the page (agent/page/shown.js's read of a document, which the check repeats
until its text shows): the rule of this tree against the rule of an earlier commit (`--before`, default HEAD~1's
shown.js), on pages of 1,000 and 12,500 elements and on one covered by a dialog (the cover test's worst case: every
line in view is hit-tested and found covered). Goal: under 10 ms a check on the 1,000-node page. Prints figures;
asserts nothing."""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
from pathlib import Path

from playwright.async_api import Page, async_playwright

from preview_qa.agent.browsers.chromium import find_chromium
from preview_qa.agent.page.shown import rule

ROOT = Path(__file__).resolve().parent.parent
OLD_FILES = ("src/preview_qa/agent/page/shown.js", "src/preview_qa/agent/page/layers.js")


def _rows(n: int) -> str:
    return "".join(f"<tr><td>Order {i}</td><td>Widget model {i % 97}</td><td>${i}.99</td></tr>" for i in range(n))


def pages() -> dict[str, str]:
    """Pages of the size the goal names: a shop page of about 1,000 elements, a 12,500-element table, and the first
    under a dialog that covers the whole viewport."""
    shop = (
        "<header style='position:sticky;top:0;background:#fff'><nav>"
        + "".join(f"<a href='/p{i}'>Link {i}</a> " for i in range(40))
        + "</nav></header><main><h1>Orders</h1><table>"
        + _rows(240)
        + "</table><p class='status'></p></main><style>.status::after{content:'Settings saved'}</style>"
    )
    dialog = "<div role=dialog style='position:fixed;inset:0;background:#fff'><p>Your session has expired</p></div>"
    return {"1,000 elements": shop, "12,500 elements": f"<table>{_rows(3125)}</table>", "1,000 under a dialog": shop + dialog}


def rule_at(rev: str) -> str:
    """The rule's factory as it was at `rev` (before layers.js, shown.js alone was the factory)."""
    shown, layers = (_show(rev, path) for path in OLD_FILES)
    return f"(() => ({shown.strip()})({layers.strip()}))" if layers else shown


def _show(rev: str, path: str) -> str:
    done = subprocess.run(["git", "show", f"{rev}:{path}"], cwd=ROOT, capture_output=True, text=True, check=False)
    return done.stdout if done.returncode == 0 else ""


async def look_ms(page: Page, factory: str, text: str, repeat: int) -> list[float]:
    """Milliseconds of each of `repeat` looks for `text`, timed in the page."""
    return list(
        await page.evaluate(
            f"""([text, n]) => {{ const r = ({factory})(), out = [];
              for (let i = 0; i < n; i++) {{ const t0 = performance.now();
                r.read(document).lines.some((l) => r.fold(l.text).includes(text.toLowerCase()));
                out.push(performance.now() - t0); }}
              return out; }}""",
            [text, repeat],
        )
    )


async def main(before: str, repeat: int) -> None:
    rules = {"before": rule_at(before), "now": rule()}
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=find_chromium(None, os.environ))
        page = await browser.new_page(viewport={"width": 1280, "height": 720})
        for name, html in pages().items():
            await page.set_content(html)
            count = await page.evaluate("document.querySelectorAll('*').length")
            for label, factory in rules.items():
                times = await look_ms(page, factory, "Settings saved", repeat)
                print(
                    f"{name} ({count} elements), rule {label}: least {min(times):.2f} ms, median "
                    f"{statistics.median(times):.2f} ms a look over {repeat} (goal: under 10 ms on 1,000 elements)"
                )
        await browser.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--before", default="HEAD~1", help="the commit whose rule to compare with")
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    asyncio.run(main(args.before, args.repeat))
