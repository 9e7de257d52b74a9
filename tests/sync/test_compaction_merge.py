"""A compaction on A while B adds a turn offline, through a real PostgreSQL hub and real
`koroku` processes: B's turn stays live on both, both send the same context, and the memory
file A's summary went into is rebuilt on B."""

from __future__ import annotations

import json

import pytest

from koroku_desktop.app.runtime import CONVERSATION_ID
from koroku_desktop.domain.events import CompactionEvent, MessageEvent, StoredEvent
from koroku_desktop.domain.parts import TextPart
from koroku_desktop.store import SqliteEventLog
from tests.fakes.gemini_server import FakeGemini
from tests.sync.conftest import Device
from tests.sync.test_two_devices import live_ids


def live_texts(device: Device) -> tuple[str, list[str]]:
    """The head summary and the texts of the live messages, as the device loads them."""
    with SqliteEventLog(device.home / "koroku.db", read_only=True) as log:
        live = log.load_live(CONVERSATION_ID)
    head = live.boundary
    summary = head.event.summary if head and isinstance(head.event, CompactionEvent) else ""
    texts = [
        p.text
        for e in live.events
        if isinstance(e, StoredEvent) and isinstance(e.event, MessageEvent)
        for p in e.event.parts
        if isinstance(p, TextPart) and not p.text.startswith("[")
    ]
    return summary, texts


@pytest.mark.timeout(300)
def test_a_compaction_on_a_while_b_adds_a_turn_offline(
    devices: tuple[Device, Device], fake_gemini: FakeGemini
) -> None:
    a, b = devices
    for n in range(3):
        fake_gemini.reply_text(f"answer {n}")
        a.ask(f"common question {n}: " + "tell me about the garden " * 40)
    a.sync()
    b.sync()
    fake_gemini.reply_text("noted on B")
    b.ask("asked on B while A compacts")
    fake_gemini.reply_text("SUMMARY: the three common questions about the garden")
    compacted = a.run("compact")
    assert compacted.returncode == 0, compacted.stderr

    b.sync()  # B's turn reaches the hub first, A's compaction after it
    a.sync()
    b.sync()

    assert live_ids(a) == live_ids(b)
    summary, texts = live_texts(a)
    assert (summary, texts) == live_texts(b)
    assert summary == "SUMMARY: the three common questions about the garden"
    assert "asked on B while A compacts" in texts and "noted on B" in texts
    assert not any(t.startswith("common question 0") for t in texts)
    # The memory file A's summary went into is on B too: `koroku sync` wrote it from the log.
    files_a = {p.name: p.read_text() for p in (a.home / "memory").glob("*.md")}
    files_b = {p.name: p.read_text() for p in (b.home / "memory").glob("*.md")}
    assert files_a == files_b and len(files_a) == 1
    assert "SUMMARY: the three common questions" in next(iter(files_b.values()))
    # The next request, on B, carries the summary and B's turn, not what was summarised.
    fake_gemini.reply_text("fine")
    b.ask("and now?")
    sent = json.dumps(fake_gemini.generate_requests()[-1].body["contents"])
    assert "SUMMARY: the three common questions" in sent and "asked on B while A" in sent
    assert "common question 0" not in sent
