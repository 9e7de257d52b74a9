"""Two devices as two data dirs, used through real `koroku` processes, merged with `merge()`:
a compaction on A while B adds turns, memory files that follow the log, a memory file edited
by hand while Koroku was closed, and memory files from before memory events."""

from __future__ import annotations

import json
from pathlib import Path

from koroku_desktop.agent.summarizer import SUMMARIZER_INSTRUCTION
from koroku_desktop.domain.events import MemoryEditEvent, StoredEvent
from koroku_desktop.store import SqliteEventLog
from tests.e2e.conftest import Koroku
from tests.fakes.gemini_replies import ReceivedRequest, Reply, TextReply, said_text
from tests.fakes.gemini_server import FakeGemini

LONG = "lorem ipsum dolor sit amet " * 40


def answer(request: ReceivedRequest) -> Reply:
    """Summaries for the summarizer, a short answer to everything else."""
    if request.system_text == SUMMARIZER_INSTRUCTION:
        return TextReply("SUMMARY of the common talk.")
    return TextReply("Noted.")


def device(koroku: Koroku, tmp_path: Path, name: str) -> Koroku:
    home = tmp_path / name
    home.mkdir()
    return Koroku(home, koroku.workspace)


def ask(dev: Koroku, text: str) -> None:
    result = dev.run("ask", text, KOROKU_HOME=str(dev.home))
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr


def merge_both_ways(a: Koroku, b: Koroku) -> None:
    """Each log takes in the other's events (what any transport does in the end)."""
    with (
        SqliteEventLog(a.home / "koroku.db") as log_a,
        SqliteEventLog(b.home / "koroku.db") as log_b,
    ):
        events_a = [e for e in log_a.entries(limit=100_000) if isinstance(e, StoredEvent)]
        events_b = [e for e in log_b.entries(limit=100_000) if isinstance(e, StoredEvent)]
        log_a.merge(events_b)
        log_b.merge(events_a)


def sent_texts(request: ReceivedRequest) -> list[str]:
    return [said_text(c.get("parts", [])) for c in request.contents]


def test_a_compaction_on_a_while_b_adds_turns_reaches_both_next_requests(
    koroku: Koroku, fake_gemini: FakeGemini, tmp_path: Path
) -> None:
    fake_gemini.set_fallback(answer)
    a, b = device(koroku, tmp_path, "A"), device(koroku, tmp_path, "B")
    for n in range(3):
        ask(a, f"common {n} {LONG}")
    merge_both_ways(a, b)  # B starts as a copy of A
    ask(b, "B offline one")
    ask(b, "B offline two")
    compacted = a.run("compact", KOROKU_HOME=str(a.home))
    assert compacted.returncode == 0, compacted.stderr

    merge_both_ways(a, b)
    ask(a, "next on A")
    on_a = fake_gemini.generate_requests()[-1]
    ask(b, "next on B")
    on_b = fake_gemini.generate_requests()[-1]

    for request in (on_a, on_b):
        texts = sent_texts(request)
        assert texts[0].endswith("SUMMARY of the common talk."), texts[0]
        assert "B offline one" in texts and "B offline two" in texts
        assert not any(t.startswith("common 0") for t in texts)
    # One context on both: the same contents up to each device's own new message.
    assert on_a.contents[:-1] == on_b.contents[:-1]
    # The memory file A's compaction wrote is on B too (written from the log on start).
    files_a = {p.name: p.read_text() for p in (a.home / "memory").glob("*.md")}
    files_b = {p.name: p.read_text() for p in (b.home / "memory").glob("*.md")}
    assert files_a == files_b and "SUMMARY of the common talk." in "".join(files_a.values())


def memory_edits(home: Path) -> list[MemoryEditEvent]:
    with SqliteEventLog(home / "koroku.db") as log:
        return [
            e.event
            for e in log.entries(kinds=["memory_edit"], limit=1000)
            if isinstance(e, StoredEvent) and isinstance(e.event, MemoryEditEvent)
        ]


def test_a_memory_file_edited_by_hand_while_closed_is_taken_in_not_overwritten(
    koroku: Koroku, fake_gemini: FakeGemini
) -> None:
    fake_gemini.set_fallback(answer)
    day = "05-02-2025"
    with SqliteEventLog(koroku.home / "koroku.db") as log:
        log.append(
            "default", [MemoryEditEvent(day=day, op="append", text="[09:00]: from Koroku\n\n")]
        )
    ask(koroku, "hello")  # on start the file is written from the log
    file = koroku.home / "memory" / f"{day}.md"
    assert file.read_text() == "[09:00]: from Koroku\n\n"
    file.write_text("[09:00]: from Koroku, corrected by hand\n\n", encoding="utf-8")

    ask(koroku, "hello again")

    assert file.read_text() == "[09:00]: from Koroku, corrected by hand\n\n"
    last = memory_edits(koroku.home)[-1]
    assert last.op == "replace" and last.source == "outside"
    assert last.text == "[09:00]: from Koroku, corrected by hand\n\n"
    ask(koroku, "and again")  # taken in once: nothing new to take
    assert len(memory_edits(koroku.home)) == 2


def test_memory_files_from_before_memory_events_are_taken_in_once(
    koroku: Koroku, fake_gemini: FakeGemini
) -> None:
    fake_gemini.set_fallback(answer)
    folder = koroku.home / "memory"
    folder.mkdir(parents=True)
    (folder / "01-02-2025.md").write_text("[08:00]: an old summary\n\n", encoding="utf-8")
    (folder / "notes.md").write_text("not a day\n", encoding="utf-8")

    ask(koroku, "hello")
    ask(koroku, "hello again")

    (edit,) = memory_edits(koroku.home)
    assert (edit.day, edit.op, edit.source) == ("01-02-2025", "replace", "import")
    assert edit.text == "[08:00]: an old summary\n\n"
    assert (folder / "01-02-2025.md").read_text() == "[08:00]: an old summary\n\n"
    written = json.loads((folder / ".written.json").read_text())
    assert set(written) == {"01-02-2025"}
