"""read_file, write_file and edit_file against real files."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from koroku_desktop.tools import builtin_files
from koroku_desktop.tools.base import ToolContext
from koroku_desktop.tools.builtin_files import READ_LIMIT_CHARS, EditFile, ReadFile, WriteFile


async def read(ctx: ToolContext, path: str) -> dict[str, Any]:
    return await ReadFile(path=path).execute(ctx)


async def write(ctx: ToolContext, path: str, content: str) -> dict[str, Any]:
    return await WriteFile(path=path, content=content).execute(ctx)


async def edit(ctx: ToolContext, path: str, old: str, new: str, **kw: Any) -> dict[str, Any]:
    return await EditFile(path=path, old_str=old, new_str=new, **kw).execute(ctx)


# -- read_file ---------------------------------------------------------------------------


async def test_read_relative_path_resolves_against_workspace(ctx: ToolContext) -> None:
    (ctx.workspace / "notes.txt").write_text("hello\nwörld\n", encoding="utf-8")
    result = await read(ctx, "notes.txt")
    assert result == {
        "path": str(ctx.workspace / "notes.txt"),
        "content": "hello\nwörld\n",
        "truncated": False,
    }


async def test_read_absolute_path(ctx: ToolContext, tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.txt"
    target.write_text("x", encoding="utf-8")
    assert (await read(ctx, str(target)))["content"] == "x"


async def test_read_keeps_crlf_line_endings(ctx: ToolContext) -> None:
    (ctx.workspace / "dos.txt").write_bytes(b"a\r\nb\r\n")
    assert (await read(ctx, "dos.txt"))["content"] == "a\r\nb\r\n"


async def test_read_missing_file(ctx: ToolContext) -> None:
    result = await read(ctx, "nope.txt")
    assert "file not found" in result["error"]
    assert "nope.txt" in result["error"]


async def test_read_directory(ctx: ToolContext) -> None:
    (ctx.workspace / "sub").mkdir()
    assert "directory" in (await read(ctx, "sub"))["error"]


async def test_read_refuses_fifo_and_devices(ctx: ToolContext) -> None:
    os.mkfifo(ctx.workspace / "pipe")
    assert "not a regular file" in (await read(ctx, "pipe"))["error"]
    assert "not a regular file" in (await read(ctx, "/dev/zero"))["error"]


async def test_read_refuses_nul_bytes(ctx: ToolContext) -> None:
    (ctx.workspace / "img.bin").write_bytes(b"PK\x03\x04\x00\x00data")
    result = await read(ctx, "img.bin")
    assert "binary" in result["error"]
    assert "content" not in result


async def test_read_refuses_invalid_utf8(ctx: ToolContext) -> None:
    (ctx.workspace / "latin1.txt").write_bytes("café".encode("latin-1") + b" more text")
    assert "binary" in (await read(ctx, "latin1.txt"))["error"]


async def test_read_truncates_huge_file_with_marker(ctx: ToolContext) -> None:
    text = "".join(f"line {i}\n" for i in range(40_000))  # ~350,000 characters
    (ctx.workspace / "big.txt").write_text(text, encoding="utf-8")
    result = await read(ctx, "big.txt")
    assert result["truncated"] is True
    assert result["content"].startswith(text[:READ_LIMIT_CHARS])
    marker = f"[... truncated: showing {READ_LIMIT_CHARS} of {len(text)} characters ...]"
    assert result["content"].endswith(marker)


async def test_read_very_large_file_reads_only_a_part(ctx: ToolContext) -> None:
    size = 10_000_000
    (ctx.workspace / "huge.log").write_bytes(b"y" * size)
    result = await read(ctx, "huge.log")
    assert result["truncated"] is True
    assert f"showing {READ_LIMIT_CHARS} of {size} bytes" in result["content"]
    assert len(result["content"]) < READ_LIMIT_CHARS + 200


async def test_read_cut_multibyte_character_at_limit_is_not_binary(ctx: ToolContext) -> None:
    # 3-byte characters: the byte limit falls inside one of them.
    (ctx.workspace / "cjk.txt").write_text("漢" * 200_001, encoding="utf-8")
    result = await read(ctx, "cjk.txt")
    assert "error" not in result
    assert result["content"].startswith("漢" * READ_LIMIT_CHARS)
    assert "truncated" in result["content"]


async def test_read_runs_off_the_event_loop(
    ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    (ctx.workspace / "a.txt").write_text("a", encoding="utf-8")
    seen: list[threading.Thread] = []
    real = builtin_files._read_text

    def recording(path: Path, limit: int | None) -> tuple[str, int, bool]:
        seen.append(threading.current_thread())
        return real(path, limit)

    monkeypatch.setattr(builtin_files, "_read_text", recording)
    assert (await read(ctx, "a.txt"))["content"] == "a"
    assert seen and seen[0] is not threading.main_thread()


# -- write_file --------------------------------------------------------------------------


async def test_write_creates_parents_and_reports_bytes(ctx: ToolContext) -> None:
    result = await write(ctx, "deep/er/file.txt", "héllo")
    target = ctx.workspace / "deep" / "er" / "file.txt"
    assert result == {"ok": True, "path": str(target), "bytes": 6, "created": True}
    assert target.read_text(encoding="utf-8") == "héllo"


async def test_write_overwrites_existing_file(ctx: ToolContext) -> None:
    await write(ctx, "f.txt", "one")
    result = await write(ctx, "f.txt", "two")
    assert result["created"] is False
    assert (ctx.workspace / "f.txt").read_text(encoding="utf-8") == "two"


async def test_write_leaves_no_temp_files(ctx: ToolContext) -> None:
    await write(ctx, "f.txt", "one")
    await write(ctx, "f.txt", "two")
    assert sorted(p.name for p in ctx.workspace.iterdir()) == ["f.txt"]


async def test_write_keeps_permission_bits_of_existing_file(ctx: ToolContext) -> None:
    target = ctx.workspace / "run.sh"
    target.write_text("#!/bin/sh\n", encoding="utf-8")
    target.chmod(0o750)
    await write(ctx, "run.sh", "#!/bin/sh\necho hi\n")
    assert stat.S_IMODE(target.stat().st_mode) == 0o750


async def test_failed_write_keeps_old_content_and_no_temp(
    ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = ctx.workspace / "f.txt"
    target.write_text("original", encoding="utf-8")

    def broken_replace(src: Any, dst: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)
    result = await write(ctx, "f.txt", "new content")
    assert "No space left" in result["error"]
    assert target.read_text(encoding="utf-8") == "original"
    assert [p.name for p in ctx.workspace.iterdir()] == ["f.txt"]


async def test_write_to_a_directory_path_fails(ctx: ToolContext) -> None:
    (ctx.workspace / "sub").mkdir()
    assert "directory" in (await write(ctx, "sub", "x"))["error"]


async def test_write_under_a_file_fails(ctx: ToolContext) -> None:
    (ctx.workspace / "plain").write_text("x", encoding="utf-8")
    result = await write(ctx, "plain/child.txt", "x")
    assert "error" in result


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A folder another user can reach (tmp_path lives under a 0700 folder)."""
    path = Path(tempfile.mkdtemp(prefix="koroku-perm-"))
    path.chmod(0o755)
    yield path
    for sub in path.rglob("*"):
        if sub.is_dir():
            sub.chmod(0o755)
    shutil.rmtree(path)


