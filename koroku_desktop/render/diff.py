"""The change a write_file/edit_file call would make, as a unified diff: shown by the
desktop's approval card and the terminal's approval prompt alike."""

from __future__ import annotations

from pathlib import Path
from typing import Any

MAX_BYTES = 2_000_000
MAX_LINES = 400


def resolve(path: str, workspace: Path) -> Path:
    """A tool path as the tools resolve it: `~` expanded, relative to the workspace."""
    p = Path(path).expanduser()
    return p if p.is_absolute() else workspace / p


def _current(path: Path) -> tuple[str | None, str]:
    """The file's text, or None with a note when it is missing, binary or huge."""
    if not path.exists():
        return None, "(new file)"
    try:
        if path.stat().st_size > MAX_BYTES:
            return None, "(file too large to preview)"
        return path.read_text(encoding="utf-8"), ""
    except (OSError, UnicodeDecodeError) as exc:
        return None, f"(cannot read the current file: {type(exc).__name__})"


def file_diff(tool: str, args: dict[str, Any], workspace: Path) -> str | None:
    """A unified diff for write_file/edit_file calls, else None. Reads the file (off-loop)."""
    if tool not in ("write_file", "edit_file") or not isinstance(args.get("path"), str):
        return None
    path = resolve(args["path"], workspace)
    old, note = _current(path)
    if tool == "write_file":
        new = str(args.get("content", ""))
    else:
        old_str, new_str = str(args.get("old_str", "")), str(args.get("new_str", ""))
        if old is None:
            return f"{note}\n--- old_str\n{old_str}\n+++ new_str\n{new_str}"
        if old_str not in old:
            return f"(old_str is not in {path}; the edit will fail)"
        count = -1 if args.get("replace_all") else 1
        new = old.replace(old_str, new_str, count)
    import difflib  # here: `koroku ask` starts without it (only an approval shows a diff)

    lines = list(
        difflib.unified_diff(
            (old or "").splitlines(keepends=True),
            new.splitlines(keepends=True),
            fromfile=f"{args['path']} {note}".strip(),
            tofile=str(args["path"]),
        )
    )
    if not lines:
        return "(no change)"
    if len(lines) > MAX_LINES:
        lines = [*lines[:MAX_LINES], f"\n… {len(lines) - MAX_LINES} more diff lines\n"]
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)
