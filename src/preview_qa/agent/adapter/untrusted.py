"""Page text as the agent's model reads it: fenced as untrusted data, as the MCP server fences it for coding agents
(mcp/fence.py), so that no page can close the fence and speak as preview-qa. The agent's step message holds the
page's state in browser-use's own sections (agent/prompts.py's AgentMessagePrompt: `<browser_state>`, `<read_state>`);
each is fenced from its opening tag to its last closing tag, so a page that writes a closing tag of its own stays
inside, and every copy of the fence's marker in it is made inert."""

from __future__ import annotations

import re
from typing import Any

from browser_use.llm.messages import ContentPartTextParam, UserMessage

OPEN = "<untrusted-page-text>"
CLOSE = "</untrusted-page-text>"
SECTIONS = ("browser_state", "read_state")  # browser-use's sections of the step message that hold what the pages show
# A copy of either marker inside the text, as a reader might take it for one (mcp/fence.py's rule, with this marker)
_MARKER = re.compile(r"[<\uff1c\ufe64\u2039\u2329\u27e8\u3008]\s*/?\s*untrusted[\W_]*page[\W_]*text", re.IGNORECASE)


def escape(text: str) -> str:
    """`text` with every copy of the fence's marker made inert (its `<` written `&lt;`)."""
    return _MARKER.sub(lambda m: "&lt;" + m.group()[1:], text)


def fence(text: str) -> str:
    """The page's text between the markers, each on a line of its own."""
    return f"{OPEN}\n{escape(text)}\n{CLOSE}"


def fence_sections(text: str) -> str:
    """The step message with each page section's content fenced (a message without them as it is)."""
    at = 0
    for name in SECTIONS:
        opening, closing = f"<{name}>\n", f"\n</{name}>"
        start = text.find(opening, at)
        end = text.rfind(closing)
        if start < 0 or end < start + len(opening):
            continue
        inner = text[start + len(opening) : end]
        text = text[: start + len(opening)] + fence(inner) + text[end:]
        at = start + len(opening) + len(fence(inner))
    return text


def fenced_messages(messages: list[Any]) -> list[Any]:
    """Copies of the agent's messages with the page sections of each user message fenced."""
    out = []
    for message in messages:
        if isinstance(message, UserMessage):
            content = message.content
            if isinstance(content, str):
                message = message.model_copy(update={"content": fence_sections(content)})
            else:
                parts = [
                    p.model_copy(update={"text": fence_sections(p.text)}) if isinstance(p, ContentPartTextParam) else p
                    for p in content
                ]
                message = message.model_copy(update={"content": parts})
        out.append(message)
    return out
