"""Memory files rebuilt from the log: every change to `memory/dd-mm-yyyy.md` is an event.

The files stay the human-readable view; the `memory_edit` events are the truth, so the
files merge between devices like the rest of the log. The events of one day are folded in
entries order (domain/coverage.py), the same order on every device:

- `append` (a compaction's summary) adds its text at the end. Appends made on two devices
  the same day both survive, one after the other.
- `replace` (a person's edit in the viewer, or a file found changed outside Koroku) sets the
  whole text. It names the text it was edited from (`base_sha`). When that is not the text
  the fold has reached (another device appended meanwhile, unseen by the editor), the
  appends made since that text are kept after the edit; when another edit came meanwhile,
  the edit wins and the other version follows under a visible conflict note, so neither is
  lost and the person can resolve it.

`sync_memory_files` runs on start, after catching up with the log, and after a merge: a file
changed by hand while Koroku was closed (it differs from what Koroku last wrote) is taken
in as a `replace`, a file with no events (data made before this) is taken in once, then
every file is written again from the log (atomically, 0600) where it differs.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import logging
import re
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from koroku_desktop.agent.ports import EventLog, TurnLock
from koroku_desktop.domain.coverage import in_entries_order
from koroku_desktop.domain.events import MemoryEditEvent, StoredEvent
from koroku_desktop.domain.ids import new_id
from koroku_desktop.fsutil import atomic_write
from koroku_desktop.may_block import may_block

log = logging.getLogger(__name__)

MEMORY_FOLDER = "memory"
WRITTEN_FILE = ".written.json"
"""In the memory folder: the SHA-256 of each file as Koroku last wrote it (to tell a hand
edit from a file that is only behind the log)."""
CONFLICT_NOTE = (
    "\n\n<!-- Koroku: this day's memory was also edited elsewhere at the same time; "
    "that version follows. Keep what you want and delete the rest. -->\n\n"
)
_DAY = re.compile(r"^\d{2}-\d{2}-\d{4}$")
PAGE = 2000
_START = MemoryEditEvent(day="", op="append", text="")


def sha(text: str) -> str:
    """The SHA-256 (hex) of a memory text, as `MemoryEditEvent.base_sha` names it."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def memory_texts(edits: Iterable[StoredEvent]) -> dict[str, str]:
    """Each day's memory text, folded from its `memory_edit` events (see the module)."""
    days: dict[str, list[tuple[str, MemoryEditEvent]]] = {}
    for stored in in_entries_order([e for e in edits if isinstance(e.event, MemoryEditEvent)]):
        assert isinstance(stored.event, MemoryEditEvent)
        history = days.setdefault(stored.event.day, [("", _START)])
        history.append((_apply(history, stored.event), stored.event))
    return {day: history[-1][0] for day, history in days.items() if len(history) > 1}


def _apply(history: Sequence[tuple[str, MemoryEditEvent]], edit: MemoryEditEvent) -> str:
    """The day's text after `edit`, given the texts (and edits) so far."""
    current = history[-1][0]
    if edit.op == "append":
        return current + edit.text
    base = sha("") if edit.base_sha is None else edit.base_sha
    if base == sha(current) or edit.text == current:
        return edit.text
    seen = next((i for i in range(len(history) - 1, -1, -1) if sha(history[i][0]) == base), None)
    unseen = [e for _, e in history[seen + 1 :]] if seen is not None else []
    if seen is not None and all(e.op == "append" for e in unseen):
        return edit.text + "".join(e.text for e in unseen)  # keep the appends it did not see
    return edit.text + CONFLICT_NOTE + current


def read_edits(event_log: EventLog, conversation_id: str | None = None) -> list[StoredEvent]:
    """Every `memory_edit` event, page by page (blocking). The memory files are one per day
    for every conversation together, so by default this reads them all."""
    found: list[StoredEvent] = []
    after: int | None = None
    while True:
        page = event_log.entries(
            conversation_id, after_seq=after, limit=PAGE, kinds=("memory_edit",)
        )
        found.extend(e for e in page if isinstance(e, StoredEvent))
        if len(page) < PAGE:
            return found
        after = page[-1].seq


