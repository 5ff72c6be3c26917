"""trace.zip without a browser: which runs keep one (--trace), where it is listed, and its text redacted in every entry."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest

from preview_qa.config import TraceMode
from preview_qa.events import RunFinished, RunStarted, TestFinished, TraceRecorded
from preview_qa.reporters.artifacts import ArtifactsReporter
from preview_qa.results import Status
from preview_qa.secrets.redact import Redactor, base64_forms, forms
from preview_qa.secrets.trace_zip import redact_trace
from tests.builders import result, run_of

SECRET = "s3cr3t-Pa55-word-4242"


def a_zip(entries: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for name, body in entries.items():
            z.writestr(name, body)
    return out.getvalue()


@pytest.mark.parametrize(
    ("mode", "kept"),
    [
        (TraceMode.RETAIN_ON_FAILURE, {"failing", "erroring"}),
        (TraceMode.ON, {"failing", "erroring", "passing"}),
        (TraceMode.OFF, set()),
    ],
)
def test_trace_mode_decides_which_tests_keep_their_trace(tmp_path: Path, mode: TraceMode, kept: set[str]) -> None:
    reporter = ArtifactsReporter(tmp_path, mode)
    reporter.handle(RunStarted(manifest="qa.yml", base_url="http://x", test_names=[]))
    tests = [result("failing", Status.FAILED), result("erroring", Status.ERRORED), result("passing", Status.PASSED)]
    for test in tests:
        reporter.handle(TraceRecorded(name=test.name, zip=a_zip({"trace.trace": b"{}"}), with_screenshots=True))
        reporter.handle(TestFinished(result=test))
    reporter.handle(RunFinished(result=run_of(*tests)))
    reporter.finish()
    listed = {t["name"]: t["artifacts"].get("trace") for t in json.loads((tmp_path / "results.json").read_text())["tests"]}
    assert {name for name, trace in listed.items() if trace} == kept
    for name in kept:
        assert zipfile.ZipFile(tmp_path / str(listed[name])).read("trace.trace") == b"{}"


def test_every_text_entry_is_redacted_in_every_encoding_and_images_are_left_as_they_are() -> None:
    every_form = [*forms(SECRET), *base64_forms(SECRET)]
    entries = {f"resources/{i}.txt": f"before {form} after".encode() for i, form in enumerate(every_form)}
    entries["trace.trace"] = ('{"type":"frame-snapshot","value":"' + SECRET + '"}\n').encode()
    entries["resources/page.jpeg"] = b"\xff\xd8\xff binary"
    entries["resources/latin1.bin"] = ("caf\xe9 " + SECRET).encode("latin-1")
    redacted = redact_trace(a_zip(entries), Redactor({"pw": SECRET}))
    with zipfile.ZipFile(io.BytesIO(redacted)) as z:
        assert sorted(z.namelist()) == sorted(entries)
        for name in z.namelist():
            body = z.read(name).decode("utf-8", errors="replace")
            assert not [f for f in every_form if f in body], name
        assert z.read("trace.trace") == b'{"type":"frame-snapshot","value":"<secret>pw</secret>"}\n'
        assert z.read("resources/page.jpeg") == b"\xff\xd8\xff binary"
        assert z.read("resources/latin1.bin") == b""  # not UTF-8 and holding a secret: emptied


def test_without_secrets_the_trace_is_kept_byte_for_byte() -> None:
    data = a_zip({"trace.trace": b"{}"})
    assert redact_trace(data, Redactor({})) == data
