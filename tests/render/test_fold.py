"""The fold: every part and event kind becomes its block, and every renderer formats each block."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from koroku_desktop.agent.summarizer import block_transcript
from koroku_desktop.cli.terminal import block_line
from koroku_desktop.domain.events import (
    ClearedEvent,
    CompactionEvent,
    DamagedEvent,
    Event,
    MemoryEditEvent,
    MessageEvent,
    RejectedEvent,
    RememberedDismissedEvent,
    StoredEvent,
    SupersededEvent,
)
from koroku_desktop.domain.parts import (
    CodeExecutionResultPart,
    ExecutableCodePart,
    FileDataPart,
    FunctionCallPart,
    FunctionResponsePart,
    InlineDataPart,
    Part,
    TextPart,
    UnknownPart,
)
from koroku_desktop.render import blocks as b
from koroku_desktop.render.fold import entry_view, event_blocks, part_block, part_blocks, speaker
from koroku_desktop.render.markdown import block_markdown
from koroku_desktop.render.markers import event_marker
from koroku_desktop.render.text import clip, short_args

PARTS: list[tuple[Part, b.Block]] = [
    (TextPart(text="hello"), b.TextBlock("hello")),
    (TextPart(text="hmm", thought=True), b.ThoughtBlock("hmm")),
    (
        FunctionCallPart(name="bash", args={"command": "ls"}, id="c1"),
        b.ToolCallBlock("bash", {"command": "ls"}, "c1"),
    ),
    (
        FunctionResponsePart(name="bash", response={"exit_code": 0}, id="c1", call_args={"a": 1}),
        b.ToolResultBlock("bash", {"exit_code": 0}, False, "c1", {"a": 1}),
    ),
    (
        ExecutableCodePart(language="PYTHON", code="print(1)"),
        b.CodeBlock("print(1)", False, "python"),
    ),
    (
        CodeExecutionResultPart(outcome="OUTCOME_OK", output="1\n"),
        b.CodeBlock("1\n", True, outcome="OUTCOME_OK"),
    ),
    (
        InlineDataPart(mime_type="image/png", data=base64.b64encode(b"12345").decode()),
        b.AttachmentBlock("image/png", size=5),
    ),
    (
        FileDataPart(mime_type="application/pdf", file_uri="files/abc"),
        b.AttachmentBlock("application/pdf", uri="files/abc"),
    ),
    (UnknownPart(raw={"videoMetadata": {}}), b.UnknownBlock({"videoMetadata": {}})),
]


@pytest.mark.parametrize(("part", "block"), PARTS)
def test_every_part_kind_becomes_its_block(part: Part, block: b.Block) -> None:
    assert part_block(part) == block


def test_empty_text_shows_nothing() -> None:
    assert part_blocks([TextPart(text=""), TextPart(text="x")]) == (b.TextBlock("x"),)


@pytest.mark.parametrize(
    ("response", "failed"),
    [
        ({"exit_code": 0, "stdout": "ok"}, False),
        ({"ok": True, "path": "a.txt"}, False),
        ({"exit_code": None}, False),
        ({"exit_code": 1}, True),  # `bash false`: the call ran, the command failed
        ({"exit_code": -15, "timed_out": True}, True),
        ({"exit_code": 0, "timed_out": True}, True),
        ({"error": "denied by the user"}, True),
    ],
)
def test_one_failure_rule(response: dict[str, Any], failed: bool) -> None:
    block = part_block(FunctionResponsePart(name="bash", response=response))
    assert isinstance(block, b.ToolResultBlock)
    assert block.failed is failed


def test_boundary_events_are_markers() -> None:
    compaction = CompactionEvent(summary="s", covers_up_to_seq=4, kept_from_seq=5)
    (marker,) = event_blocks(compaction)
    assert isinstance(marker, b.Marker) and marker.kind == "compaction"
    assert (marker.title, marker.detail, marker.style) == (
        "Summary of #4 and before",
        "s",
        "summary",
    )
    assert marker.ref("kept_from") == b.Reference("kept_from", 5)
    (cleared,) = event_blocks(ClearedEvent())
    assert isinstance(cleared, b.Marker) and cleared.fresh_start and cleared.style == "divider"
    stored = StoredEvent(seq=9, conversation_id="c", created_at=1.0, event=ClearedEvent())
    view = entry_view(stored)
    assert (view.seq, view.speaker, view.marker) == (9, "marker", cleared)


EVENTS: list[Event] = [
    CompactionEvent(summary="the summary", covers_up_to_seq=4, kept_from_seq=5),
    CompactionEvent(
        summary="s", covers_up_to_seq=4, kept_from_seq=5, covered_ids=["a", "b"], tokens_before=9
    ),
    ClearedEvent(),
    RejectedEvent(rejected_seq=3, reason="too large"),
    SupersededEvent(superseded_turn_id="t1", reason="edit"),
    RememberedDismissedEvent(passage_seq=3, surfaced_seq=5),
    MemoryEditEvent(day="01-12-2026", op="append", text="a summary", source="compaction"),
    MemoryEditEvent(day="01-12-2026", op="replace", text="mine", source="person"),
]


@pytest.mark.parametrize("event", EVENTS, ids=lambda e: e.kind)
def test_every_event_kind_but_a_message_is_one_marker_every_surface_formats(event: Event) -> None:
    marker = event_marker(event)
    assert marker is not None and marker.kind == event.kind and marker.title
    for text in (block_markdown(marker), block_line(marker, "marker")):
        assert marker.title in text
    assert block_transcript(marker) == ""  # the summarizer reads messages only


def test_what_markers_give_to_search_and_the_viewer() -> None:
    summary, memory_from_summary, edited = (event_marker(e) for e in EVENTS[0:1] + EVENTS[6:8])
    assert summary is not None and summary.search_text == summary.embed_text == "the summary"
    assert memory_from_summary is not None and memory_from_summary.search_text == ""
    assert edited is not None and (edited.search_text, edited.by) == ("mine", "you")
    rejected = event_marker(EVENTS[3])
    assert rejected is not None and rejected.chat == "Message #3 was set aside: too large"


def test_a_damaged_row_is_a_marker_of_its_own() -> None:
    damaged = DamagedEvent(
        seq=3, conversation_id="c", created_at=0.0, kind="message", raw="{", error="bad"
    )
    view = entry_view(damaged)
    assert view.marker is not None and view.blocks == (view.marker,)
    assert view.marker.title == "⚠ damaged message row, cannot be read: bad"
    assert view.marker.chat == "Damaged event #3 (bad)"


def test_speakers() -> None:
    response = FunctionResponsePart(name="bash", response={})
    assert speaker(MessageEvent(role="user", parts=[TextPart(text="hi")])) == "user"
    assert speaker(MessageEvent(role="model", parts=[TextPart(text="hi")])) == "model"
    assert speaker(MessageEvent(role="user", parts=[response])) == "tools"
    assert speaker(MessageEvent(role="user", origin="repair", parts=[response])) == "repair"
    assert speaker(ClearedEvent()) == "marker"


ALL_BLOCKS: list[b.Block] = [
    *(block for _, block in PARTS),
    b.ToolResultBlock("bash", {"exit_code": 1}, True),
    *(m for m in map(event_marker, EVENTS) if m is not None),
]


@pytest.mark.parametrize("block", ALL_BLOCKS, ids=lambda x: type(x).__name__)
def test_every_renderer_formats_every_block(block: b.Block) -> None:
    rendered = [block_markdown(block), block_transcript(block)]
    rendered.append(block_line(block, "model"))
    assert all(isinstance(text, str) for text in rendered)
    assert block_markdown(block)  # the export shows every block, if only as a placeholder


def test_failed_results_read_as_failed_everywhere() -> None:
    failed = b.ToolResultBlock("bash", {"exit_code": 1}, True)
    passed = b.ToolResultBlock("bash", {"exit_code": 0}, False)
    assert "Tool failed" in block_markdown(failed) and "Tool result" in block_markdown(passed)
    assert block_line(failed, "tools") == "  ✗ bash" and block_line(passed, "tools") == "  ✓ bash"
    failed_part = FunctionResponsePart(name="bash", response={"exit_code": 1})
    passed_part = FunctionResponsePart(name="bash", response={"exit_code": 0})
    assert failed_part.search_text().startswith("bash failed ")
    assert "failed" not in passed_part.search_text()


def test_short_args_prefers_the_command_and_clips() -> None:
    assert short_args({"command": "ls   -la\n/tmp", "timeout_seconds": 5}) == "ls -la /tmp"
    assert short_args({"a": 1, "b": "x"}) == 'a=1, b="x"'
    assert short_args({"x": "y" * 100}, limit=10) == 'x="yyyyyy…'


def test_clip_says_how_much_is_left_out() -> None:
    assert clip("abc", 5) == "abc"
    assert clip("abcdefgh", 3, "the raw JSON") == "abc\n… (5 more characters; see the raw JSON)"