_UNPRIVILEGED_SCRIPT = textwrap.dedent(
    """
    import asyncio, concurrent.futures.thread, json, os, sys
    from pathlib import Path
    from koroku_desktop.tools.base import ToolContext
    from koroku_desktop.tools.builtin_files import EditFile, WriteFile, ReadFile
    if os.geteuid() == 0:
        os.setgid(65534)
        os.setuid(65534)
    ws = Path(sys.argv[1])
    ctx = ToolContext(workspace=ws, data_dir=ws)
    async def main():
        return [
            await WriteFile(path="locked/new.txt", content="x").execute(ctx),
            await EditFile(path="locked/old.txt", old_str="a", new_str="b").execute(ctx),
            await ReadFile(path="locked/secret.txt").execute(ctx),
        ]
    print(json.dumps(asyncio.run(main())))
    """
)


def test_permission_denied_folder_is_reported(shared_dir: Path) -> None:
    """Runs in a child process that drops root, since root ignores permission bits."""
    locked = shared_dir / "locked"
    locked.mkdir()
    (locked / "old.txt").write_text("a", encoding="utf-8")
    (locked / "secret.txt").write_text("s", encoding="utf-8")
    (locked / "old.txt").chmod(0o644)
    (locked / "secret.txt").chmod(0o000)
    locked.chmod(0o555)
    proc = subprocess.run(
        [sys.executable, "-c", _UNPRIVILEGED_SCRIPT, str(shared_dir)],
        capture_output=True,
        text=True,
        check=True,
        cwd=shared_dir,
    )
    write_result, edit_result, read_result = json.loads(proc.stdout)
    assert "permission denied" in write_result["error"]
    assert "permission denied" in edit_result["error"]
    assert "permission denied" in read_result["error"]
    assert sorted(p.name for p in locked.iterdir()) == ["old.txt", "secret.txt"]
    assert (locked / "old.txt").read_text(encoding="utf-8") == "a"


