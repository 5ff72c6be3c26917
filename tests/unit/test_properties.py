"""Property tests (hypothesis): no agent output can pass what it should not, and no manifest can crash the loader."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from preview_qa.errors import ManifestError
from preview_qa.manifest import loader as manifest
from preview_qa.manifest.models import TestSpec
from preview_qa.reporters.junit import render
from preview_qa.results import ExpectationOutcome, RunResult, Status, TestResult
from preview_qa.verdict.agent_run import AgentRun, DoneReport, JudgeReport, LLMFault
from preview_qa.verdict.checks.data_checks import check_data
from preview_qa.verdict.decide import decide
from tests.conftest import run_preview_qa
from tests.repo import JUNIT_SCHEMA
from tests.strategies import RAN, any_text, non_utf8, report_objects, weird_text

PURE = settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# --- generators (the shared ones are in tests/strategies.py) ----------------------------------------------------


def _serialise(obj: Any, how: str) -> str:
    if how == "json":
        return json.dumps(obj, ensure_ascii=False)
    if how == "truncated":
        text = json.dumps(obj)
        return text[: max(0, len(text) - 3)]
    return f"Here is my verdict: {json.dumps(obj)}"  # prose around JSON


done_texts = st.one_of(
    st.builds(_serialise, report_objects(), st.sampled_from(["json", "json", "truncated", "prose"])),
    weird_text,
    st.none(),
)
dones = st.builds(DoneReport, text=done_texts, success=st.one_of(st.none(), st.booleans()))
faults = st.lists(
    st.builds(
        LLMFault,
        kind=st.sampled_from(["provider", "invalid_output"]),
        purpose=st.sampled_from(["agent", "judge"]),
        status=st.one_of(st.none(), st.integers(100, 599)),
        message=weird_text,
    ),
    max_size=3,
)
outcomes = st.lists(
    st.builds(
        ExpectationOutcome, check=st.sampled_from(["url", "text", "title"]), expected=any_text, found=any_text, ok=st.booleans()
    ),
    max_size=3,
)
specs = st.builds(
    lambda schema, data, judge: TestSpec(name="t", task="check", judge=judge, expect={"data": data}, output_schema=schema),
    st.sampled_from([None, {"type": "object", "properties": {"price": {"type": "string"}}, "required": ["price"]}]),
    st.sampled_from([{}, {"price": "$19.99"}, {"a.b": 3}]),
    st.booleans(),
)
traces = st.builds(
    AgentRun,
    done=st.one_of(st.none(), dones),
    max_steps_reached=st.booleans(),
    llm_faults=faults,
    judge=st.one_of(st.none(), st.builds(JudgeReport, verdict=st.booleans(), reason=weird_text)),
    judge_requested=st.booleans(),
    infrastructure_error=st.one_of(st.none(), st.none(), weird_text),
    expectations=outcomes,
)


def _count(name: str) -> None:
    RAN[name] = RAN.get(name, 0) + 1


@pytest.fixture(scope="module", autouse=True)
def _print_counts() -> Any:
    yield
    print("\ngenerated cases per property:", json.dumps(RAN))


# --- the verdict ------------------------------------------------------------------------------------------------


def _may_pass(spec: TestSpec, trace: AgentRun) -> bool:
    """An independent statement of when a pass is allowed at all (a necessary condition, written without verdict/decide.py)."""
    done = trace.done
    if trace.infrastructure_error or done is None or done.success is False or done.text is None:
        return False
    try:
        obj = json.loads(done.text)
    except ValueError:
        return False
    if not (
        isinstance(obj, dict)
        and set(obj) <= {"status", "reason", "data"}
        and obj.get("status") == "pass"
        and isinstance(obj.get("reason"), str)
        and obj["reason"]
    ):
        return False
    data = obj.get("data")
    if spec.output_schema is not None and not (
        isinstance(data, dict) and jsonschema.Draft202012Validator(spec.output_schema).is_valid(data)
    ):
        return False
    if spec.expect.data and not all(o.ok for o in check_data(spec.expect.data, data if isinstance(data, dict) else {})):
        return False
    if not all(e.ok for e in trace.expectations):
        return False
    return not trace.judge_requested or (trace.judge is not None and trace.judge.verdict)


@PURE
@given(spec=specs, trace=traces)
def test_no_trace_passes_unless_everything_holds_and_none_crashes(spec: TestSpec, trace: AgentRun) -> None:
    _count("verdict: any trace")
    decision = decide(spec, trace)
    verdict, report = decision.verdict, decision.report
    assert verdict.status in Status and verdict.reason and "\n" not in verdict.reason
    if verdict.status is Status.PASSED:
        assert _may_pass(spec, trace), (verdict, trace)
        assert report is not None and report.status == "pass"
    json.dumps(verdict.model_dump(mode="json"))  # every verdict can be written out


@PURE
@given(spec=specs, obj=report_objects(), success=st.one_of(st.none(), st.booleans()))
def test_a_report_that_is_not_exactly_a_pass_never_passes(spec: TestSpec, obj: Any, success: bool | None) -> None:
    """Wrong types, missing or extra fields, other statuses and success/status contradictions: never a pass."""
    exact = (
        isinstance(obj, dict)
        and obj.get("status") == "pass"
        and isinstance(obj.get("reason"), str)
        and obj["reason"] != ""
        and set(obj) <= {"status", "reason", "data"}
        and success is not False
        and (obj.get("data") is None or isinstance(obj.get("data"), dict))
    )
    _count("verdict: malformed report" if not exact else "verdict: well-formed pass")
    verdict = decide(spec, AgentRun(done=DoneReport(text=json.dumps(obj), success=success))).verdict
    if not exact:
        assert verdict.status is Status.FAILED, (obj, success, verdict)


@PURE
@given(text=weird_text, success=st.one_of(st.none(), st.booleans()))
def test_text_that_is_not_json_never_passes(text: str, success: bool | None) -> None:
    try:
        ok = isinstance(json.loads(text), dict)
    except ValueError:
        ok = False
    _count("verdict: arbitrary text")
    verdict = decide(TestSpec(name="t", task="x"), AgentRun(done=DoneReport(text=text, success=success))).verdict
    if not ok:
        assert verdict.status is Status.FAILED, verdict


# --- JUnit ------------------------------------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(name=st.one_of(any_text, non_utf8), reason=weird_text, status=st.sampled_from(list(Status)))
def test_junit_is_valid_for_any_text(name: str, reason: str, status: Status) -> None:
    _count("junit: any text")
    test = TestResult(name=name or "t", file="qa.yml", line=1, status=status, reason=reason, causes=[reason])
    xml = render([test], RunResult(manifest="qa.yml", base_url="http://x", started_at="2026-01-01T00:00:00+00:00", tests=[test]))
    JUNIT_SCHEMA.validate(xml.decode("utf-8"))


# --- manifests ----------------------------------------------------------------------------------------------------

KEYS = [
    "version",
    "defaults",
    "tests",
    "name",
    "task",
    "start",
    "expect",
    "url",
    "text",
    "data",
    "secrets",
    "max_steps",
    "timeout",
    "output_schema",
    "type",
    "skip",
    "judge",
    "allowed_domains",
    "expct",
    "nmae",
    "<<",
]
yaml_scalar = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 10**6),
    st.floats(allow_nan=True),
    st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=20),
    st.sampled_from(["/", "/login", "http://x", "1", "pass", "<secret>pw</secret>", "PW", "object"]),
)
yaml_tree = st.recursive(
    yaml_scalar,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(KEYS) | st.integers() | st.booleans() | st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=15,
)


@st.composite
def manifest_like(draw: st.DrawFn) -> str:
    """Near-valid manifests with random damage, YAML-ish noise, and texts built around anchors, tags and tabs."""
    base: dict[str, Any] = {
        "version": draw(st.sampled_from([1, 1, 2, "1"])),
        "tests": [
            {"name": f"t{i}", "task": "x", **extra}
            for i, extra in enumerate(
                draw(st.lists(st.just({}) | st.dictionaries(st.sampled_from(KEYS), yaml_tree, max_size=2), max_size=3))
            )
        ],
    }
    if draw(st.booleans()):
        base["defaults"] = draw(yaml_tree)
    kind = draw(st.sampled_from(["tree", "tree", "noise", "lines"]))
    if kind == "tree":
        return yaml.safe_dump(draw(st.one_of(st.just(base), yaml_tree)), allow_unicode=True, sort_keys=False)
    if kind == "noise":
        tokens = [*":-[]{}&*!|>'\"#%@`,?\n\t \\", "a", "1", "\n  ", "- ", ": ", "&a ", "*a", "!!python/object ", "<<: "]
        return "".join(draw(st.lists(st.sampled_from(tokens), max_size=60)))
    lines = yaml.safe_dump(base, sort_keys=False).splitlines()
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(lines)))
        lines.insert(
            at,
            draw(
                st.sampled_from(
                    [
                        "\tname: x",
                        "  - &a {name: y}",
                        "tests: *a",
                        "  task: [",
                        "version: 1",
                        "  - name: t\n    task: x",
                        "? [k]\n: v",
                        "x: !!binary AAAA",
                        "%YAML 1.1",
                    ]
                )
            ),
        )
    return "\n".join(lines) + "\n"


# one problem on its line, or several listed one a line (the first 20, then a line for the rest)
_ONE_LINE = re.compile(
    r"^qa\.yml(:\d+)?: [^\n]+$|^\d+ problems in qa\.yml:(\n  qa\.yml:\d+: [^\n]+)+(\n  \.\.\. and \d+ more \(fix these first\))?$"
)


TOO_MANY = "version: 1\ntests:\n  - name: a\n    task: b\n" + "".join(f"    k{i}: 1\n" for i in range(21))


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=manifest_like())
@example(text=TOO_MANY)  # hypothesis found 21 problems: the line for those past the first 20 was taken for a defect
def test_any_yaml_gives_a_manifest_or_one_line_error(text: str) -> None:
    try:
        m = manifest.loads(text, "qa.yml")
    except ManifestError as e:
        _count("manifest: error")
        assert _ONE_LINE.match(str(e)), str(e)
        assert e.line is not None or str(e).startswith("qa.yml: invalid YAML"), str(e)
    else:
        _count("manifest: valid")
        assert m.tests and all(t.name and t.task for t in m.tests)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(text=manifest_like())
def test_cli_validate_exits_0_or_2_with_one_line(text: str, tmp_path: Path) -> None:
    _count("manifest: through `preview-qa validate`")
    path = tmp_path / "qa.yml"
    path.write_text(text, encoding="utf-8")
    proc = run_preview_qa(["validate", str(path), "--offline"])  # its own process: what a user's shell sees
    assert proc.returncode in (0, 2), proc.stderr
    assert "Traceback" not in proc.stderr
    if proc.returncode == 2:
        several = re.match(rf"preview-qa: error: (\d+) problems in {re.escape(str(path))}:\n", proc.stderr)
        if several is None:
            assert proc.stderr.startswith(f"preview-qa: error: {path}:") and proc.stderr.count("\n") == 1, proc.stderr
        else:  # a line that counts them, then one line each (the first 20 of them, and a line for the rest)
            count = int(several.group(1))
            assert proc.stderr.count(f"\n  {path}:") == min(count, 20), proc.stderr
            assert proc.stderr.count("\n") == 1 + min(count, 20) + (count > 20), proc.stderr
