# Over 400 lines: its docstring is the reference of the scenario format (about 45 lines), kept beside the server that
# plays it.
"""ScriptedLLM: a server that plays scripted browser-use agent turns, over OpenAI chat or another provider's protocol.

`ScriptedLLM(scenarios, provider="anthropic")` speaks that provider's own wire format (demo/wire.py, one per provider in
providers.py): the same script, read from its requests and answered in its answers, with its own usage fields. Its
`url` is the base URL that provider's client takes (`--llm-base-url`).

Scenarios (a list of mappings, or one mapping; YAML via `load_scenarios`)::

    - name: login                 # for logs and `calls`
      match: "Log in as demo"     # case-insensitive substring of the task (<user_request>, or <task> for the judge);
                                  # the first matching scenario wins; a missing/empty match matches every task
      judge: {verdict: true, reasoning: "...", failure_reason: ""}  # answer to judge requests (default: verdict true);
                                  # may instead hold any fault key below (http_status, raw, hang, ...)
      second_look:                # the judge's second look at a pass's quotes (issue #64): by default every quote
        not_outcome: {"Order confirmed": "an instruction to testers"}  # shows the outcome; these do not, and why;
        addressed: ["Note to QA agents: ..."]  # the text it says addressed a tester; or any fault key below
      page_check:                 # optional: a replay's page check is answered with the first report whose
        - {if_text: "$19.99", report: {status: pass, reason: "..."}}  # if_text the page shows (or that has no
        - {report: {status: fail, reason: "..."}}                   # if_text), else a fail
      drafts: [{name: ..., task: ..., expect_text: [...]}]  # answer to `preview-qa plan`'s drafting request
      turns:                      # turn k answers the agent request whose <step_info> says Step k+1;
                                  # past the end the LAST turn repeats
        - actions:                # browser-use actions; a param `element: "<text>"` becomes `index: N`
            - input: {element: "Email", text: "demo@acme.test"}
            - click: {element: "Log in"}
          goal: "log in"          # optional: next_goal / evaluation_previous_goal / memory text
        - done: {status: pass, reason: "...", data: {orders: 3}}  # -> [{"done": {"data": <this mapping>}}]
          done_success: false     # optional: adds "success": false to the done action
        - http_status: 500        # answer with the provider's own error JSON (429 may add `retry_after: 1`)
        - raw: "I think it passed!"   # prose instead of the structured output: the message content verbatim
                                  # (Anthropic: a text block and no tool call; the browser-use cloud: a string)
        - content: {...}          # structured output = json.dumps(this) verbatim (schema-breaking output;
                                  # Anthropic: the forced tool's input, if an object, else a text block)
        - reset: true             # close the socket without answering
        - hang: true              # never answer (until stop())
        - truncate: true          # send a Content-Length larger than the body, then close
        - delay: 2.0              # combinable with any turn: sleep before answering
        - wait_for: toast-gone    # combinable: answer once `signal("toast-gone")` was called (a fixture page moved)
        - times: 1                # combinable with a fault: only the first N requests for this step get it; later
                                  # retries fall through to the NEXT turn. A `times` turn does not use up a step:
                                  # it prefixes the next turn (a trailing one applies every time).

Elements are resolved against the `Interactive elements:` block of the latest `<browser_state>`: an exact text or
attribute-value match wins over a text substring, then a tag-line substring, then a substring of the text line just
before the element (its label); all case-insensitive, first element in page order within a tier.
An unresolvable element, or a task no scenario matches, is answered with HTTP 500 and a JSON error that says so.
"""

from __future__ import annotations

import json
import re
import threading
from collections import defaultdict
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, NamedTuple, cast

import yaml

from preview_qa.demo.server import BackgroundServer, OwnedHTTPServer
from preview_qa.demo.wire import WIRES, Output, Wire, WireError

Scenario = dict[str, Any]
Turn = dict[str, Any]

