"""The kind registry: every event kind has one entry, and every kind but a message is a
marker of the fold."""

from __future__ import annotations

from typing import get_args

from koroku_desktop.domain.events import BOUNDARY_KINDS, EVENT_KINDS, Event
from koroku_desktop.domain.kinds import KINDS, LIVENESS_KINDS, label_of


def test_every_event_class_has_its_kind_and_one_registry_entry() -> None:
    classes = get_args(get_args(Event)[0])
    assert [c.model_fields["kind"].default for c in classes] == list(EVENT_KINDS)
    assert set(KINDS) == set(EVENT_KINDS) and len(EVENT_KINDS) == len(set(EVENT_KINDS))
    assert EVENT_KINDS[:3] == ("message", "compaction", "cleared")


def test_the_liveness_kinds_include_the_boundaries() -> None:
    assert set(BOUNDARY_KINDS) <= set(LIVENESS_KINDS)
    assert {"superseded", "rejected"} <= set(LIVENESS_KINDS)
    assert "message" not in LIVENESS_KINDS


def test_labels() -> None:
    assert label_of("compaction") == "Summaries" and label_of("memory_edit") == "Memory edits"
    assert label_of("from_the_future") == "from_the_future"
