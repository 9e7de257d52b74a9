"""Reading another assistant's export from disk: `conversations.json` alone, beside the
export's other files, or inside the export zip; what kind of export it is; its chats one at
a time (incrementally, with ijson: a 100 MB export is never loaded whole).
"""

from __future__ import annotations

import math
import mimetypes
import os
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import IO, Any

import ijson

from koroku_desktop.maintenance.foreign_import import ForeignFormatError, Source

CONVERSATIONS = "conversations.json"
_PROBE_EVENTS = 20_000
_MAX_FILE_BYTES = 512 * 1024 * 1024
_MAX_TIMESTAMP = 253_402_300_799.0


class ExportFiles:
    """The files an export holds besides `conversations.json` (attachments), found by the
    id their name starts with: zip members, or the files in the folder beside it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._zip: zipfile.ZipFile | None = None
        self._names: dict[str, str] = {}
        if zipfile.is_zipfile(path):
            self._zip = zipfile.ZipFile(path)
            for info in self._zip.infolist():
                if not info.is_dir() and not info.filename.endswith(".json"):
                    self._names.setdefault(info.filename.rsplit("/", 1)[-1], info.filename)
        else:
            top = str(path.parent)
            for root, dirs, names in os.walk(top):
                if root != top:
                    dirs.clear()  # the export's folder and its direct subfolders only
                for name in names:
                    if not name.endswith((".json", ".html", ".db")):
                        self._names.setdefault(name, os.path.join(root, name))

    def close(self) -> None:
        """Close the zip, if it is one."""
        if self._zip is not None:
            self._zip.close()

    def find(self, file_id: str) -> tuple[str, bytes] | None:
        """The name and bytes of the file whose name starts with `file_id` (None: not held)."""
        if not file_id:
            return None
        name = next((n for n in self._names if n.startswith(file_id)), None)
        if name is None:
            return None
        where = self._names[name]
        try:
            if self._zip is not None:
                info = self._zip.getinfo(where)
                if info.file_size > _MAX_FILE_BYTES:
                    return None
                return name, self._zip.read(where)
            if os.path.getsize(where) > _MAX_FILE_BYTES:
                return None
            return name, Path(where).read_bytes()
        except (OSError, KeyError, zipfile.BadZipFile):
            return None


def mime_of(name: str, given: object = None) -> str:
    """The export's mime type for a file, else one guessed from its name."""
    if isinstance(given, str) and "/" in given:
        return given
    return mimetypes.guess_type(name)[0] or "application/octet-stream"


@contextmanager
def conversations_stream(path: Path) -> Iterator[IO[bytes]]:
    """The bytes of `conversations.json`: the file itself, or the member of the export zip.
    Raises `ForeignFormatError` when there is none."""
    try:
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as archive:
                member = next(
                    (n for n in archive.namelist() if n.rsplit("/", 1)[-1] == CONVERSATIONS),
                    None,
                )
                if member is None:
                    raise ForeignFormatError(f"{path.name} is a zip without {CONVERSATIONS}")
                with archive.open(member) as data:
                    yield data
            return
        with path.open("rb") as data:
            yield data
    except (OSError, zipfile.BadZipFile, zipfile.LargeZipFile) as exc:
        raise ForeignFormatError(f"cannot read {path.name}: {exc}") from None


def detect(path: Path) -> Source | None:
    """Whether `path` is ChatGPT's or Claude's export (from its first chat's keys), or
    neither. Reads only the start of the file; never raises."""
    try:
        with conversations_stream(path) as data:
            events = ijson.parse(data)
            first = next(events, None)
            if first is None or first[:2] != ("", "start_array"):
                return None
            for n, (prefix, event, value) in enumerate(events):
                if prefix == "item" and event == "map_key":
                    if value in ("mapping", "current_node"):
                        return "chatgpt"
                    if value == "chat_messages":
                        return "claude"
                if (prefix, event) == ("item", "end_map") or n > _PROBE_EVENTS:
                    return None
    except (ForeignFormatError, ijson.JSONError, ValueError, OSError, EOFError):
        return None
    return None


def chats_of(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Each chat object of the export, numbered from 0, read incrementally. Raises
    `ForeignFormatError` (with where) for a damaged file or one that is not a list of chats."""
    n = 0
    with conversations_stream(path) as data:
        try:
            for chat in ijson.items(data, "item", use_float=True):
                if not isinstance(chat, dict):
                    raise ForeignFormatError(f"conversation {n} of {path.name} is not an object")
                yield n, chat
                n += 1
        except (ijson.JSONError, ValueError, EOFError, zipfile.BadZipFile) as exc:
            raise ForeignFormatError(
                f"{path.name} is damaged after {n} conversation(s): {_short(exc)}"
            ) from None


def when(value: object) -> float | None:
    """A time as seconds since 1970: a number, or an ISO 8601 text (Claude's); None when it
    is missing or not a time."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str) and value:
        try:
            number = datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return None
    else:
        return None
    return number if math.isfinite(number) and 0 <= number <= _MAX_TIMESTAMP else None


def text_of(value: object) -> str:
    """A value that should be text, as text ('' for anything else); lone surrogates, which no
    database can hold, are replaced."""
    if not isinstance(value, str):
        return ""
    return value.encode("utf-8", "replace").decode("utf-8")


def _short(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 120 else text[:119] + "…"