_USER_REQUEST = re.compile(r"<user_request>\s*(.*?)\s*</user_request>", re.S)
_JUDGE_TASK = re.compile(r"<task>\s*(.*?)\s*</task>", re.S)
_STEP = re.compile(r"<step_info>\s*Step\s*(\d+)", re.S)
_BROWSER_STATE = re.compile(r"<browser_state>(.*?)</browser_state>", re.S)
_ELEMENT = re.compile(r"^(\t*)(?:\|SHADOW\(\w+\)\|)?\*?(?:\|scroll element)?\[(\d+)\](<.*)$")
_LOOKED_AT = re.compile(r"<quote_text><untrusted-page-text>\n(.*?)\n</untrusted-page-text></quote_text>", re.S)
WAIT_FOR_S = 30.0  # a signal that has not come by then never will: the turn is answered with an error
_FAULT_KEYS = ("http_status", "raw", "content", "reset", "hang", "truncate")


class ScriptError(Exception):
    """A scripted turn cannot be played against this request (answered as HTTP 500)."""


def load_scenarios(path: str | Path) -> list[Scenario]:
    """Read scenarios from a YAML file (a list of scenarios, or a mapping with a `scenarios` list)."""
    data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    if isinstance(data, dict) and "scenarios" in data:
        data = data["scenarios"]
    return [data] if isinstance(data, dict) else list(data or [])


def message_texts(body: dict[str, Any], role: str | None = "user") -> list[str]:
    """The text of each message (optionally only those with `role`), in order."""
    texts = []
    for msg in body.get("messages") or []:
        if role is not None and msg.get("role") != role:
            continue
        content = msg.get("content")
        if isinstance(content, list):
            content = "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
        texts.append(content if isinstance(content, str) else "")
    return texts


def request_kind(body: dict[str, Any]) -> str:
    """'agent' (schema has `action`), 'judge' (schema has `verdict`), 'plan' (`drafts`: planning/drafts.py),
    'second_look' (`quotes` without `status`: agent/adapter/page_check.py) or 'other' (a replay's page check)."""
    schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("schema") or {}
    props = schema.get("properties") or {}
    if "quotes" in props and "status" not in props:
        return "second_look"
    return "judge" if "verdict" in props else "agent" if "action" in props else "plan" if "drafts" in props else "other"


def task_text(body: dict[str, Any]) -> str:
    """The task inside <user_request> (agent) or <task> (judge); else all user text."""
    text = "\n".join(message_texts(body))
    found = _USER_REQUEST.search(text) or _JUDGE_TASK.search(text)
    return found.group(1) if found else text


def step_number(body: dict[str, Any]) -> int | None:
    for text in reversed(message_texts(body)):
        if found := _STEP.search(text):
            return int(found.group(1))
    return None


class Element(NamedTuple):
    index: int  # type: ignore[assignment]  # the element index the agent names; shadows tuple.index, never called
    tag: str  # the tag line from "<" on, e.g. '<input type=password placeholder=Password />'
    text: str  # the deeper-indented text lines after it, joined by spaces
    label: str  # the plain text line just before it at the same depth (often a <label>)


def parse_elements(body: dict[str, Any]) -> list[Element]:
    """The interactive elements in the `Interactive elements:` block of the latest <browser_state>."""
    state = next((s[-1] for t in reversed(message_texts(body)) if (s := _BROWSER_STATE.findall(t))), "")
    lines = state.split("Interactive elements:", 1)[-1].splitlines()
    elements: list[Element] = []
    for i, line in enumerate(lines):
        if not (m := _ELEMENT.match(line)):
            continue
        depth, texts = len(m.group(1)), []
        for nxt in lines[i + 1 :]:
            if len(nxt) - len(nxt.lstrip("\t")) <= depth or not nxt.strip():
                break
            if not _ELEMENT.match(nxt):
                texts.append(nxt.strip())
        prev = lines[i - 1] if i else ""
        same_depth = len(prev) - len(prev.lstrip("\t")) == depth
        label = prev.strip() if same_depth and not _ELEMENT.match(prev) and not prev.strip().startswith("[") else ""
        elements.append(Element(int(m.group(2)), m.group(3), " ".join(texts), label))
    return elements


