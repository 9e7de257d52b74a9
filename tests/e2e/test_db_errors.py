"""A damaged, read-only, locked or full database: one line with the way out, never a traceback.

Tests run as root in CI, where chmod does not stop writes; a read-only file system and a full
disk are made for real in a private mount namespace (`unshare -rm`), skipped where the kernel
does not allow one.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from koroku_desktop.domain.events import MessageEvent, dump_event
from koroku_desktop.domain.parts import TextPart
from tests.e2e.conftest import ROOT, Koroku
from tests.fakes.gemini_server import FakeGemini

PAGE = 4096


def _seed(koroku: Koroku, fake: FakeGemini, turns: int = 3) -> None:
    for n in range(turns):
        fake.reply_text(f"answer {n}")
        result = koroku.run("ask", f"question {n} " + "padding " * 200)
        assert result.returncode == 0, result.stderr
    with sqlite3.connect(koroku.home / "koroku.db") as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def _one_clear_line(result: subprocess.CompletedProcess[str], *words: str) -> None:
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    for word in words:
        assert word in lines[0], lines[0]


def test_malformed_database_says_so_and_points_to_doctor(
    koroku: Koroku, fake_gemini: FakeGemini
) -> None:
    _seed(koroku, fake_gemini)
    db = koroku.home / "koroku.db"
    with db.open("r+b") as fh:  # garbage over every page but the header page
        size = db.stat().st_size
        for offset in range(PAGE, size, PAGE):
            fh.seek(offset)
            fh.write(os.urandom(PAGE))
    for command in (["history"], ["ask", "hello"], ["search", "question"]):
        _one_clear_line(koroku.run(*command), "damaged", "koroku doctor")


def test_truncated_database_says_so(koroku: Koroku, fake_gemini: FakeGemini) -> None:
    _seed(koroku, fake_gemini)
    db = koroku.home / "koroku.db"
    with db.open("r+b") as fh:
        fh.truncate(db.stat().st_size // 3)
    _one_clear_line(koroku.run("history", "--all"), "damaged", "doctor")


def test_not_a_database_says_so(koroku: Koroku) -> None:
    koroku.home.mkdir(parents=True, exist_ok=True)
    (koroku.home / "koroku.db").write_bytes(b"this is a text file, not SQLite\n" * 200)
    _one_clear_line(koroku.run("history"), "damaged")


def test_locked_database_says_so(koroku: Koroku, fake_gemini: FakeGemini) -> None:
    _seed(koroku, fake_gemini, turns=1)
    holder = sqlite3.connect(koroku.home / "koroku.db", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        fake_gemini.reply_text("never stored")
        # The lock is never given back: a short busy timeout fails as the default 5 s would.
        blocked = koroku.run("ask", "blocked", KOROKU_BUSY_TIMEOUT_S="0.2")
        _one_clear_line(blocked, "locked", "Try again")
    finally:
        holder.execute("ROLLBACK")
        holder.close()


# -- real read-only file system and full disk, in a private mount namespace ------------------


def _can_unshare() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(
        ["unshare", "-rm", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt"],
        capture_output=True,
        check=False,
    )
    return probe.returncode == 0


needs_namespace = pytest.mark.skipif(
    not _can_unshare(), reason="no unprivileged mount namespaces here"
)


def _koroku_cmd(*args: str) -> str:
    return " ".join(shlex.quote(a) for a in [sys.executable, "-m", "koroku_desktop", *args])


def _in_namespace(koroku: Koroku, script: str) -> subprocess.CompletedProcess[str]:
    env = koroku.env()
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run(
        ["unshare", "-rm", "sh", "-c", script],
        capture_output=True,
        text=True,
        env=env,
        cwd=koroku.workspace,
        timeout=120,
        check=False,
    )


@needs_namespace
def test_read_only_file_system_history_search_export_work_and_ask_says_why(
    koroku: Koroku, fake_gemini: FakeGemini
) -> None:
    _seed(koroku, fake_gemini)
    # One event whose search text is still pending (not yet folded into the index).
    zebra = json.dumps(dump_event(MessageEvent(role="user", parts=[TextPart(text="zebra")])))
    with sqlite3.connect(koroku.home / "koroku.db") as conn:
        seq = conn.execute(
            "INSERT INTO events (conversation_id, kind, schema_version, payload, created_at)"
            " VALUES ('default', 'message', 1, ?, 0)",
            (zebra,),
        ).lastrowid
        conn.execute("INSERT INTO events_fts_pending (seq, body) VALUES (?, 'zebra')", (seq,))
    with sqlite3.connect(koroku.home / "koroku.db") as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    home = shlex.quote(str(koroku.home))
    script = f"""
mount --bind {home} {home} && mount -o remount,bind,ro {home} {home} || exit 99
{_koroku_cmd("history")} > out-history.txt 2> err-history.txt; echo "history=$?"
{_koroku_cmd("search", "--all-words", "zebra")} > out-search.txt 2> err-search.txt; echo "search=$?"
{_koroku_cmd("export", "--format", "json")} > out-export.txt 2> err-export.txt; echo "export=$?"
{_koroku_cmd("ask", "hello")} > out-ask.txt 2> err-ask.txt; echo "ask=$?"
"""
    result = _in_namespace(koroku, script)
    assert result.returncode == 0, result.stderr
    codes = dict(line.split("=") for line in result.stdout.split())
    ws = koroku.workspace
    assert codes == {"history": "0", "search": "0", "export": "0", "ask": "1"}, [
        (ws / f"err-{c}.txt").read_text() for c in codes
    ]
    assert "answer 2" in (ws / "out-history.txt").read_text()
    assert "[[zebra]]" in (ws / "out-search.txt").read_text()
    assert '"events"' in (ws / "out-export.txt").read_text()
    ask_err = (ws / "err-ask.txt").read_text()
    assert "Traceback" not in ask_err and len(ask_err.strip().splitlines()) == 1
    assert "read-only" in ask_err and "KOROKU_HOME" in ask_err


@needs_namespace
def test_full_disk_is_one_line_and_loses_nothing_stored(
    koroku: Koroku, fake_gemini: FakeGemini, tmp_path: Path
) -> None:
    _seed(koroku, fake_gemini)
    stored = koroku.sql("SELECT COUNT(*) FROM events")[0][0]
    saved = tmp_path / "saved-home"
    shutil.copytree(koroku.home, saved)
    home = shlex.quote(str(koroku.home))
    fake_gemini.reply_text("an answer that cannot be stored " * 500)
    script = f"""
mount -t tmpfs -o size=2m tmpfs {home} || exit 99
cp -a {shlex.quote(str(saved))}/. {home}/
dd if=/dev/zero of={home}/filler bs=4k 2>/dev/null
{_koroku_cmd("ask", "fill it up " * 300)} > out-ask.txt 2> err-ask.txt; echo "ask=$?"
rm {home}/filler
{_koroku_cmd("history", "--json")} > out-history.txt 2> err-history.txt; echo "history=$?"
"""
    result = _in_namespace(koroku, script)
    assert result.returncode == 0, result.stderr
    ws = koroku.workspace
    assert result.stdout.split() == ["ask=1", "history=0"], (ws / "err-ask.txt").read_text()
    ask_err = (ws / "err-ask.txt").read_text()
    assert "Traceback" not in ask_err and len(ask_err.strip().splitlines()) == 1, ask_err
    assert "full" in ask_err
    history = (ws / "out-history.txt").read_text().splitlines()
    assert len(history) >= stored and "answer 2" in "".join(history)
