"""The names of the agent's actions as its history records them, shared by the agent's history, the evidence, the
replay and the export (none of them reaching into another's module for them)."""

from __future__ import annotations

# Playwright's key names for what browser-use's send_keys writes: the replay presses them, an export writes them.
KEYS = {
    "ctrl": "Control",
    "control": "Control",
    "cmd": "Meta",
    "command": "Meta",
    "meta": "Meta",
    "alt": "Alt",
    "option": "Alt",
    "shift": "Shift",
    "esc": "Escape",
    "escape": "Escape",
    "enter": "Enter",
    "return": "Enter",
    "tab": "Tab",
    "space": "Space",
    "backspace": "Backspace",
    "delete": "Delete",
}

# Actions that change nothing on the page: replaying them needs an LLM (extract) or touches only the agent's own notes.
READS_ONLY = frozenset(
    {
        "extract",
        "search_page",
        "find_elements",
        "screenshot",
        "save_as_pdf",
        "dropdown_options",
        "read_file",
        "write_file",
        "replace_file",
        "read_mail",  # the test's newest mail, read by the agent (agent/adapter/build.py)
    }
)
VERDICT = "done"  # the cached verdict is never replayed: a replay is judged afresh on the live page
NAME_LIMIT = 80  # an element's name in a step's record (and a replay's) is cut here