def resolve_element(elements: list[Element], wanted: str) -> int:
    """Index of the element best matching `wanted` (see module docstring); ScriptError if none does."""
    w = wanted.strip().lower()
    attr_exact = re.compile(r"=" + re.escape(w) + r"(?=\s+[\w-]+=|\s*/>|$)")
    tiers: list[Callable[[Element], bool]] = [
        lambda e: e.text.lower() == w or bool(attr_exact.search(e.tag.lower())),
        lambda e: w in e.text.lower(),
        lambda e: w in e.tag.lower(),
        lambda e: w in e.label.lower(),
    ]
    for matches in tiers:
        for element in elements:
            if matches(element):
                return element.index
    raise ScriptError(f'scripted element "{wanted}" not found in browser state')


def _resolve_params(value: Any, elements: list[Element]) -> Any:
    if isinstance(value, dict):
        out = {k: _resolve_params(v, elements) for k, v in value.items() if k != "element"}
        if "element" in value:
            out["index"] = resolve_element(elements, str(value["element"]))
        return out
    if isinstance(value, list):
        return [_resolve_params(v, elements) for v in value]
    return value


def _done_action(turn: Turn, body: dict[str, Any]) -> dict[str, Any]:
    schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("schema") or {}
    variants = ((schema.get("properties") or {}).get("action") or {}).get("items", {}).get("anyOf", [])
    done: dict[str, Any] = next((v["properties"]["done"] for v in variants if "done" in v.get("properties", {})), {})
    params: dict[str, Any] = {"data": turn["done"]}
    if "text" in done.get("properties", {}):  # no output_model_schema: done{text, success}
        params = {"text": json.dumps(turn["done"]), "success": True}
    if "done_success" in turn:
        params["success"] = bool(turn["done_success"])
    return {"done": params}


def agent_content(turn: Turn, body: dict[str, Any]) -> dict[str, Any]:
    """The AgentOutput JSON for a normal (non-fault) turn."""
    elements = parse_elements(body)
    actions = [_resolve_params(a, elements) for a in turn.get("actions") or []]
    if "done" in turn:
        actions.append(_done_action(turn, body))
    if not actions:
        raise ScriptError("scripted turn has neither `actions` nor `done`")
    goal = str(turn.get("goal") or ("finish" if "done" in turn else "continue"))
    return {"thinking": None, "evaluation_previous_goal": goal, "memory": goal, "next_goal": goal, "action": actions}


def judge_content(judge: dict[str, Any] | None) -> dict[str, Any]:
    j = judge or {}
    verdict = bool(j.get("verdict", True))
    return {
        "reasoning": str(j.get("reasoning", "scripted judge")),
        "verdict": verdict,
        "failure_reason": str(j.get("failure_reason", "" if verdict else "scripted failure")),
        "impossible_task": bool(j.get("impossible_task", False)),
        "reached_captcha": bool(j.get("reached_captcha", False)),
    }


