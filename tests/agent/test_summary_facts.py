"""What the summariser is asked about facts, and how its answer is read (leniently)."""

from __future__ import annotations

from koroku_desktop.agent.summary_facts import KNOWN_CHARS, facts_ask, split_facts
from koroku_desktop.domain.events import FactEvent, StoredEvent
from koroku_desktop.domain.facts import live_facts


def test_the_list_of_known_facts_is_bounded() -> None:
    many = [
        StoredEvent(n, "default", float(n), FactEvent(subject=f"s{n:03}", text="x" * 500), f"{n}")
        for n in range(1, 101)
    ]
    listing = facts_ask(live_facts(many)).split("Known facts:\n", 1)[1]
    assert len(listing) < KNOWN_CHARS + 100 and listing.endswith("more)")
    assert facts_ask([]).endswith("Known facts:\n(none yet)")


def test_the_facts_block_is_taken_out_of_the_summary_and_bad_lines_skipped() -> None:
    summary, found = split_facts(
        "The summary.\n<facts>\n"
        '{"subject": "a", "fact": "b"},\n'
        "not json\n[1, 2]\n\n"
        '{"subject": "c", "fact": "d"}\n</facts>'
    )
    assert summary == "The summary."
    assert found == [{"subject": "a", "fact": "b"}, {"subject": "c", "fact": "d"}]
    # A reply cut off inside the block (no closing tag) keeps what came.
    summary, found = split_facts('Sum.\n<FACTS>\n{"subject": "e", "fact": "f"}')
    assert (summary, found) == ("Sum.", [{"subject": "e", "fact": "f"}])
    assert split_facts("Just a summary.") == ("Just a summary.", [])
