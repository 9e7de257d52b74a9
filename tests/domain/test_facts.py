"""The one rule of which facts are live, and their one stable order in the request."""

from __future__ import annotations

from koroku_desktop.domain.events import FactEvent, StoredEvent
from koroku_desktop.domain.facts import (
    MAX_BLOCK_CHARS,
    MAX_FACT_CHARS,
    clipped_fact,
    facts_block,
    live_facts,
    subject_key,
)


def stored(seq: int, event: FactEvent, hub_seq: int | None = None) -> StoredEvent:
    return StoredEvent(seq, "default", 1000.0 + seq, event, f"id-{seq}", hub_seq=hub_seq)


def test_the_latest_fact_on_a_subject_is_live_whatever_its_case_and_spaces() -> None:
    facts = live_facts(
        [
            stored(1, FactEvent(subject="Home city", text="Oslo")),
            stored(2, FactEvent(subject="coffee", text="black", category="preference")),
            stored(3, FactEvent(subject="  home   CITY ", text="Bergen")),
        ]
    )
    assert [(f.subject, f.text, f.seq) for f in facts] == [
        ("  home   CITY ", "Bergen", 3),
        ("coffee", "black", 2),
    ]
    assert subject_key(" Home\tCity ") == "home city"


def test_a_forget_never_removes_a_newer_fact_it_did_not_see() -> None:
    first = stored(1, FactEvent(subject="car", text="red"))
    newer = stored(2, FactEvent(subject="car", text="crimson", replaces_id="id-1"))
    stale_forget = stored(3, FactEvent(subject="car", op="forget", replaces_id="id-1"))
    assert [f.text for f in live_facts([first, newer, stale_forget])] == ["crimson"]
    forget = stored(4, FactEvent(subject="car", op="forget", replaces_id="id-2"))
    assert live_facts([first, newer, stale_forget, forget]) == []


def test_facts_are_folded_in_entries_order_not_seq_order() -> None:
    # Pulled from a hub: the event written here later (seq 2) sits earlier in the hub's order.
    here = stored(1, FactEvent(subject="car", text="here, unsynced"))
    pulled = stored(2, FactEvent(subject="car", text="pulled, synced"), hub_seq=7)
    assert [f.text for f in live_facts([here, pulled])] == ["here, unsynced"]


def test_the_block_is_sorted_stably_and_empty_without_facts() -> None:
    events = [
        stored(1, FactEvent(subject="Tern", text="a sync tool", category="project")),
        stored(2, FactEvent(subject="anna", text="sister", category="person")),
        stored(3, FactEvent(subject="name", text="Jan\n  Novak")),
        stored(4, FactEvent(subject="Beer", text="none", category="preference")),
    ]
    block = facts_block(live_facts(events))
    assert block == facts_block(live_facts(list(reversed(events))))
    assert block.splitlines()[-4:] == [
        "- (about you) name: Jan Novak",
        "- (preferences) Beer: none",
        "- (people) anna: sister",
        "- (projects) Tern: a sync tool",
    ]
    assert facts_block([]) == ""


def test_a_summarisers_overlong_fact_is_cut_with_an_ellipsis() -> None:
    cut = clipped_fact("x" * (MAX_FACT_CHARS + 50))
    assert len(cut) == MAX_FACT_CHARS and cut.endswith("…")
    assert clipped_fact("  short  ") == "short"


def test_the_block_is_bounded_and_says_how_many_more_there_are() -> None:
    many = [stored(n, FactEvent(subject=f"s{n:03}", text="x" * 900)) for n in range(1, 101)]
    block = facts_block(live_facts(many))
    assert len(block) < MAX_BLOCK_CHARS + 1_000
    assert block.endswith("more facts are kept but not shown here)")
    assert block == facts_block(live_facts(many))
