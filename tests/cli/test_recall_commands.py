"""`koroku compact`, `search`, `export`, `import` (Koroku exports), `history` and the meter in
`chat`, run as real subprocesses against the fake Gemini server and a real SQLite file."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from koroku_desktop.agent.summarizer import SUMMARIZER_INSTRUCTION
from koroku_desktop.domain.context import SUMMARY_PREFIX
from koroku_desktop.domain.events import CompactionEvent, MessageEvent
from koroku_desktop.domain.parts import TextPart
from koroku_desktop.maintenance.portable import (
    ExportFormatError,
    exported_entries,
    import_export,
    is_koroku_export,
    write_export,
)
from koroku_desktop.store import SqliteEventLog
from tests.fakes.gemini_replies import (
    CallsReply,
    ReceivedRequest,
    Reply,
    ReplyFn,
    TextReply,
)
from tests.fakes.gemini_server import FakeGemini

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
LONG = "lorem ipsum dolor sit amet " * 60


def brain(request: ReceivedRequest) -> Reply:
    """Summaries for the summarizer; `read` turns call read_file; everything else: ok."""
    if request.system_text == SUMMARIZER_INSTRUCTION:
        return TextReply("SUMMARY: the user shared a password and asked to read notes.")
    parts = request.contents[-1].get("parts", [])
    if any("functionResponse" in p for p in parts):
        return TextReply("I read the notes.")
    if "read the notes" in request.last_text():
        return CallsReply((("read_file", {"path": "notes.txt"}),))
    return TextReply("ok")


class Koroku:
    """Runs `python -m koroku_desktop ...` on one data dir."""

    def __init__(self, home: Path, workspace: Path) -> None:
        self.home = home
        self.workspace = workspace

    def run(self, *args: str, stdin: str = "", **env: str) -> subprocess.CompletedProcess[str]:
        full_env = dict(os.environ)
        full_env.update(
            KOROKU_HOME=str(self.home), KOROKU_WORKSPACE=str(self.workspace), PYTHONPATH=str(ROOT)
        )
        full_env.update(env)
        return subprocess.run(
            [sys.executable, "-m", "koroku_desktop", *args],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=60,
            env=full_env,
            cwd=self.workspace,
            check=False,
        )

    def ok(self, *args: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
        done = self.run(*args, **kwargs)
        assert done.returncode == 0, (args, done.stdout, done.stderr)
        return done

    def rows(self) -> list[tuple[Any, ...]]:
        with sqlite3.connect(self.home / "koroku.db") as conn:
            rows = conn.execute(
                "SELECT seq, conversation_id, kind, created_at, payload FROM events ORDER BY seq"
            ).fetchall()
        return [(s, c, k, t, json.loads(p)) for s, c, k, t, p in rows]

    def ids(self) -> list[tuple[Any, ...]]:
        with sqlite3.connect(self.home / "koroku.db") as conn:
            return conn.execute(
                "SELECT event_id, turn_id, writer FROM events ORDER BY seq"
            ).fetchall()

    def kinds(self) -> list[str]:
        return [row[2] for row in self.rows()]


def with_notes(home: Path, tmp_path: Path, fake: FakeGemini, answer: ReplyFn) -> Koroku:
    """A `koroku` on `home` whose workspace holds notes.txt, the fake answering by `answer`."""
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("notes: buy milk\n", encoding="utf-8")
    fake.set_fallback(answer)
    return Koroku(home, workspace)


@pytest.fixture
def koroku(koroku_home: Path, tmp_path: Path, fake_gemini: FakeGemini) -> Koroku:
    return with_notes(koroku_home, tmp_path, fake_gemini, brain)


def test_threshold_compaction_history_search_and_meter(
    koroku: Koroku, fake_gemini: FakeGemini
) -> None:
    koroku.ok("ask", "remember: the vault password is swordfish")
    koroku.ok("ask", "please read the notes")
    for n in range(8):
        koroku.ok("ask", f"turn {n}: {LONG}", KOROKU_COMPACT_AT_TOKENS="2000")
        if "compaction" in koroku.kinds():
            break
    assert "compaction" in koroku.kinds()
    assert (koroku.home / "memory").is_dir()
    (memory,) = (koroku.home / "memory").glob("*.md")
    entry = r"\[\d\d:\d\d\] in Conversation \(default\): SUMMARY: "  # names its conversation
    assert re.match(entry, memory.read_text(encoding="utf-8"))

    history = koroku.ok("history", "--all").stdout
    summary = r"── Summary of the conversation so far \(\d+ more messages folded in\) ──"
    assert re.search(summary, history)
    assert re.search(summary, koroku.ok("history").stdout)  # the live view starts there

    # Cleared too (through `chat`): the meter is shown after each turn, and nothing is lost.
    chat = koroku.ok("chat", stdin="swordfish again?\nclear\nexit\n")
    assert re.search(r"\[\d+% context left before compaction\]", chat.stderr)
    assert koroku.kinds()[-1] == "cleared"

    found = koroku.ok("search", "--all-words", "swordfish").stdout.splitlines()
    assert len(found) == 2
    seqs = [int(re.match(r"#(\d+)", line).group(1)) for line in found]  # type: ignore[union-attr]
    assert seqs == sorted(seqs, reverse=True)  # newest first
    assert "[[swordfish]]" in found[-1] and "user" in found[-1]
    hits = json.loads(koroku.ok("search", "--all-words", "vault", "password", "--json").stdout)
    assert [h["snippet"].count("[[") for h in hits] == [2]
    assert set(hits[0]) >= {"seq", "date", "role", "snippet"} and hits[0]["role"] == "user"
    summary_hit = json.loads(koroku.ok("search", "--all-words", "SUMMARY", "--json").stdout)
    assert summary_hit and summary_hit[0]["kind"] == "compaction"
    assert koroku.run("search", "nothing-like-this").returncode == 1


def test_search_by_meaning_status_backfill_and_no_key(
    koroku: Koroku, fake_gemini: FakeGemini
) -> None:
    koroku.ok("ask", "my car is painted crimson")
    koroku.ok("ask", "buy oat milk and bread")
    assert koroku.run("search", "--keyword", "automobile", "colour").returncode == 1

    backfilled = koroku.ok("search", "--backfill")
    assert "embedded" in backfilled.stderr
    status = koroku.ok("search", "--status").stdout
    assert "gemini-embedding-001 (768 dimensions)" in status and " 0 events waiting" in status

    found = koroku.ok("search", "automobile", "colour", "--json")
    hits = json.loads(found.stdout)
    assert "crimson" in hits[0]["snippet"] and hits[0]["role"] == "user"
    assert found.stderr == ""

    no_key = koroku.run("search", "automobile", "colour", GEMINI_API_KEY="")
    assert no_key.returncode == 1
    assert "keyword search only: no Gemini API key" in no_key.stderr

    fake_gemini.embedding_outage = 503
    down = koroku.run("search", "crimson")
    assert down.returncode == 0 and "crimson" in down.stdout
    assert "keyword search only: search by meaning failed" in down.stderr


def test_compact_now_prints_tokens_before_and_after(koroku: Koroku) -> None:
    koroku.ok("ask", "please read the notes")
    koroku.ok("ask", f"first: {LONG}")
    koroku.ok("ask", f"second: {LONG}")
    done = koroku.ok("compact")
    match = re.search(r"compacted: ([\d,]+) → ([\d,]+) tokens", done.stdout)
    assert match, done.stdout
    before, after = (int(g.replace(",", "")) for g in match.groups())
    assert after < before
    assert koroku.kinds()[-2:] == [
        "compaction",
        "memory_edit",
    ]  # the summary, in the log and its file
    # Only the latest turn is left: nothing more to compact, and that is not an error.
    again = koroku.run("compact")
    assert again.returncode == 0 and "nothing to compact" in again.stderr


def test_compact_with_nothing_to_compact_still_takes_in_a_hand_written_memory_file(
    koroku: Koroku,
) -> None:
    koroku.ok("ask", "please read the notes")
    (koroku.home / "memory").mkdir(mode=0o700, exist_ok=True)
    (koroku.home / "memory" / "01-11-2026.md").write_text("written by me\n", "utf-8")
    again = koroku.run("compact")
    assert again.returncode == 0 and "nothing to compact" in again.stderr
    assert koroku.kinds()[-1] == "memory_edit"  # in the log: searchable, synced, kept
    history = koroku.ok("history", "--all").stdout
    assert "Memory file 01-11-2026.md: taken into the log" in history


def test_export_json_then_import_into_a_fresh_home_event_for_event(
    koroku: Koroku, tmp_path: Path, fake_gemini: FakeGemini
) -> None:
    koroku.ok("ask", "remember: the vault password is swordfish")
    koroku.ok("ask", "please read the notes")
    koroku.ok("ask", f"more: {LONG}")
    koroku.ok("compact")
    koroku.ok("ask", "please read the notes")  # signed calls in the kept tail
    export = tmp_path / "export.json"
    koroku.ok("export", "--format", "json", "-o", str(export))
    assert export.read_text(encoding="utf-8").startswith('{"format": "koroku-export"')

    fresh = Koroku(tmp_path / "fresh-home", koroku.workspace)
    imported = fresh.ok("import", str(export))
    assert "imported" in imported.stdout
    assert fresh.rows() == koroku.rows()  # same seqs, conversation, kinds, times, payloads
    assert fresh.ids() == koroku.ids()  # and the same event ids, turn ids and writers
    assert fresh.ok("search", "swordfish").stdout == koroku.ok("search", "swordfish").stdout
    assert fresh.ok("history").stdout == koroku.ok("history").stdout
    # The summary's memory file is written on import, as it was where it was exported.
    memory = {f.name: f.read_text("utf-8") for f in (koroku.home / "memory").glob("*.md")}
    assert memory and memory == {
        f.name: f.read_text("utf-8") for f in (fresh.home / "memory").glob("*.md")
    }

    # The conversation carries on from the imported data: summary + kept tail, accepted.
    fake_gemini.requests.clear()
    answer = fresh.ok("ask", "and now?")
    assert answer.stdout.strip() == "ok"
    (request,) = fake_gemini.generate_requests()
    first = "".join(p.get("text", "") for p in request.contents[0]["parts"])
    assert first.startswith(SUMMARY_PREFIX)
    assert any("thoughtSignature" in p for c in request.contents for p in c["parts"])
    assert fresh.rows()[-1][0] == koroku.rows()[-1][0] + 2  # seqs continue after the import

    # Importing again into a non-empty data dir is refused; nothing changes.
    count = len(fresh.rows())
    refused = fresh.run("import", str(export))
    assert refused.returncode == 1 and "empty data dir" in refused.stderr
    assert len(fresh.rows()) == count


def test_live_export_and_markdown(koroku: Koroku, tmp_path: Path) -> None:
    koroku.ok("ask", "please read the notes")
    koroku.ok("ask", f"more: {LONG}")
    koroku.ok("compact")
    koroku.ok("ask", "one more")

    live = json.loads(koroku.ok("export", "--format", "json", "--live").stdout)
    assert live["scope"] == "live"
    kinds = [e["kind"] for e in live["events"]]
    assert kinds.count("compaction") == 1 and len(kinds) < len(koroku.rows())
    boundary = next(e for e in live["events"] if e["kind"] == "compaction")
    kept = [e["seq"] for e in live["events"] if e["kind"] == "message"]
    assert min(kept) == boundary["payload"]["kept_from_seq"]

    # A live export imports too, and the model sees the same context from it.
    fresh = Koroku(tmp_path / "live-home", koroku.workspace)
    path = tmp_path / "live.json"
    path.write_text(json.dumps(live), encoding="utf-8")
    fresh.ok("import", str(path))
    assert fresh.ok("history").stdout == koroku.ok("history").stdout

    md = koroku.ok("export", "--format", "md").stdout
    assert md.startswith("# Koroku conversation")
    summary = "> **Summary of the conversation so far ("
    for piece in ("**You**", "**Koroku**", "→ `read_file`", summary, "buy milk"):
        assert piece in md, piece
    out = tmp_path / "live.md"
    done = koroku.ok("export", "--live", "-o", str(out))
    assert "exported" in done.stderr
    text = out.read_text(encoding="utf-8")
    assert summary in text and "one more" in text and "read the notes" not in text


def test_portable_round_trip_keeps_damaged_rows_and_the_search_index(tmp_path: Path) -> None:
    """In process, on the store: every row comes back as written, damaged ones included."""
    source = SqliteEventLog(tmp_path / "a.db")
    source.append("default", [MessageEvent(role="user", parts=[TextPart(text="hello otter")])])
    with sqlite3.connect(tmp_path / "a.db") as conn:
        conn.execute(
            "INSERT INTO events (conversation_id, kind, schema_version, payload, created_at)"
            " VALUES ('default', 'message', 1, '{not json', 1.5)"
        )
    source.append(
        "other", [CompactionEvent(summary="otter facts", covers_up_to_seq=1, kept_from_seq=2)]
    )
    path = tmp_path / "export.json"
    with path.open("w", encoding="utf-8") as out:
        assert write_export(out, exported_entries(source), scope="all", exported_at=2.0) == 3
    assert is_koroku_export(path) and not is_koroku_export(tmp_path / "a.db")

    target = SqliteEventLog(tmp_path / "b.db")
    report = import_export(target, path)
    assert (report.imported, report.first_seq, report.last_seq) == (3, 1, 3)
    with sqlite3.connect(tmp_path / "a.db") as a, sqlite3.connect(tmp_path / "b.db") as b:
        query = "SELECT seq, conversation_id, kind, payload, created_at FROM events ORDER BY seq"
        assert a.execute(query).fetchall() == b.execute(query).fetchall()
    assert [h.seq for h in target.search("otter")] == [h.seq for h in source.search("otter")]
    assert [h.seq for h in target.search("otter")] == [3, 1]
    (appended,) = target.append("default", [MessageEvent(role="user", parts=[TextPart(text="x")])])
    assert appended.seq == 4

    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "koroku-export", "version": 1, "events": [{"seq": 0}]}')
    with SqliteEventLog(tmp_path / "c.db") as empty, pytest.raises(ExportFormatError):
        import_export(empty, bad)
    source.close()
    target.close()