def memory_path(data_dir: Path, day: str) -> Path:
    """The file of `day` (`dd-mm-yyyy`): `<data dir>/memory/dd-mm-yyyy.md`."""
    return data_dir / MEMORY_FOLDER / f"{day}.md"


@dataclass(frozen=True)
class MemorySync:
    """What `sync_memory_files` did: the edits it took in and the files it wrote."""

    taken_in: list[MemoryEditEvent]
    written: list[Path]


def sync_memory_files(event_log: EventLog, conversation_id: str, data_dir: Path) -> MemorySync:
    """Take in files changed outside Koroku (or never recorded), then write every day's file
    from the log where it differs. Blocking: call it in a worker thread.

    The files hold every conversation's edits; what is taken in is recorded in
    `conversation_id` (the one whose front end noticed)."""
    folder = data_dir / MEMORY_FOLDER
    texts = memory_texts(read_edits(event_log))
    written = _written(folder)
    taken: list[MemoryEditEvent] = []
    for path in sorted(folder.glob("*.md")) if folder.is_dir() else []:
        day = path.stem
        if not _DAY.match(day):
            continue
        on_disk = path.read_text(encoding="utf-8", errors="replace")
        known = texts.get(day)
        if known is None:
            taken.append(MemoryEditEvent(day=day, op="replace", text=on_disk, source="import"))
        elif on_disk != known and sha(on_disk) != written.get(day):
            base = written.get(day, sha(known))
            taken.append(
                MemoryEditEvent(
                    day=day, op="replace", text=on_disk, base_sha=base, source="outside"
                )
            )
    if taken:
        event_log.append(conversation_id, taken)
        texts = memory_texts(read_edits(event_log))
        log.info("took %d memory file(s) changed outside Koroku into the log", len(taken))
    return MemorySync(taken, write_memory_files(data_dir, texts))


MEMORY_KEY = "#memory-files"
"""The lease key held while the memory files and the log are brought together: the files
are every conversation's, so a conversation's turn lease does not keep two apart."""
_ONE_HERE = threading.Lock()
"""One sync at a time in this process (its agents may share one lease instance)."""
STOP_WAIT_S = 3.0
"""How long a cancelled sync (the app quitting) lets a sync under way end before leaving it."""


def sync_memory_files_leased(
    event_log: EventLog,
    conversation_id: str,
    data_dir: Path,
    lease: TurnLock | None,
    poll: float = 0.1,
    stop: threading.Event | None = None,
    *,
    wait: bool = True,
) -> MemorySync | None:
    """`sync_memory_files`, one at a time in this process and, under `lease`'s `MEMORY_KEY`,
    across processes: two front ends noticing one outside edit record it once. Blocking.
    None: `stop` was set while it waited for another sync (nothing done; the next does it),
    or, with `wait=False`, another sync runs (nothing done, at once)."""
    stop = stop or threading.Event()
    while not (_ONE_HERE.acquire(timeout=poll) if wait else _ONE_HERE.acquire(blocking=False)):
        if stop.is_set() or not wait:
            return None
    try:
        if lease is None:
            return sync_memory_files(event_log, conversation_id, data_dir)
        turn = new_id()
        while lease.try_acquire(MEMORY_KEY, turn) is not None:
            if not wait or stop.wait(poll):
                return None
        try:
            return sync_memory_files(event_log, conversation_id, data_dir)
        finally:
            lease.release(MEMORY_KEY)
    finally:
        _ONE_HERE.release()


