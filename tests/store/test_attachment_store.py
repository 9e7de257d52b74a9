"""AttachmentStore and the attachments in exports: real files, a real SQLite log."""

from __future__ import annotations

import base64
import io
import json
import os
import stat
import subprocess
import time
from pathlib import Path

import pytest

from koroku_desktop.blobs.attachments import (
    AttachmentStore,
    read_attachment_file,
    safe_file_name,
    sweep_copies,
)
from koroku_desktop.blobs.blob_store import BlobStore, MissingBlob
from koroku_desktop.domain.attachment import AttachmentRefused, check_attachment
from koroku_desktop.domain.events import MessageEvent
from koroku_desktop.domain.parts import Part, TextPart
from koroku_desktop.maintenance.portable import (
    ExportFormatError,
    exported_entries,
    import_export,
    write_export,
)
from koroku_desktop.render.blocks import AttachmentBlock
from koroku_desktop.render.fold import event_blocks
from koroku_desktop.render.markdown import write_markdown
from koroku_desktop.store import SqliteEventLog
from koroku_desktop.store.search.searchable import searchable_text

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(200))


@pytest.fixture
def store(tmp_path: Path) -> AttachmentStore:
    return AttachmentStore(BlobStore(tmp_path / "blobs"), temp_root=tmp_path / "tmp")


def test_a_kept_file_is_read_back_and_opened_as_a_named_private_copy(
    store: AttachmentStore,
) -> None:
    part = store.keep(check_attachment(PNG, "../../etc/shot.png"))
    assert store.read(part.sha256) == PNG and store.has(part.sha256)
    copy = store.open_copy(part)
    assert copy.name == "shot.png" and copy.read_bytes() == PNG
    assert stat.S_IMODE(copy.stat().st_mode) == 0o600
    store.path(part.sha256).unlink()
    with pytest.raises(MissingBlob):
        store.open_copy(part)


def test_file_names_are_made_safe() -> None:
    assert safe_file_name("a/b\\c:d*?.pdf") == "c_d_.pdf"
    assert safe_file_name("...") == "attachment"


def test_reading_a_file_names_it_in_every_refusal(tmp_path: Path) -> None:
    with pytest.raises(AttachmentRefused, match=f"{tmp_path}/none.png: no such file"):
        read_attachment_file(tmp_path / "none.png")
    with pytest.raises(AttachmentRefused, match=f"{tmp_path} is a folder"):
        read_attachment_file(tmp_path)
    (tmp_path / "a.bin").write_bytes(b"\x00\x01\x02\x03")
    with pytest.raises(AttachmentRefused, match=f"{tmp_path}/a.bin is not a kind of file"):
        read_attachment_file(tmp_path / "a.bin")


def _log_with_attachment(tmp_path: Path, store: AttachmentStore) -> SqliteEventLog:
    log = SqliteEventLog(tmp_path / "koroku.db")
    part = store.keep(check_attachment(PNG, "shot.png"))
    parts: list[Part] = [part, TextPart(text="look")]
    log.append("default", [MessageEvent(role="user", origin="person", parts=parts)])
    return log


def test_the_fold_search_and_markdown_show_the_file(tmp_path: Path, store: AttachmentStore) -> None:
    log = _log_with_attachment(tmp_path, store)
    (entry,) = list(exported_entries(log))
    event = entry.event  # type: ignore[union-attr]
    (block, _text) = event_blocks(event)
    assert isinstance(block, AttachmentBlock) and block.name == "shot.png" and block.size == 208
    assert "shot.png" in searchable_text(event)
    out = io.StringIO()
    write_markdown(out, [entry], live=False, link=store.blob_links())
    assert f"![shot.png](<{store.path(block.sha256 or '').resolve().as_uri()}>)" in out.getvalue()
    assert "*Attached: shot.png (PNG image, 208 B)*" in out.getvalue()
    log.close()


def test_a_json_export_carries_the_blobs_and_an_import_restores_them(
    tmp_path: Path, store: AttachmentStore
) -> None:
    log = _log_with_attachment(tmp_path, store)
    out = io.StringIO()
    write_export(out, exported_entries(log), scope="all", exported_at=0.0, blobs=store.read)
    data = json.loads(out.getvalue())
    (sha,) = data["blobs"]
    assert base64.b64decode(data["blobs"][sha]) == PNG
    export = tmp_path / "export.json"
    export.write_text(out.getvalue())
    target = BlobStore(tmp_path / "other-blobs")
    other = SqliteEventLog(tmp_path / "other.db")
    report = import_export(other, export, target)
    assert report.imported == 1 and target.read(sha) == PNG
    # A blob that does not match its name is refused before anything is written.
    data["blobs"][sha] = base64.b64encode(b"tampered").decode()
    export.write_text(json.dumps(data))
    third = SqliteEventLog(tmp_path / "third.db")
    with pytest.raises(ExportFormatError, match="does not match its hash"):
        import_export(third, export, BlobStore(tmp_path / "third-blobs"))
    assert third.count() == 0 and not (tmp_path / "third-blobs").exists()
    for opened in (log, other, third):
        opened.close()


def test_copies_go_when_the_process_closes_and_a_dead_ones_are_swept(
    store: AttachmentStore, tmp_path: Path
) -> None:
    part = store.keep(check_attachment(PNG, "shot.png"))
    copy = store.open_copy(part)
    folder = copy.parent.parent
    assert folder.name.startswith(f"koroku-attachments-{os.getpid()}-")
    store.discard_copies()
    assert not folder.exists()

    root = tmp_path / "tmp"
    gone_pid = subprocess.Popen(["true"])  # a pid that has exited
    gone_pid.wait()
    left = {
        "dead": root / f"koroku-attachments-{gone_pid.pid}-abc",
        "alive": root / f"koroku-attachments-{os.getpid()}-def",
        "old, no pid": root / "koroku-attachments-xyz",
        "new, no pid": root / "koroku-attachments-uvw",
    }
    for path in left.values():
        path.mkdir()
    old = time.time() - 2 * 86_400
    os.utime(left["old, no pid"], (old, old))
    assert sweep_copies(root) == 2
    assert sorted(p.name for p in root.iterdir()) == sorted(
        [left["alive"].name, left["new, no pid"].name]
    )
    store.open_copy(part)  # opening a copy sweeps too, and starts a folder of its own
    assert len(list(root.glob(f"koroku-attachments-{os.getpid()}-*"))) == 2
