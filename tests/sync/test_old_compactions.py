"""A log compacted before compactions covered by id (an old compaction covers the messages
below its `kept_from_seq`, in this log's numbering) joins a hub: it is restated by id
before the first push, so a device whose seqs differ reads the same coverage."""

from __future__ import annotations

import pytest

from koroku_desktop.app.runtime import CONVERSATION_ID
from koroku_desktop.domain.events import CompactionEvent, MessageEvent, StoredEvent
from koroku_desktop.store import SqliteEventLog
from tests.support.builders import said
from tests.sync.conftest import Device


def live(device: Device) -> tuple[str, list[str]]:
    """The head's summary and the live message ids, as the device loads them."""
    with SqliteEventLog(device.home / "koroku.db", read_only=True) as log:
        loaded = log.load_live(CONVERSATION_ID)
        head = loaded.boundary
        summary = head.event.summary if head and isinstance(head.event, CompactionEvent) else ""
        return summary, [e.event_id for e in loaded.events if isinstance(e.event, MessageEvent)]


@pytest.mark.timeout(300)
def test_an_old_compaction_is_restated_by_id_and_both_devices_agree(
    devices: tuple[Device, Device],
) -> None:
    a, b = devices
    with SqliteEventLog(b.home / "koroku.db") as log:  # B has its own past: other seqs
        for n in range(6):
            log.append("elsewhere", [said(f"B's other conversation {n}")])
    with SqliteEventLog(a.home / "koroku.db") as log:
        turns = [
            log.append(CONVERSATION_ID, [said(f"q{n}"), said(f"a{n}", "model")]) for n in range(4)
        ]
        kept = turns[2][0]
        old = CompactionEvent(
            summary="the old summary", covers_up_to_seq=kept.seq - 1, kept_from_seq=kept.seq
        )
        log.append(CONVERSATION_ID, [old])
        after = log.append(CONVERSATION_ID, [said("after the old compaction")])
    before = live(a)
    assert before == (
        "the old summary",
        [e.event_id for t in turns[2:] for e in t] + [after[0].event_id],
    )

    a.sync()
    b.sync()

    assert live(a) == live(b) == before
    compactions = [
        str(r[0])
        for r in a.sql("SELECT payload FROM events WHERE kind = 'compaction' ORDER BY seq")
    ]
    assert len(compactions) == 2 and "covered_ids" in compactions[1]
    assert "pushed 0 events" in a.sync()  # restated once only
    with SqliteEventLog(b.home / "koroku.db", read_only=True) as log:
        heads = [
            e
            for e in log.entries(CONVERSATION_ID, kinds=("compaction",))
            if isinstance(e, StoredEvent)
        ]
    assert isinstance(heads[-1].event, CompactionEvent)
    assert heads[-1].event.base_id is None and len(heads[-1].event.covered_ids or ()) == 4