# -- edit_file ---------------------------------------------------------------------------


async def test_edit_replaces_unique_text(ctx: ToolContext) -> None:
    (ctx.workspace / "code.py").write_text("x = 1\ny = 2\n", encoding="utf-8")
    result = await edit(ctx, "code.py", "y = 2", "y = 3")
    assert result == {"ok": True, "path": str(ctx.workspace / "code.py"), "replacements": 1}
    assert (ctx.workspace / "code.py").read_text(encoding="utf-8") == "x = 1\ny = 3\n"
    assert [p.name for p in ctx.workspace.iterdir()] == ["code.py"]


async def test_edit_ambiguous_without_replace_all(ctx: ToolContext) -> None:
    (ctx.workspace / "a.txt").write_text("ab ab ab", encoding="utf-8")
    result = await edit(ctx, "a.txt", "ab", "cd")
    assert "occurs 3 times" in result["error"]
    assert "replace_all" in result["error"]
    assert (ctx.workspace / "a.txt").read_text(encoding="utf-8") == "ab ab ab"


async def test_edit_replace_all_counts(ctx: ToolContext) -> None:
    (ctx.workspace / "a.txt").write_text("ab ab ab", encoding="utf-8")
    result = await edit(ctx, "a.txt", "ab", "cd", replace_all=True)
    assert result["replacements"] == 3
    assert (ctx.workspace / "a.txt").read_text(encoding="utf-8") == "cd cd cd"


async def test_edit_not_found(ctx: ToolContext) -> None:
    (ctx.workspace / "a.txt").write_text("hello", encoding="utf-8")
    assert "not found" in (await edit(ctx, "a.txt", "bye", "x"))["error"]


async def test_edit_empty_old_str(ctx: ToolContext) -> None:
    (ctx.workspace / "a.txt").write_text("hello", encoding="utf-8")
    assert "empty" in (await edit(ctx, "a.txt", "", "x"))["error"]


async def test_edit_missing_file(ctx: ToolContext) -> None:
    result = await edit(ctx, "ghost.txt", "a", "b")
    assert "file not found" in result["error"]
    assert not (ctx.workspace / "ghost.txt").exists()


async def test_edit_refuses_binary_file(ctx: ToolContext) -> None:
    (ctx.workspace / "b.bin").write_bytes(b"a\x00b")
    assert "binary" in (await edit(ctx, "b.bin", "a", "c"))["error"]
    assert (ctx.workspace / "b.bin").read_bytes() == b"a\x00b"


async def test_edit_keeps_crlf_and_permissions(ctx: ToolContext) -> None:
    target = ctx.workspace / "dos.txt"
    target.write_bytes(b"one\r\ntwo\r\n")
    target.chmod(0o640)
    await edit(ctx, "dos.txt", "two", "three")
    assert target.read_bytes() == b"one\r\nthree\r\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
