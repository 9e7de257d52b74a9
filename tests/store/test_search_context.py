"""The keyword leg's index: each message with the turns before it, stemmed, ranked by BM25;
events it has not indexed yet are still found; the similarity floor of the meaning leg."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from koroku_desktop.domain.events import MessageEvent
from koroku_desktop.domain.parts import TextPart
from koroku_desktop.store.log.event_log import SqliteEventLog
from koroku_desktop.store.vectors.index import FLOOR_MIN_ROWS, VectorIndex, rows_arrays
from koroku_desktop.store.vectors.quantise import quantise_all


def said(role: str, text: str) -> MessageEvent:
    return MessageEvent(role=role, parts=[TextPart(text=text)])


def q(vector: np.ndarray) -> tuple[float, bytes]:
    """`vector` quantised as the store does it."""
    return quantise_all([vector.tolist()])[0]


def put(log: SqliteEventLog, conversation: str, role: str, text: str) -> int:
    (stored,) = log.append(conversation, [said(role, text)])
    return stored.seq


def test_stemmed_ranked_over_any_word(log: SqliteEventLog) -> None:
    painted = put(log, "c", "user", "my car is painted crimson")
    painting = put(log, "c", "user", "I was painting the fence")
    after = put(log, "c", "user", "oat milk and bread")
    put(log, "elsewhere", "user", "oat milk and bread")
    found = log.vectors.keyword("paints xylophone", 10)
    # Any word; "paints" finds both by its stem; the turn after them by its context, behind.
    assert set(found[:2]) == {painted, painting} and found[2:] == [after]
    hits = log.vectors.found(found, "paints xylophone")
    assert all(hits[s].snippet for s in found)
    assert log.vectors.keyword("the of and", 10) == []  # only common words: nothing to rank


def test_a_reply_is_found_by_the_question_before_it(log: SqliteEventLog) -> None:
    log.append("c", [said("user", "what did you do at the lake on sunday?")])
    reply = put(log, "c", "model", "we went kayaking, then had a picnic")
    log.append("other", [said("user", "kayaking gear list")])
    found = log.vectors.keyword("when did they go kayaking at the lake", 10)
    assert found[0] == reply  # its own word and its context's


def test_events_not_yet_in_the_context_index_are_found(db_path: Path) -> None:
    with SqliteEventLog(db_path) as log:
        first = put(log, "c", "user", "the flamingo report is due")
        assert log.vectors.keyword("flamingo", 5) == [first]  # indexes it
        second = put(log, "c", "user", "another flamingo sighting")
    with SqliteEventLog(db_path, read_only=True) as ro:  # cannot index: the plain index
        assert set(ro.vectors.keyword("flamingo", 5)) == {first, second}


def test_the_limit_only_cuts(log: SqliteEventLog) -> None:
    for n in range(30):
        log.append("c", [said("user", f"note {n}: flamingo {'flamingo ' * (n % 4)}report")])
    full = log.vectors.keyword("flamingo report", 30)
    assert log.vectors.keyword("flamingo report", 5) == full[:5]


def test_the_similarity_floor_follows_the_vectors_own_distribution() -> None:
    rng = np.random.default_rng(1)
    dims = 64
    index = VectorIndex(1, dims)
    few = rng.standard_normal((FLOOR_MIN_ROWS - 1, dims)).astype(np.float32)
    rows = [(n + 1, n + 1, *q(v / np.linalg.norm(v))) for n, v in enumerate(few)]
    index._tail = rows_arrays(rows, dims)
    query = few[0] / np.linalg.norm(few[0])
    assert index.floor(query) is None  # too few to calibrate: the constant applies
    many = rng.standard_normal((2_000, dims)).astype(np.float32)
    rows = [(n + 1, n + 1, *q(v / np.linalg.norm(v))) for n, v in enumerate(many)]
    index._tail = rows_arrays(rows, dims)
    floor = index.floor(query)
    assert floor is not None and 0.1 < floor < 0.55  # random 64-d vectors: low cosines
    assert index.nearest(many[5] / np.linalg.norm(many[5]), 1)[0].similarity > floor


def test_stop_words_do_not_rank_and_a_possessive_is_its_noun(log: SqliteEventLog) -> None:
    camping = put(log, "c", "user", "our family went camping by the lake with Maria")
    for n in range(20):
        put(log, "c", "model", f"budget note {n}")
    put(log, "c", "user", "her family talked about her while her sister was there")
    # Stop words ("her", "while") give no rank: the one rare word leads.
    assert log.vectors.keyword("what did her family do while camping", 1) == [camping]
    # "Maria's" asks for Maria (typed as is it would be the phrase "maria s").
    assert log.vectors.keyword("Maria's trip", 1) == [camping]
    assert log.vectors.keyword("Maria\u2019s trip", 1) == [camping]
    assert log.vectors.keyword("what about her, while they're there", 10) == []


def test_the_ranked_query_splits_words_as_the_index_does(log: SqliteEventLog) -> None:
    bands = put(log, "c", "user", "we saw two great bands at the festival")
    care = put(log, "c", "user", "taking care of the garden is my favourite")
    for n in range(20):
        put(log, "c", "model", f"budget note {n}")
    # "artists/bands" asks for "bands" (as one word, "artistsbands", it found nothing).
    assert log.vectors.keyword("which artists/bands did we see", 1) == [bands]
    # "self-care" asks for "self" and "care", not only the two written side by side.
    assert log.vectors.keyword("my self-care routine", 1) == [care]


def test_a_common_word_counts_in_its_newest_units_only(log: SqliteEventLog) -> None:
    # Each note in a conversation of its own, so no unit carries another's words as context.
    old = put(log, "c0", "user", "the flamingo content report")
    notes = [put(log, f"c{n}", "user", f"weekly content note {n}") for n in range(1, 40)]
    log.vectors.catch_up_keywords(None)
    context = log.vectors.context
    match = '"content" OR "flamingo"'
    full = dict(context.ranked(match, 100, 2**62))  # no word is common: one ranked query
    assert len(full) == 40
    capped = context.ranked(match, 100, 2**62, common=10)
    seqs = [seq for seq, _ in capped]
    # The old unit is still found by its rare word, first; "content" alone finds only its
    # newest ten units, each scored exactly as the uncapped ranking scores it.
    assert seqs[0] == old and set(seqs[1:]) == set(notes[-10:])
    assert all(abs(rank - full[seq]) < 1e-9 for seq, rank in capped[1:])
    # The limit only cuts; and a bound below the newest units moves the window with it.
    assert context.ranked(match, 4, 2**62, common=10) == capped[:4]
    below = context.ranked(match, 100, notes[-5], common=10)
    assert {seq for seq, _ in below[1:]} == set(notes[-15:-5])
