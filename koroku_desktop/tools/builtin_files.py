"""Built-in file tools: read_file, write_file, edit_file. Disk work runs off the event loop."""

from __future__ import annotations

import asyncio
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from pydantic import Field

from koroku_desktop.fsutil import atomic_write
from koroku_desktop.tools.base import AgentTool, ToolContext, tool_error
from koroku_desktop.tools.sensitive import read_verdict
from koroku_desktop.tools.truncation import truncate_head

READ_LIMIT_CHARS = 100_000
"""read_file shows at most this many characters of a file."""

_READ_LIMIT_BYTES = 8_000_000  # files up to this size are decoded whole, for exact counts


class ToolFailure(Exception):
    """An expected failure whose message is shown to the model as the tool's error."""


def _describe_os_error(exc: OSError, path: Path) -> str:
    if isinstance(exc, FileNotFoundError):
        return f"file not found: {path}"
    if isinstance(exc, PermissionError):
        return f"permission denied: {path}"
    if isinstance(exc, IsADirectoryError):
        return f"is a directory, not a file: {path}"
    if isinstance(exc, NotADirectoryError):
        return f"a parent of the path is not a directory: {path}"
    return f"{exc.strerror or type(exc).__name__}: {path}"


def _decode_text(data: bytes, path: Path, partial: bool = False) -> str:
    """UTF-8 text, or ToolFailure for binary content (NUL bytes or invalid UTF-8)."""
    if b"\x00" in data:
        raise ToolFailure(f"refusing to read a binary file (it contains NUL bytes): {path}")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if partial and exc.start >= len(data) - 3:  # a character cut by the read limit
            return data[: exc.start].decode("utf-8")
        raise ToolFailure(
            f"refusing to read a binary file (it is not valid UTF-8): {path}"
        ) from None


def _read_text(path: Path, limit_bytes: int | None) -> tuple[str, int, bool]:
    """(text, file size in bytes, whether only a part was read)."""
    mode = path.stat().st_mode
    if stat.S_ISDIR(mode):
        raise ToolFailure(f"is a directory, not a file: {path}")
    if not stat.S_ISREG(mode):  # a FIFO or device would block or never end
        raise ToolFailure(f"not a regular file (a pipe, socket or device): {path}")
    with path.open("rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        data = fh.read() if limit_bytes is None else fh.read(limit_bytes + 1)
    partial = limit_bytes is not None and len(data) > limit_bytes
    if partial:
        data = data[:limit_bytes]
    return _decode_text(data, path, partial), size, partial


def write_file_atomically(path: Path, data: bytes) -> bool:
    """Write `data` to `path` atomically (see `fsutil`); whether the file was created.

    An existing file keeps its permission bits; a new one gets the umask's default, as any
    file the user's own editor would create.
    """
    if path.is_dir():
        raise ToolFailure(f"is a directory, not a file: {path}")
    created = not path.exists()
    atomic_write(path, data, mode=None, keep_mode=True)
    return created


async def _guarded(path: Path, work: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """Run blocking `work()` in a thread; turn expected failures into error dicts."""
    try:
        result: dict[str, Any] = await asyncio.to_thread(work)
    except ToolFailure as exc:
        return tool_error(str(exc))
    except OSError as exc:
        return tool_error(_describe_os_error(exc, path))
    return result


class ReadFile(AgentTool):
    """Read a UTF-8 text file and return its content.

    Relative paths are resolved against the workspace; `~` is the home folder. Binary files
    are refused. Files longer than 100,000 characters are cut, with a marker saying how much
    was shown. Use this before editing a file, to see its exact current text.
    """

    name: ClassVar[str] = "read_file"
    needs_approval: ClassVar[bool] = False

    path: str = Field(description="Path of the file to read (absolute, or relative to workspace).")

    @classmethod
    def approval_for(cls, args: dict[str, Any], workspace: Path) -> str:
        """Free inside the workspace; outside it asks like a write; secrets always ask."""
        raw = args.get("path")
        if not isinstance(raw, str) or not raw:
            return "policy"  # the call fails validation anyway
        verdict = read_verdict(raw, workspace)
        return "policy" if verdict == "free" else verdict

    async def execute(self, ctx: ToolContext) -> dict[str, Any]:
        """Read the file in a worker thread."""
        path = ctx.resolve(self.path)

        def work() -> dict[str, Any]:
            text, size, partial = _read_text(path, _READ_LIMIT_BYTES)
            if partial:
                content = truncate_head(text, READ_LIMIT_CHARS, total=size, unit="bytes")
            else:
                content = truncate_head(text, READ_LIMIT_CHARS)
            return {"path": str(path), "content": content, "truncated": content != text}

        return await _guarded(path, work)


class WriteFile(AgentTool):
    """Create or overwrite a text file with the given content (UTF-8).

    Missing parent folders are created. The write is atomic: the file holds either its old
    content or the new one, never a mix. This replaces the whole file; to change part of an
    existing file prefer edit_file. Returns the path, the number of bytes written, and
    whether the file was newly created.
    """

    name: ClassVar[str] = "write_file"

    path: str = Field(description="Path of the file to write (absolute, or relative to workspace).")
    content: str = Field(description="The complete new content of the file.")

    async def execute(self, ctx: ToolContext) -> dict[str, Any]:
        """Write the file in a worker thread."""
        path = ctx.resolve(self.path)
        data = self.content.encode("utf-8")

        def work() -> dict[str, Any]:
            created = write_file_atomically(path, data)
            return {"ok": True, "path": str(path), "bytes": len(data), "created": created}

        return await _guarded(path, work)


class EditFile(AgentTool):
    """Replace an exact piece of text in an existing file.

    `old_str` must match the file's current text exactly, including whitespace and
    indentation (read the file first). It must occur exactly once unless `replace_all` is
    true; if it occurs several times, include more surrounding lines to make it unique. The
    file is rewritten atomically. Returns the number of replacements made.
    """

    name: ClassVar[str] = "edit_file"

    path: str = Field(description="Path of the file to edit (absolute, or relative to workspace).")
    old_str: str = Field(description="The exact text to replace; must not be empty.")
    new_str: str = Field(description="The text to put in its place (may be empty to delete).")
    replace_all: bool = Field(
        default=False, description="Replace every occurrence instead of exactly one."
    )

    @classmethod
    def approval_for(cls, args: dict[str, Any], workspace: Path) -> str:
        """An edit with nothing to replace changes nothing: it is not put to the person (it
        fails with its reason); every other edit follows the policy."""
        old = args.get("old_str")
        return "no_change" if not isinstance(old, str) or not old else "policy"

    async def execute(self, ctx: ToolContext) -> dict[str, Any]:
        """Edit the file in a worker thread."""
        path = ctx.resolve(self.path)
        if not self.old_str:
            return tool_error("old_str is empty: give the exact text to replace")

        def work() -> dict[str, Any]:
            if not path.exists():
                raise ToolFailure(f"file not found: {path} (use write_file to create it)")
            text, _, _ = _read_text(path, None)
            count = text.count(self.old_str)
            if count == 0:
                raise ToolFailure(
                    f"old_str was not found in {path}; it must match the current text exactly, "
                    "including whitespace (read the file again)"
                )
            if count > 1 and not self.replace_all:
                raise ToolFailure(
                    f"old_str occurs {count} times in {path}; include more surrounding text to "
                    "make it unique, or set replace_all to true"
                )
            new_text = text.replace(self.old_str, self.new_str)
            write_file_atomically(path, new_text.encode("utf-8"))
            return {"ok": True, "path": str(path), "replacements": count}

        return await _guarded(path, work)
