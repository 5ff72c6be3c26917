"""What the pages showed over time (agent/page/sightings.py), from the watchers' messages alone, no browser: each line
from when to when, by document; a new top document ends the last one's lines; the window of appeared/not_appeared
starts at the mark; the record for the verdict is redacted and names where each passage showed."""

from __future__ import annotations

import json
from typing import Any

from preview_qa.agent.page.sightings import MAX_LINES, Sightings

ORIGIN = "http://preview.test"


def told(sightings: Sightings, doc: str, at: float, url: str = f"{ORIGIN}/profile", top: bool = True, **message: Any) -> None:
    sightings._heard(json.dumps({"doc": doc, "url": url, "top": top, "at": at * 1000, **message}))


def test_each_line_shows_from_its_first_sample_until_it_is_gone() -> None:
    step = [1]
    sightings = Sightings(lambda: step[0], ORIGIN)
    told(sightings, "a", 100.0, added=["Profile", "Save"])
    step[0] = 2
    told(sightings, "a", 101.0, added=["Saved!"])
    told(sightings, "a", 102.0, removed=["Saved!"])
    sightings.marked_at = 101.5  # the toast was on screen when the action came: it counts
    assert sightings.shown_since("saved!", 101.5) is not None
    assert sightings.shown_since("Saved!", 102.5) is None  # gone before this window
    assert sightings.shown_since("profile", 200.0) is not None  # still shown
    assert [(s.text, s.where, s.until) for s in sightings.lines] == [
        ("Profile", "at step 1, on /profile", None),
        ("Save", "at step 1, on /profile", None),
        ("Saved!", "at step 2, on /profile", 102.0),
    ]


def test_a_new_top_document_ends_the_last_one_and_a_frame_keeps_its_own() -> None:
    sightings = Sightings(lambda: 3, ORIGIN)
    told(sightings, "old", 10.0, added=["Checkout"])
    told(sightings, "frame", 10.5, url="https://pay.example/card?token=s3cret", top=False, added=["Card number"])
    told(sightings, "new", 11.0, url=f"{ORIGIN}/done?id=7", added=["Thanks"])
    assert [(s.text, s.until) for s in sightings.lines] == [("Checkout", 11.0), ("Card number", None), ("Thanks", None)]
    assert sightings.final_lines() == ["Thanks"]
    told(sightings, "frame", 12.0, top=False, gone=True)
    assert sightings.lines[1].until == 12.0
    assert sightings.lines[1].where == "at step 3, on pay.example/card"  # its host off the preview, never its query


def test_the_record_for_the_verdict_is_redacted_passage_by_passage_with_the_first_picture_of_each_kind() -> None:
    sightings = Sightings(lambda: None, ORIGIN)
    told(sightings, "a", 1.0, added=["Signed in as ada@acme.test", "Orders"], pictures=["canvas"])
    told(sightings, "a", 2.0, added=["Total"], pictures=["canvas", "img"])
    sightings._watched.append(object())  # type: ignore[arg-type]  # a page was watched: the record was read
    shown = sightings.shown(lambda text: text.replace("ada@acme.test", "<secret>email</secret>"))
    assert [(t.text, t.where) for t in shown.texts] == [
        ("Signed in as <secret>email</secret>\nOrders", "before the first step, on /profile"),
        ("Total", "before the first step, on /profile"),
    ]
    where = "in view before the first step, on /profile"
    assert shown.pictures == [f"a canvas {where}", f"an image {where}"]
    assert shown.final == ["Signed in as <secret>email</secret>", "Orders", "Total"] and shown.read and shown.complete


def test_past_the_kept_lines_the_record_says_it_is_incomplete_and_a_broken_message_is_ignored() -> None:
    sightings = Sightings(lambda: 1, ORIGIN)
    sightings._heard("not json")
    sightings._heard(json.dumps({"url": "/"}))  # no document, no time
    told(sightings, "a", 1.0, added=[f"line {i}" for i in range(MAX_LINES + 5)])
    assert len(sightings.lines) == MAX_LINES and not sightings.complete
    assert not sightings.shown(str).read  # nothing was ever watched: no quote can be looked up
