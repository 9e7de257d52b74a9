"""The one atomic-write helper: replaces whole, keeps the old file on failure, sets the mode."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from koroku_desktop.fsutil import atomic_write, atomic_writer, exclusive_lock, try_exclusive_lock


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_it_replaces_the_file_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "notes.md"
    target.write_text("old", encoding="utf-8")
    atomic_write(target, "new — ünïcode")
    assert target.read_text(encoding="utf-8") == "new — ünïcode"
    atomic_write(target, b"\x00bytes")
    assert target.read_bytes() == b"\x00bytes"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.md"]


def test_the_new_content_appears_only_at_the_end(tmp_path: Path) -> None:
    target = tmp_path / "export.md"
    target.write_text("old", encoding="utf-8")
    with atomic_writer(target) as out:
        out.write("first half, ")
        out.flush()
        assert target.read_text(encoding="utf-8") == "old", "readers still see the old file"
        out.write("second half")
    assert target.read_text(encoding="utf-8") == "first half, second half"


def test_a_write_that_fails_midway_keeps_the_old_file(tmp_path: Path) -> None:
    target = tmp_path / "settings.json"
    target.write_text('{"model": "kept"}', encoding="utf-8")
    os.chmod(target, 0o640)
    with pytest.raises(RuntimeError, match="disk on fire"), atomic_writer(target) as out:
        out.write('{"model": "half')
        raise RuntimeError("disk on fire")
    assert target.read_text(encoding="utf-8") == '{"model": "kept"}'
    assert _mode(target) == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["settings.json"]


def test_data_that_cannot_be_encoded_leaves_nothing_behind(tmp_path: Path) -> None:
    target = tmp_path / "new.txt"
    with pytest.raises(UnicodeEncodeError):
        atomic_write(target, "lone surrogate \ud800")
    assert list(tmp_path.iterdir()) == []


def test_modes_private_by_default_chosen_or_kept(tmp_path: Path) -> None:
    private = tmp_path / "private.json"
    atomic_write(private, "{}")
    assert _mode(private) == 0o600
    launcher = tmp_path / "sub" / "koroku.desktop"
    atomic_write(launcher, "[Desktop Entry]\n", mode=0o755)
    assert _mode(launcher) == 0o755, "and the missing folder was created"
    user_file = tmp_path / "user.txt"
    user_file.write_text("x")
    os.chmod(user_file, 0o664)
    atomic_write(user_file, "y", mode=None, keep_mode=True)
    assert _mode(user_file) == 0o664
    fresh = tmp_path / "fresh.txt"
    umask = os.umask(0o022)
    os.umask(umask)
    atomic_write(fresh, "z", mode=None, keep_mode=True)
    assert _mode(fresh) == 0o666 & ~umask, "a new file gets the umask's default"


def test_a_held_lock_is_refused_to_another_open_until_released(tmp_path: Path) -> None:
    lock_file = tmp_path / "home" / "tasks-runner.lock"
    first = try_exclusive_lock(lock_file)
    assert first is not None
    assert try_exclusive_lock(lock_file) is None  # another open file: refused, not waited
    first.release()
    first.release()  # twice is harmless
    again = try_exclusive_lock(lock_file)
    assert again is not None
    again.release()
    assert stat.S_IMODE(lock_file.stat().st_mode) == 0o600


def test_the_waiting_lock_is_the_same_lock_and_released_when_the_block_ends(
    tmp_path: Path,
) -> None:
    lock_file = tmp_path / "home" / "index.lock"
    with exclusive_lock(lock_file):
        assert try_exclusive_lock(lock_file) is None
    after = try_exclusive_lock(lock_file)
    assert after is not None
    after.release()
    assert stat.S_IMODE(lock_file.stat().st_mode) == 0o600
