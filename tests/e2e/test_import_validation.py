"""`koroku import` refuses what would break the data dir, and bad Unicode input never crashes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.e2e.conftest import Koroku
from tests.fakes.gemini_server import FakeGemini


def _export(koroku: Koroku, fake: FakeGemini, tmp_path: Path) -> dict[str, object]:
    fake.reply_text("first answer")
    assert koroku.run("ask", "first question").returncode == 0
    out = koroku.run("export", "--format", "json")
    assert out.returncode == 0, out.stderr
    data: dict[str, object] = json.loads(out.stdout)
    return data


def _fresh(koroku: Koroku, tmp_path: Path, name: str) -> Koroku:
    home = tmp_path / name
    return Koroku(home, koroku.workspace)


def _import(target: Koroku, path: Path) -> subprocess.CompletedProcess[str]:
    return target.run("import", str(path), KOROKU_HOME=str(target.home))


def test_a_file_that_is_neither_export_nor_database_is_refused(
    koroku: Koroku, tmp_path: Path
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("just some notes\n")
    result = koroku.run("import", str(notes))
    assert result.returncode == 2
    assert "is not a Koroku export, a tutorial database or" in result.stderr
    assert "Traceback" not in result.stderr


def test_utf16_export_is_read(koroku: Koroku, fake_gemini: FakeGemini, tmp_path: Path) -> None:
    data = _export(koroku, fake_gemini, tmp_path)
    path = tmp_path / "export-utf16.json"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-16")
    target = _fresh(koroku, tmp_path, "home-utf16")
    result = _import(target, path)
    assert result.returncode == 0, result.stderr
    assert "imported 2 event(s)" in result.stdout


def test_huge_seq_is_refused_and_the_data_dir_stays_writable(
    koroku: Koroku, fake_gemini: FakeGemini, tmp_path: Path
) -> None:
    data = _export(koroku, fake_gemini, tmp_path)
    events = data["events"]
    assert isinstance(events, list)
    events[-1]["seq"] = 2**63 - 1
    path = tmp_path / "huge.json"
    path.write_text(json.dumps(data))
    target = _fresh(koroku, tmp_path, "home-huge")
    result = _import(target, path)
    assert result.returncode == 2
    assert "too large" in result.stderr and "Traceback" not in result.stderr
    fake_gemini.reply_text("still writable")
    ask = target.run("ask", "hello", KOROKU_HOME=str(target.home))
    assert ask.returncode == 0, ask.stderr


def test_nan_created_at_is_refused(koroku: Koroku, fake_gemini: FakeGemini, tmp_path: Path) -> None:
    data = _export(koroku, fake_gemini, tmp_path)
    text = json.dumps(data)
    first_time = json.dumps(data["events"][0]["created_at"])  # type: ignore[index]
    path = tmp_path / "nan.json"
    path.write_text(text.replace(f'"created_at": {first_time}', '"created_at": NaN', 1))
    result = _import(_fresh(koroku, tmp_path, "home-nan"), path)
    assert result.returncode == 2
    assert "NaN" in result.stderr and "Traceback" not in result.stderr


def test_export_with_a_removed_response_is_imported_and_the_next_turn_works(
    koroku: Koroku, fake_gemini: FakeGemini, tmp_path: Path
) -> None:
    (koroku.workspace / "notes.txt").write_text("notes")
    fake_gemini.reply_calls(("read_file", {"path": "notes.txt"}))
    fake_gemini.reply_text("I read it.")
    assert koroku.run("ask", "read my notes").returncode == 0
    data = json.loads(koroku.run("export", "--format", "json").stdout)
    responses = [e for e in data["events"] if "function_response" in json.dumps(e)]
    assert len(responses) == 1
    data["events"].remove(responses[0])
    path = tmp_path / "no-response.json"
    path.write_text(json.dumps(data))
    target = _fresh(koroku, tmp_path, "home-pairing")
    result = _import(target, path)
    assert result.returncode == 0, result.stderr
    assert "answered call 'read_file' that had no response" in result.stderr
    fake_gemini.reply_text("fine after import")
    ask = target.run("ask", "go on", KOROKU_HOME=str(target.home))
    assert ask.returncode == 0, ask.stderr
    assert ask.stdout.strip() == "fine after import"


def test_invalid_utf8_on_stdin_and_in_arguments_is_replaced(
    koroku: Koroku, fake_gemini: FakeGemini
) -> None:
    fake_gemini.reply_text("got it")
    piped = subprocess.run(
        [sys.executable, "-m", "koroku_desktop", "ask", "-"],
        input=b"caf\xe9 au lait\n",
        capture_output=True,
        env=koroku.env(),
        cwd=koroku.workspace,
        timeout=60,
        check=False,
    )
    assert piped.returncode == 0, piped.stderr
    assert b"not valid UTF-8" in piped.stderr and b"Traceback" not in piped.stderr
    assert fake_gemini.generate_requests()[-1].last_text() == "caf\ufffd au lait"

    fake_gemini.reply_text("got it again")
    # A Latin-1 byte and an encoded lone surrogate (ED A0 80) in argv, as a shell passes them.
    argued = koroku.run("ask", "th\udce9 caf\udced\udca0\udc80")
    assert argued.returncode == 0, argued.stderr
    assert "not valid UTF-8" in argued.stderr
    assert "\ufffd" in fake_gemini.generate_requests()[-1].last_text()
    search = koroku.run("search", "caf\udce9")
    assert "Traceback" not in search.stderr


def test_invalid_utf8_typed_into_the_chat_repl_is_replaced(
    koroku: Koroku, fake_gemini: FakeGemini
) -> None:
    fake_gemini.reply_text("chat answer")
    chat = subprocess.run(
        [sys.executable, "-m", "koroku_desktop", "chat"],
        input=b"caf\xe9 noir\nexit\n",
        capture_output=True,
        env=koroku.env(),
        cwd=koroku.workspace,
        timeout=60,
        check=False,
    )
    assert chat.returncode == 0, chat.stderr
    assert b"Traceback" not in chat.stderr and b"chat answer" in chat.stdout
    assert fake_gemini.generate_requests()[-1].last_text() == "caf\ufffd noir"
