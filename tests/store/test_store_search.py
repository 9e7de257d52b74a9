"""Full-text search: every kind of searchable text, newest first, any text a safe query."""

from __future__ import annotations

import pytest

from koroku_desktop.domain.events import ClearedEvent, CompactionEvent, MessageEvent
from koroku_desktop.domain.parts import (
    FunctionCallPart,
    FunctionResponsePart,
    InlineDataPart,
    TextPart,
)
from koroku_desktop.store import SqliteEventLog
from koroku_desktop.store.search.searchable import fts_query, searchable_text


@pytest.fixture
def filled(log: SqliteEventLog) -> SqliteEventLog:
    log.append(
        "c1",
        [
            MessageEvent(role="user", parts=[TextPart(text="Where is my flamingo report?")]),
            MessageEvent(
                role="model",
                parts=[
                    TextPart(text="Looking for the zebra file", thought=True),
                    FunctionCallPart(name="read_file", args={"path": "/home/me/walrus.txt"}),
                ],
            ),
            MessageEvent(
                role="user",
                parts=[
                    FunctionResponsePart(
                        name="read_file", response={"content": "the narwhal migrates"}
                    )
                ],
            ),
            CompactionEvent(
                summary="We discussed the okapi budget", covers_up_to_seq=3, kept_from_seq=4
            ),
            ClearedEvent(),
        ],
    )
    log.append("c2", [MessageEvent(role="model", parts=[TextPart(text="another flamingo")])])
    return log


@pytest.mark.parametrize(
    ("word", "kind", "role"),
    [
        ("flamingo", "message", "user"),
        ("zebra", "message", "model"),
        ("walrus", "message", "model"),
        ("read_file", "message", "model"),
        ("narwhal", "message", "user"),
        ("okapi", "compaction", None),
    ],
)
def test_finds_every_kind_of_text(
    filled: SqliteEventLog, word: str, kind: str, role: str | None
) -> None:
    hits = filled.search(word)
    assert hits, word
    hit = hits[-1]
    assert hit.kind == kind and hit.role == role and hit.conversation_id == "c1"
    assert "[[" in hit.snippet and "]]" in hit.snippet


def test_newest_first_with_limit(filled: SqliteEventLog) -> None:
    hits = filled.search("flamingo")
    assert [h.conversation_id for h in hits] == ["c2", "c1"]
    assert hits[0].seq > hits[1].seq
    assert hits[0].snippet == "another [[flamingo]]"
    assert len(filled.search("flamingo", limit=1)) == 1


def test_all_words_must_match(filled: SqliteEventLog) -> None:
    assert len(filled.search("flamingo report")) == 1
    assert filled.search("flamingo okapi") == []


def test_prefix_and_case(filled: SqliteEventLog) -> None:
    assert filled.search("FLAMIN*")
    assert filled.search("Narwhal")


@pytest.mark.parametrize(
    "query",
    ['foo"bar', "AND OR", "*", "(", ")", "NEAR(", '"', "-x", "a:b", "^", "NOT", "💥", "x\x00y"],
)
def test_any_text_is_a_valid_query(filled: SqliteEventLog, query: str) -> None:
    assert isinstance(filled.search(query), list)


def test_empty_query_finds_nothing(filled: SqliteEventLog) -> None:
    assert filled.search("") == []
    assert filled.search("   ") == []
    assert fts_query("*  (  )") is None


def test_operators_are_plain_words(log: SqliteEventLog) -> None:
    log.append("c1", [MessageEvent(role="user", parts=[TextPart(text="salt AND pepper")])])
    assert len(log.search("AND")) == 1
    assert len(log.search('salt"pepper')) == 0  # a phrase salt-pepper does not occur
    assert len(log.search("salt AND")) == 1


def test_binary_parts_and_clears_have_no_text() -> None:
    image = MessageEvent(role="user", parts=[InlineDataPart(mime_type="image/png", data="AAAA")])
    assert searchable_text(image) == ""
    assert searchable_text(ClearedEvent()) == ""