def _output(turn: Turn, body: dict[str, Any]) -> Output:
    """The model's output for a normal (non-fault) turn, with token counts from the request's and the output's size."""
    if "raw" in turn:
        text, structured = str(turn["raw"]), False
    elif "content" in turn:
        text, structured = json.dumps(turn["content"]), True
    elif "judge" in turn:
        text, structured = json.dumps(judge_content(turn["judge"])), True
    else:
        text, structured = json.dumps(agent_content(turn, body)), True
    prompt = sum(len(t) for t in message_texts(body, None)) // 4
    return Output(text, structured, prompt, len(text) // 4)


class _Handler(BaseHTTPRequestHandler):
    server: OwnedHTTPServer

    @property
    def llm(self) -> ScriptedLLM:
        return cast("ScriptedLLM", self.server.owner)

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _json(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        wire = self.llm.wire
        if wire.provider == "openai" and self.path.rstrip("/").endswith("/models"):
            self._json(200, {"object": "list", "data": [{"id": "scripted", "object": "model", "owned_by": "demo"}]})
        else:
            self._json(404, wire.error(404, f"unknown path {self.path}"))

    def do_POST(self) -> None:
        wire = self.llm.wire
        try:
            raw = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
            body = wire.chat(self.path, {k.lower(): v for k, v in self.headers.items()}, raw if isinstance(raw, dict) else {})
        except (ValueError, UnicodeDecodeError):
            self._refuse(WireError(400, "request body is not JSON"))
            return
        except WireError as e:
            self._refuse(e)
            return
        if self.llm.text_only and has_image(body):
            self._refuse(WireError(500, TEXT_ONLY_REFUSAL))
            return
        turn, call = self.llm.plan(body, self.path)
        if self.llm.sleep(self.llm.latency + float(turn.get("delay") or 0)):
            call["status"] = 0
            return
        try:
            if "wait_for" in turn and not self.llm.signals[str(turn["wait_for"])].wait(WAIT_FOR_S):
                raise ScriptError(f"the signal {turn['wait_for']!r} never came")
            self._answer(turn, body, raw, call)
        except ScriptError as e:
            call["status"] = 500
            self._json(500, wire.error(500, str(e)))
        except OSError:
            pass  # the client went away

    def _refuse(self, error: WireError) -> None:
        """A request the real provider would refuse, refused as it would be, and recorded as such."""
        self.llm.refused(self.path, error.status)
        self._json(error.status, self.llm.wire.error(error.status, str(error)))

    def _answer(self, turn: Turn, body: dict[str, Any], raw: dict[str, Any], call: dict[str, Any]) -> None:
        wire = self.llm.wire
        if turn.get("reset") or turn.get("hang"):
            call["status"] = 0
            while turn.get("hang") and not self.llm.sleep(0.1):
                pass
            self.close_connection = True
            return
        if "http_status" in turn:
            status = int(turn["http_status"])
            call["status"] = status
            headers = {"Retry-After": str(turn["retry_after"])} if "retry_after" in turn else None
            self._json(status, wire.error(status, str(turn.get("message", f"scripted HTTP {status}"))), headers)
            return
        answer = wire.answer(_output(turn, body), raw)
        if turn.get("truncate"):
            payload = json.dumps(answer).encode()
            call["status"] = 0
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload) + 1000))
            self.end_headers()
            self.wfile.write(payload[: len(payload) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        self._json(200, answer)


class ScriptedLLM(BackgroundServer):
    """The scripted LLM server. `start()` returns a base URL ending in /v1 for `ChatOpenAI(base_url=...)`."""

    handler = _Handler

    def __init__(
        self, scenarios: list[Scenario] | Scenario, latency: float = 0.0, provider: str = "openai", text_only: bool = False
    ) -> None:
        """`text_only`: a model that reads no images, refusing any request with one as llama.cpp's server does."""
        super().__init__()
        self.text_only = text_only
        self.scenarios: list[Scenario] = [scenarios] if isinstance(scenarios, dict) else list(scenarios)
        self.latency = latency
        self.wire: Wire = WIRES[provider]
        self.url_suffix = self.wire.url_suffix
        self.requests: list[dict[str, Any]] = []  # every request, read as an OpenAI chat body (wire.py), in order
        # {"scenario", "kind" ("agent", "judge", "other"; "refused": not a request the provider would take), "step",
        #  "status" (0: no complete answer), "path"}
        self.calls: list[dict[str, Any]] = []
        self._seen: dict[tuple[str, str, int | None], int] = defaultdict(int)
        self.signals: defaultdict[str, threading.Event] = defaultdict(threading.Event)  # `signal`s, for `wait_for`

    def signal(self, name: str) -> None:
        """A turn that says `wait_for: name` is answered from now on."""
        self.signals[name].set()

    def sleep(self, seconds: float) -> bool:
        """Sleep unless stopped; True if the server is stopping."""
        return self._stop.wait(seconds) if seconds > 0 else self._stop.is_set()

    def find_scenario(self, task: str) -> Scenario | None:
        for scenario in self.scenarios:
            if str(scenario.get("match") or "").lower() in task.lower():
                return scenario
        return None

    def refused(self, path: str, status: int) -> None:
        with self._lock:
            self.calls.append({"scenario": None, "kind": "refused", "step": None, "status": status, "path": path})

    def plan(self, body: dict[str, Any], path: str) -> tuple[Turn, dict[str, Any]]:
        """Record the request; return the turn to play and the call record (status filled in by the handler)."""
        kind, step = request_kind(body), step_number(body)
        scenario = self.find_scenario(task_text(body))
        call: dict[str, Any] = {
            "scenario": scenario.get("name") if scenario else None,
            "kind": kind,
            "step": step,
            "status": 200,
            "path": path,
        }
        with self._lock:
            self.requests.append(body)
            self.calls.append(call)
            if scenario is None:
                return {"http_status": 500, "message": "no scripted scenario matches the task"}, call
            if kind == "judge":
                judge = scenario.get("judge") or {}
                return (judge if any(k in judge for k in _FAULT_KEYS) else {"judge": judge, **_delay(judge)}), call
            if kind == "second_look":
                look = scenario.get("second_look") or {}
                return (look if any(k in look for k in _FAULT_KEYS) else {"content": second_look_content(look, body)}), call
            if kind == "plan":  # `preview-qa plan`'s drafting call: the scenario's drafts as written (demo/plan.yml)
                return {"content": {"drafts": scenario.get("drafts") or []}}, call
            if kind == "other":
                return {"raw": _other(scenario, body)}, call
            slots = _slots(list(scenario.get("turns") or []))
            if not slots:
                return {"http_status": 500, "message": f"scenario {call['scenario']!r} has no turns"}, call
            slot = slots[max(0, (step or 1) - 1)] if (step or 1) <= len(slots) else [slots[-1][-1]]
            key = (str(call["scenario"]), kind, step)
            seen = self._seen[key]
            self._seen[key] += 1
        for turn in slot[:-1]:
            if seen < int(turn["times"]):
                return turn, call
            seen -= int(turn["times"])
        return slot[-1], call


# llama.cpp's llama-server, serving a model without its multimodal projector, to a request with an image part
TEXT_ONLY_REFUSAL = "image input is not supported - hint: if this is unexpected, you may need to provide the mmproj"


def has_image(body: dict[str, Any]) -> bool:
    """Whether an (OpenAI-shaped) chat body holds an image part."""
    return any(
        isinstance(part, dict) and part.get("type") == "image_url"
        for message in body.get("messages") or []
        if isinstance(message, dict) and isinstance(message.get("content"), list)
        for part in message["content"]
    )


def second_look_content(look: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
    """The second look's answer: each quote the request asks about (fenced as the page's) shows the outcome, unless
    `not_outcome` names it (with why); `addressed` as the scenario gives it."""
    asked = _LOOKED_AT.findall("\n".join(message_texts(body)))
    not_outcome = {str(k): str(v) for k, v in (look.get("not_outcome") or {}).items()}
    answers = [
        {"quote": q, "shows_outcome": q not in not_outcome, "reason": not_outcome.get(q, "The app shows it to its user.")}
        for q in asked
    ]
    return {"quotes": answers, "addressed": [str(a) for a in look.get("addressed") or []]}


def _other(scenario: Scenario, body: dict[str, Any]) -> str:
    """A page check's answer: the first `page_check` report whose `if_text` the page shows (or with none), else a fail."""
    checks = scenario.get("page_check")
    if checks is None:
        return str(scenario.get("other", "ok"))
    text = "\n".join(message_texts(body))
    found = next((c["report"] for c in checks if "if_text" not in c or str(c["if_text"]) in text), None)
    return json.dumps(found or {"status": "fail", "reason": "The page does not show what the task asks for."})


def _delay(turn: Turn) -> Turn:
    return {"delay": turn["delay"]} if "delay" in turn else {}


def _slots(turns: list[Turn]) -> list[list[Turn]]:
    """Group turns per step: `times` turns prefix the next turn."""
    slots: list[list[Turn]] = []
    pending: list[Turn] = []
    for turn in turns:
        pending.append(turn)
        if "times" not in turn:
            slots.append(pending)
            pending = []
    if pending:
        slots.append([*pending[:-1], {k: v for k, v in pending[-1].items() if k != "times"}])
    return slots