async def sync_memory_files_off_loop(
    event_log: EventLog, conversation_id: str, data_dir: Path, lease: TurnLock | None
) -> MemorySync | None:
    """`sync_memory_files_leased` in a worker thread. Cancelled (the app quits), it stops
    waiting for another process's sync at once, and lets one under way end for at most
    `STOP_WAIT_S`: what is left the next start does (the log holds every edit).

    It first tries without waiting (`asyncio.to_thread`: inline where the loop runs those
    calls on its own thread, cli/one_shot.py); only a wait for another sync goes to a thread
    of its own (`may_block`), so the loop stays free meanwhile (a cancel, a timeout, Ctrl-C
    are served)."""
    stop = threading.Event()
    args = (event_log, conversation_id, data_dir, lease)
    first = asyncio.ensure_future(
        asyncio.to_thread(sync_memory_files_leased, *args, stop=stop, wait=False)
    )
    synced = await _stoppable(first, stop)
    if synced is not None:
        return synced
    waiting = functools.partial(sync_memory_files_leased, *args, stop=stop)
    return await _stoppable(may_block(waiting), stop)


async def _stoppable(
    work: asyncio.Future[MemorySync | None], stop: threading.Event
) -> MemorySync | None:
    """`work`'s result; cancelled, `stop` is set and `work` gets `STOP_WAIT_S` to end."""
    try:
        return await asyncio.shield(work)
    except asyncio.CancelledError:
        stop.set()
        await asyncio.wait([work], timeout=STOP_WAIT_S)
        if not work.done():
            work.add_done_callback(lambda done: done.exception())  # (nobody awaits it)
            log.warning(
                "the memory files' sync did not end within %.0f s; left for the next start",
                STOP_WAIT_S,
            )
        elif work.exception() is None and work.result() is None:
            log.warning(
                "the memory files were not synced (another process's sync holds them);"
                " left for the next start"
            )
        raise


def write_memory_files(data_dir: Path, texts: dict[str, str]) -> list[Path]:
    """Write each day's text to its file where it differs (atomically, 0600); remember what
    was written. Returns the files written."""
    folder = data_dir / MEMORY_FOLDER
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    folder.chmod(0o700)
    written = _written(folder)
    before = dict(written)
    changed: list[Path] = []
    for day, text in sorted(texts.items()):
        path = memory_path(data_dir, day)
        try:
            on_disk: str | None = path.read_text(encoding="utf-8")
        except (FileNotFoundError, UnicodeDecodeError):
            on_disk = None
        if on_disk != text:
            atomic_write(path, text)
            path.chmod(0o600)
            changed.append(path)
        written[day] = sha(text)
    if written != before:  # (unchanged: not rewritten, so a start with no edit syncs no file)
        atomic_write(folder / WRITTEN_FILE, json.dumps(written, sort_keys=True, indent=1))
        (folder / WRITTEN_FILE).chmod(0o600)
    return changed


def _written(folder: Path) -> dict[str, str]:
    try:
        data = json.loads((folder / WRITTEN_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def record_edit(
    event_log: EventLog, conversation_id: str, data_dir: Path, day: str, text: str, base: str
) -> str:
    """Record a person's edit of `day` (edited from `base`), rebuild the files and return
    the day's text as it now stands (with appends it did not see kept). Blocking."""
    edit = MemoryEditEvent(day=day, op="replace", text=text, base_sha=sha(base), source="person")
    event_log.append(conversation_id, [edit])
    texts = memory_texts(read_edits(event_log))
    write_memory_files(data_dir, texts)
    return texts.get(day, text)


async def write_memory(
    event_log: EventLog, conversation_id: str, data_dir: Path, lease: TurnLock | None = None
) -> None:
    """After catching up with memory edits made elsewhere: write the files from the log, off
    the loop (`sync_memory_files_leased`). A failure (a read-only disk) is only logged; the
    log keeps the edits."""
    try:
        await sync_memory_files_off_loop(event_log, conversation_id, data_dir, lease)
    except OSError as exc:
        log.warning("could not write the memory files: %s", exc)
