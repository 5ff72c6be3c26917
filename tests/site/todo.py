"""The fixture site's stateful pages: a todo list kept in localStorage (one field typed into again and again, a select,
checkboxes, a link to another page and one that opens the demo shop's help in a new tab) and a cart (/basket) kept in
a cookie and localStorage."""

from __future__ import annotations

from typing import Any

CART_COOKIE = "acme_cart"

_TODO_JS = """
const KEY = "acme_todos", list = document.getElementById("list"), form = document.getElementById("add");
const load = () => JSON.parse(localStorage.getItem(KEY) || "[]");
function render() {
  const todos = load();
  list.replaceChildren(...todos.map((t, i) => {
    const li = document.createElement("li"), box = document.createElement("input"), text = document.createElement("span");
    box.type = "checkbox"; box.checked = t.done; box.setAttribute("aria-label", "Done: " + t.title);
    box.addEventListener("change", () => {
      todos[i].done = box.checked; localStorage.setItem(KEY, JSON.stringify(todos)); render();
    });
    text.textContent = t.title + " (" + t.priority + ")";
    li.append(box, " ", text);
    return li;
  }));
  const left = todos.filter(t => !t.done).length;
  document.getElementById("count").textContent = left + (left === 1 ? " item left" : " items left");
}
form.addEventListener("submit", (event) => {
  event.preventDefault();
  const field = form.querySelector("input[type=text]"), title = field.value.trim();
  if (!title) return;
  const todos = load();
  todos.push({title, priority: document.getElementById("priority").value, done: false});
  localStorage.setItem(KEY, JSON.stringify(todos));
  field.value = "";
  render();
});
render();
"""

_SUMMARY_JS = """
const todos = JSON.parse(localStorage.getItem("acme_todos") || "[]");
document.getElementById("summary").textContent =
  todos.length + " todo(s), " + todos.filter(t => t.done).length + " done: " + todos.map(t => t.title).join(", ");
"""

_CART_JS = """
const saved = Number(localStorage.getItem("acme_cart_saved") || "0");
document.getElementById("saved").textContent = "Saved for later: " + saved;
document.getElementById("save").addEventListener("click", () => {
  localStorage.setItem("acme_cart_saved", String(saved + 1)); location.reload();
});
"""


def todo_form(version: int) -> str:
    """The form for a new todo; version 2 is the same form rebuilt (another id, label and place), as a new release might."""
    if version == 2:
        field = (
            '<div class="field"><label for="task-title">Task</label>'
            '<input id="task-title" name="task" type="text" placeholder="What needs doing?" autocomplete="off"></div>'
        )
    else:
        field = (
            '<label for="new-todo">New todo</label>'
            '<input id="new-todo" name="title" type="text" placeholder="What needs to be done?" autocomplete="off">'
        )
    return (
        '<form id="add">' + field + '<label for="priority">Priority</label><select id="priority" name="priority">'
        "<option>Normal</option><option>High</option><option>Low</option></select></form>"
    )


def todos_page(version: int) -> tuple[str, str, str]:
    """(title, body, script) of the todo list."""
    body = (
        '<h1>Todos</h1><p><a href="/">Home</a> · <a href="/todos/summary">Summary</a> · '
        '<a href="/help" target="_blank">Help</a></p>' + todo_form(version) + '<ul id="list"></ul><p id="count">0 items left</p>'
    )
    return "Todos - Acme", body, _TODO_JS


def summary_page() -> tuple[str, str, str]:
    return "Todo summary - Acme", '<h1>Summary</h1><p><a href="/todos">Back to the list</a></p><p id="summary"></p>', _SUMMARY_JS


def cart_page(items: int) -> tuple[str, str, str]:
    """A cart whose count lives in a cookie (server side) and whose saved-for-later count lives in localStorage."""
    body = (
        f'<h1>Cart</h1><p><a href="/">Home</a></p><p id="items">Cart: {items} item(s)</p>'
        '<form method="post" action="/basket/add"><button type="submit">Add to cart</button></form>'
        '<p id="saved">Saved for later: 0</p><button type="button" id="save">Save for later</button>'
    )
    return "Cart - Acme", body, _CART_JS


def cart_items(cookie_header: str) -> int:
    for part in cookie_header.split(";"):
        name, _, value = part.strip().partition("=")
        if name == CART_COOKIE and value.isdigit():
            return int(value)
    return 0


def todo_turns(site_url: str) -> list[dict[str, Any]]:
    """The scripted agent's steps for the todo list (see preview_qa/demo/scripted_llm.py); 'What needs' finds the new-todo field
    on both versions of the form, so that the agent passes where a replay of version 1 drifts on version 2."""
    return [
        {"actions": [{"input": {"element": "What needs", "text": "Walk the dog"}}, {"send_keys": {"keys": "Enter"}}]},
        {
            "actions": [
                {"select_dropdown": {"element": "Priority", "text": "High"}},
                {"input": {"element": "What needs", "text": "Feed the cat"}},
                {"send_keys": {"keys": "Enter"}},
            ]
        },
        {"actions": [{"input": {"element": "What needs", "text": "Water the plants"}}, {"send_keys": {"keys": "Enter"}}]},
        {"actions": [{"click": {"element": "Done: Walk the dog"}}]},
        {"actions": [{"click": {"element": "Help"}}]},  # target=_blank: a new tab
        {"actions": [{"click": {"element": "Got it"}}]},
        {"actions": [{"navigate": {"url": f"{site_url}/todos/summary"}}]},
        {"done": {"status": "pass", "reason": "The summary lists the three todos, one done."}},
    ]
