"""Two data dirs as two devices syncing through a real PostgreSQL hub, with real `koroku`
subprocesses against the strict fake Gemini server."""

from __future__ import annotations

import json

import pytest

from koroku_desktop.app.runtime import CONVERSATION_ID
from koroku_desktop.domain.events import StoredEvent
from koroku_desktop.store import SqliteEventLog
from tests.fakes.gemini_replies import decode_b64
from tests.fakes.gemini_server import FakeGemini
from tests.sync.conftest import Device


def live_ids(device: Device) -> list[str]:
    """The event ids of the device's live context, in projected order."""
    with SqliteEventLog(device.home / "koroku.db", read_only=True) as log:
        return [e.event_id for e in log.load_live(CONVERSATION_ID).events]


def chat_ids(device: Device) -> list[str]:
    """The message ids in the order the chat and the viewer show them."""
    with SqliteEventLog(device.home / "koroku.db", read_only=True) as log:
        return [
            e.event_id
            for e in log.entries(CONVERSATION_ID, kinds=("message",), limit=10_000)
            if isinstance(e, StoredEvent)
        ]


def all_ids(device: Device) -> list[str]:
    return [str(r[0]) for r in device.sql("SELECT event_id FROM events ORDER BY seq")]


def last_request_text(fake: FakeGemini) -> str:
    return json.dumps(fake.generate_requests()[-1].body["contents"])


@pytest.mark.timeout(300)  # several `koroku` subprocesses: slow on a loaded machine
def test_a_turn_on_a_reaches_b_and_b_sends_it(
    devices: tuple[Device, Device], fake_gemini: FakeGemini
) -> None:
    a, b = devices
    fake_gemini.reply_text("Paris is the capital.")
    a.ask("what is the capital of France?")
    assert "pushed 2 events in 1 turns" in a.sync()
    assert "pulled 2 events" in b.sync()
    assert live_ids(a) == live_ids(b) != []
    fake_gemini.reply_text("You asked about France.")
    b.ask("what did I ask before?")
    sent = last_request_text(fake_gemini)
    assert "capital of France" in sent and "Paris is the capital." in sent
    b.sync()
    a.sync()
    assert live_ids(a) == live_ids(b)
    assert len(live_ids(a)) == 4


@pytest.mark.timeout(300)
def test_offline_turns_on_both_merge_as_whole_turns_in_one_order(
    devices: tuple[Device, Device], fake_gemini: FakeGemini, hub: object
) -> None:
    from tests.sync.pg_server import PgServer

    assert isinstance(hub, PgServer)
    a, b = devices
    fake_gemini.reply_text("one")
    a.ask("first, online")
    a.sync()
    b.sync()
    hub.stop()
    failed = a.run("sync")
    assert failed.returncode == 1 and "cannot reach the hub" in failed.stderr
    assert len(failed.stderr.strip().splitlines()) == 1, failed.stderr
    fake_gemini.reply_text("a-offline-1").reply_text("a-offline-2")
    a.ask("a offline one")
    a.ask("a offline two")
    fake_gemini.reply_text("b-offline")
    b.ask("b offline")
    hub.start()
    b.sync()
    a.sync()
    b.sync()
    assert live_ids(a) == live_ids(b)
    assert sorted(all_ids(a)) == sorted(all_ids(b))
    # One order for all: the hub's. B pushed first, so its offline turn comes before A's
    # (written earlier), in the live context and in the chat alike, on both devices.
    in_hub_order = [
        str(r[0])
        for r in b.sql("SELECT event_id FROM events WHERE kind = 'message' ORDER BY hub_seq")
    ]
    assert live_ids(a) == live_ids(b) == in_hub_order
    assert chat_ids(a) == chat_ids(b) == in_hub_order
    said = [
        str(r[0])
        for r in b.sql("SELECT payload FROM events WHERE kind = 'message' ORDER BY hub_seq")
    ]
    assert [n for n, p in enumerate(said) if "b offline" in p] < [
        n for n, p in enumerate(said) if "a offline one" in p
    ]
    turns = [str(r[0]) for r in b.sql("SELECT turn_id FROM events ORDER BY hub_seq")]
    # whole turns: each turn's events are contiguous in the one order
    seen: list[str] = []
    for turn in turns:
        if not seen or seen[-1] != turn:
            assert turn not in seen, "a turn was interleaved with another"
            seen.append(turn)
    assert len(seen) == 4
    for device in (a, b):
        fake_gemini.reply_text("merged fine")
        device.ask("still fine?")
        sent = last_request_text(fake_gemini)
        for text in ("a offline one", "a offline two", "b offline", "first, online"):
            assert text in sent


@pytest.mark.timeout(300)
def test_a_file_attached_on_a_is_sent_by_b_byte_for_byte(
    devices: tuple[Device, Device], fake_gemini: FakeGemini
) -> None:
    """`koroku ask -a` on A; B holds only the event until its next turn needs the bytes,
    which its blob store fetches from the hub and sends inline, identical to A's."""
    a, b = devices
    picture = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 64
    (a.workspace / "plot.png").write_bytes(picture)
    fake_gemini.reply_text("A plot of sales.")
    done = a.run("ask", "-a", "plot.png", "what is this plot?")
    assert done.returncode == 0, done.stderr
    a.sync()
    b.sync()
    [sha] = [p.name for p in (a.home / "blobs").glob("*/*")]
    assert not (b.home / "blobs" / sha[:2] / sha).exists()  # fetched on first need only
    fake_gemini.reply_text("It showed sales.")
    b.ask("what did the plot I sent show?")
    inline = [
        decode_b64(part["inlineData"]["data"])
        for content in fake_gemini.generate_requests()[-1].body["contents"]
        for part in content["parts"]
        if "inlineData" in part
    ]
    assert inline == [picture]
    assert (b.home / "blobs" / sha[:2] / sha).read_bytes() == picture
