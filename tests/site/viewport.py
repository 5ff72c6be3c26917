"""The fixture site's /viewport page: it shows what the browser gives it (its inner size, scale, language and user
agent) as text, so that a check can compare the agent's page with its replay's."""

from __future__ import annotations

_JS = """
const show = () => {
  document.getElementById("size").textContent = "Viewport " + innerWidth + " x " + innerHeight + " at " + devicePixelRatio;
  document.getElementById("language").textContent = "Language " + navigator.language;
  document.getElementById("agent").textContent = "User agent " + navigator.userAgent;
};
show();
addEventListener("resize", show);
"""


def viewport_page() -> tuple[str, str, str]:
    """(title, body, script) of the page."""
    # A phone lays out a page without a viewport tag 980 px wide; Chromium reads the tag wherever it is.
    body = '<meta name="viewport" content="width=device-width"><h1>What this browser shows</h1>'
    return "Viewport", body + '<p id="size"></p><p id="language"></p><p id="agent"></p>', _JS
