"""`koroku ask --attach`, `/attach` in `koroku chat`, export and import: real processes.

The bytes Gemini gets are compared with the files attached, in the turn itself and in the
next process's request (the history), after the originals are deleted.
"""

from __future__ import annotations

import hashlib
import json
import stat
from pathlib import Path
from typing import Any

from tests.e2e.conftest import Koroku
from tests.fakes.gemini_replies import decode_b64
from tests.fakes.gemini_server import FakeGemini

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 4
PDF = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj << /Type /Catalog >> endobj\n%%EOF\n"
TEXT = "def hello():\n    return 'héllo'\n".encode()


def inline_blobs(request_contents: list[dict[str, Any]]) -> list[tuple[str, bytes]]:
    out = []
    for content in request_contents:
        for part in content["parts"]:
            data = part.get("inlineData")
            if data is not None:
                mime = data.get("mimeType") or data.get("mime_type")
                out.append((mime, decode_b64(data["data"])))
    return out


def write(folder: Path, name: str, data: bytes) -> Path:
    path = folder / name
    path.write_bytes(data)
    return path


def test_ask_attaches_files_and_the_next_process_sends_the_same_bytes(
    koroku: Koroku, fake_gemini: FakeGemini, tmp_path: Path
) -> None:
    files = tmp_path / "files"
    files.mkdir()
    png = write(files, "shot.png", PNG)
    pdf = write(files, "paper.PDF", PDF)
    txt = write(files, "hello.py", TEXT)
    fake_gemini.reply_text("Three files.")
    result = koroku.run("ask", "-a", str(png), "--attach", str(pdf), "-a", str(txt), "what?")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "Three files."
    expected = [("image/png", PNG), ("application/pdf", PDF), ("text/plain", TEXT)]
    assert inline_blobs(fake_gemini.generate_requests()[-1].contents) == expected
    # The log holds references, not the bytes; the blobs are private files.
    (payload,) = koroku.sql("SELECT payload FROM events WHERE kind = 'message' LIMIT 1")[0]
    parts = json.loads(str(payload))["parts"]
    attached = [p for p in parts if p["kind"] == "attachment"]
    assert [p["name"] for p in attached] == ["shot.png", "paper.PDF", "hello.py"]
    assert all(
        p["sha256"] == hashlib.sha256(d).hexdigest()
        for p, (_, d) in zip(attached, expected, strict=True)
    )
    assert len(str(payload)) < 1000
    blob = koroku.home / "blobs" / attached[0]["sha256"][:2] / attached[0]["sha256"]
    assert stat.S_IMODE(blob.stat().st_mode) == 0o600
    # The originals are deleted; a new process sends exactly the same bytes as history.
    for path in (png, pdf, txt):
        path.unlink()
    fake_gemini.reply_text("Still three.")
    again = koroku.run("ask", "and now?")
    assert again.returncode == 0, again.stderr
    assert inline_blobs(fake_gemini.generate_requests()[-1].contents) == expected


def test_a_missing_file_is_refused_before_anything_is_stored_or_sent(
    koroku: Koroku, fake_gemini: FakeGemini, tmp_path: Path
) -> None:
    png = write(tmp_path, "ok.png", PNG)
    missing = tmp_path / "nowhere.pdf"
    result = koroku.run("ask", "-a", str(png), "-a", str(missing), "hi")
    assert result.returncode == 2
    assert str(missing) in result.stderr and "no such file" in result.stderr
    assert "Traceback" not in result.stderr
    assert fake_gemini.requests == []
    assert not (koroku.home / "blobs").exists()
    db = koroku.home / "koroku.db"
    assert not db.exists() or koroku.sql("SELECT count(*) FROM events") == [(0,)]


def test_an_unsupported_file_is_refused_naming_it(
    koroku: Koroku, fake_gemini: FakeGemini, tmp_path: Path
) -> None:
    binary = write(tmp_path, "tool.bin", b"\x7fELF\x02\x01\x01\x00" + bytes(200))
    result = koroku.run("ask", "-a", str(binary), "what is this?")
    assert result.returncode == 2
    assert str(binary) in result.stderr and "not a kind of file Gemini can read" in result.stderr
    assert fake_gemini.requests == []


def test_a_file_over_the_inline_limit_goes_through_the_files_api(
    koroku: Koroku, fake_gemini: FakeGemini, tmp_path: Path
) -> None:
    big = b"%PDF-1.7\n" + bytes(range(256)) * 55_000  # 14.08 MB: over the 14 MB inline budget
    path = write(tmp_path, "big.pdf", big)
    fake_gemini.reply_text("A big PDF.")
    result = koroku.run("ask", "-a", str(path), "summarise")
    assert result.returncode == 0, result.stderr
    parts = [p for c in fake_gemini.generate_requests()[-1].contents for p in c["parts"]]
    (file_data,) = [p["fileData"] for p in parts if "fileData" in p]
    uri = file_data.get("fileUri") or file_data.get("file_uri")
    stored = fake_gemini.files.by_uri(uri)
    assert stored is not None and stored.data == big  # sent in two 8 MB chunks
    assert (koroku.home / "uploads.json").is_file()
    # The next process reuses the upload.
    fake_gemini.reply_text("Still big.")
    assert koroku.run("ask", "again").returncode == 0
    assert fake_gemini.files.uploads == 1


def test_attach_in_chat_goes_with_the_next_message(
    koroku: Koroku, fake_gemini: FakeGemini, tmp_path: Path
) -> None:
    png = write(tmp_path, "my shot.png", PNG)
    fake_gemini.reply_text("A picture.")
    lines = [f"/attach {png}", "/attach /no/such/file.png", "/attach", "look", "exit"]
    result = koroku.run("chat", stdin="\n".join(lines) + "\n")
    assert result.returncode == 0, result.stderr
    assert "attached to your next message: my shot.png (PNG image" in result.stdout
    assert "not attached: /no/such/file.png: no such file." in result.stdout
    (request,) = fake_gemini.generate_requests()
    assert inline_blobs(request.contents) == [("image/png", PNG)]
    assert request.last_text() == "look"


def test_export_and_import_carry_the_attachments(
    koroku: Koroku, fake_gemini: FakeGemini, tmp_path: Path
) -> None:
    png = write(tmp_path, "shot.png", PNG)
    fake_gemini.reply_text("Seen.")
    assert koroku.run("ask", "-a", str(png), "look").returncode == 0
    export = tmp_path / "out" / "export.json"
    assert koroku.run("export", "--format", "json", "-o", str(export)).returncode == 0
    md = tmp_path / "out" / "chat.md"
    assert koroku.run("export", "--format", "md", "-o", str(md)).returncode == 0
    sha = hashlib.sha256(PNG).hexdigest()
    copy = tmp_path / "out" / "chat.md.files" / f"{sha[:12]}-shot.png"
    assert copy.read_bytes() == PNG
    assert f"](<chat.md.files/{sha[:12]}-shot.png>)" in md.read_text()
    # Import into another data dir: the blob comes back and the next turn sends it again.
    other = Koroku(tmp_path / "other-home", koroku.workspace)
    env = {"KOROKU_HOME": str(other.home)}
    imported = other.run("import", str(export), **env)
    assert imported.returncode == 0, imported.stderr
    assert (other.home / "blobs" / sha[:2] / sha).read_bytes() == PNG
    fake_gemini.reply_text("Seen again.")
    assert other.run("ask", "again?", **env).returncode == 0
    assert inline_blobs(fake_gemini.generate_requests()[-1].contents) == [("image/png", PNG)]
