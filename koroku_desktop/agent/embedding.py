"""BackgroundEmbedder: embeds the log in batches, in the background, catching up after outages.

It never runs on a turn's path: it is kicked after each turn (and at start-up), reads and
writes the database in worker threads, and awaits the embedding API on the event loop like
any other I/O. When the API fails (no network, 5xx, quota) it stops, keeps what it has, and
tries again `retry_after_s` later or at the next kick; since progress is one seq per model,
whatever was missed — including logs written before embeddings existed — is picked up then.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, TypeVar

from koroku_desktop.agent.ports import Embedder, MemoryVectorStore, RecallStore
from koroku_desktop.domain.model_io import ModelError

log = logging.getLogger(__name__)
T = TypeVar("T")

BATCH_EVENTS = 64
SETTLE_S = 1.0
"""How long a front end about to exit embeds what it wrote (the rest waits for later)."""
SETTLE_INDEX = 5_000
"""Events a front end about to exit adds to the keyword leg's index at most."""
SEARCH_CATCH_UP_S = 2.0
SEARCH_BATCHES = 2
"""The catch-up before a search: at most this many batches, started within SEARCH_CATCH_UP_S
(and cut off at twice that, for a service that hangs)."""
MEMORY_BATCH = 64
"""Memory-file chunks per embedding request (a file's chunks may span requests)."""


def check_vectors(vectors: list[list[float]], count: int, dims: int, model: str) -> None:
    """Refuse what the service sent unless it is `count` vectors of `dims` values (nothing
    of a wrong answer is stored: embedding pauses with the reason, as for an outage)."""
    if len(vectors) != count:
        raise ModelError("unknown", f"the embedding service returned {len(vectors)} of {count}")
    wrong = {len(v) for v in vectors} - {dims}
    if wrong:
        sizes = ", ".join(str(n) for n in sorted(wrong))
        raise ModelError(
            "unknown",
            f"the embedding service returned vectors of {sizes} dimensions, not {dims} ({model})",
        )


class EmbeddingStopped(RuntimeError):
    """A store call after `BackgroundEmbedder.cancel` (the log is closing)."""


@dataclass(eq=False)
class BackgroundEmbedder:
    """Keeps the log's vectors up to date with `embedder`, one batch at a time."""

    store: RecallStore
    embedder: Embedder
    _: KW_ONLY
    batch_events: int = BATCH_EVENTS
    retry_after_s: float = 60.0
    memory: MemoryVectorStore | None = None
    """The memory files' vectors: re-embedded after the events whenever a file changed."""
    last_error: str | None = field(init=False, default=None)
    embedded_events: int = field(init=False, default=0)
    """Events embedded by this process (for progress and the benchmark)."""
    _task: asyncio.Task[int] | None = field(init=False, default=None)
    _retry: asyncio.TimerHandle | None = field(init=False, default=None)
    _store_lock: threading.Lock = field(init=False, default_factory=threading.Lock)
    """Held by a worker thread while it is inside the store, so `cancel` can wait it out."""
    _closed: bool = field(init=False, default=False)
    _again: bool = field(init=False, default=False)
    """Kicked while a catch-up ran: it goes round once more."""

    @property
    def running(self) -> bool:
        """True while a catch-up runs."""
        return self._task is not None and not self._task.done()

    @property
    def paused(self) -> bool:
        """True while a failure's retry is scheduled (the service is taken to be down)."""
        retry = self._retry
        if retry is None or retry.cancelled():
            return False
        return retry.when() > asyncio.get_running_loop().time()

    def kick(self) -> None:
        """Start catching up in the background (call on the event loop). While a catch-up
        runs, it goes round once more when done: it may have read the pending events before
        what this kick is about was written (an import, another process's turn)."""
        if self.running:
            self._again = True
            return
        self._task = asyncio.ensure_future(self._background())

    async def _background(self) -> int:
        """`catch_up` as a background task (again while kicked meanwhile and the service
        answers): any failure is logged, never raised."""
        done = 0
        try:
            while True:
                self._again = False
                done += await self.catch_up()
                if not self._again or self.paused:
                    return done
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 — a closed or damaged store must not surface as a crash
            log.warning("background embedding stopped: %s", exc)
            self.last_error = str(exc)
            return 0

    def cancel(self) -> None:
        """Stop for good before the store closes (sync). Waits for a store call running in a
        worker thread to end; what was stored stays, the rest waits for the next start."""
        if self._retry is not None:
            self._retry.cancel()
        if self._task is not None:
            self._task.cancel()
        with self._store_lock:
            self._closed = True

    async def catch_up(self, max_batches: int | None = None, within_s: float | None = None) -> int:
        """Embed pending events until none is left (or the API fails); how many were done.

        `max_batches` / `within_s`: stop after that many batches, or start no batch once that
        many seconds have passed (the rest is left for later)."""
        done = 0
        batches = 0
        started = time.monotonic()
        while max_batches is None or batches < max_batches:
            if within_s is not None and batches and time.monotonic() - started >= within_s:
                return done
            model, dims = self.embedder.model, self.embedder.dimensions
            batch = await asyncio.to_thread(
                self._in_store, self.store.pending, model, dims, self.batch_events
            )
            if batch.events == 0:
                self.last_error = None
                break
            try:
                vectors = await self.embedder.embed_documents([c.text for c in batch.chunks])
                check_vectors(vectors, len(batch.chunks), dims, model)
            except ModelError as exc:
                self._failed(exc)
                break
            await asyncio.to_thread(self._in_store, self.store.store, model, dims, batch, vectors)
            done += batch.events
            batches += 1
            self.embedded_events += batch.events
        else:
            return done  # stopped at max_batches: the memory files wait for the next round
        if self.last_error is None:
            await self._memory_catch_up()
        return done

    async def _memory_catch_up(self) -> None:
        """Embed the memory files that are new or changed (by file and content hash)."""
        if self.memory is None:
            return
        model, dims = self.embedder.model, self.embedder.dimensions
        pending = await asyncio.to_thread(self._in_store, self.memory.pending, model, dims)
        for start in range(0, len(pending), MEMORY_BATCH):
            piece = pending[start : start + MEMORY_BATCH]
            try:
                vectors = await self.embedder.embed_documents([c.text for c in piece])
                check_vectors(vectors, len(piece), dims, model)
            except ModelError as exc:
                self._failed(exc)
                return
            await asyncio.to_thread(self._in_store, self.memory.store, model, dims, piece, vectors)

    async def settle(self, timeout_s: float = SETTLE_S) -> int:
        """Embed what is pending before the process exits, for about `timeout_s` (a front end
        that wrote events calls it last); the rest is picked up by the next process. Never
        raises: an outage or a slow service only leaves more for later."""
        if self._closed:
            return 0
        started = time.monotonic()
        done = await self._join_running(timeout_s)
        left = timeout_s - (time.monotonic() - started)
        if left > 0 and self.last_error is None:
            done += await self._bounded(None, left)
        if not self.store.read_only:  # the keyword leg's index, for the next search
            with contextlib.suppress(Exception):
                await asyncio.to_thread(self._in_store, self.store.catch_up_keywords, SETTLE_INDEX)
        return done

    async def before_search(self, timeout_s: float = SEARCH_CATCH_UP_S) -> int:
        """Catch up a bounded batch before a search by meaning, a surfacing or a `recall`, so
        what another process wrote (and could not embed) is found. Skipped while paused by a
        failure (an outage costs a search no extra wait) and on a read-only log."""
        if self._closed or self.paused:
            return 0
        if self.running:
            return await self._join_running(timeout_s)
        return await self._bounded(SEARCH_BATCHES, timeout_s)

    async def _join_running(self, timeout_s: float) -> int:
        """Wait (up to `timeout_s`) for a catch-up already running; what it embedded."""
        task = self._task
        if task is None or task.done():
            return 0
        try:
            return await asyncio.wait_for(asyncio.shield(task), timeout_s)
        except TimeoutError:
            return 0

    async def _bounded(self, max_batches: int | None, timeout_s: float) -> int:
        if self.store.read_only:
            return 0
        connect = getattr(self.embedder, "connect", None)
        if connect is not None:  # the SDK's import and client are not the service's time
            try:
                connect()
            except ModelError:
                return 0
        try:
            return await asyncio.wait_for(
                self.catch_up(max_batches=max_batches, within_s=timeout_s), timeout_s * 2
            )
        except TimeoutError:  # a slow service: what was stored stays
            return 0
        except EmbeddingStopped:
            return 0
        except Exception as exc:  # noqa: BLE001 — a damaged store must not fail a search or an exit
            log.warning("embedding stopped: %s", exc)
            self.last_error = str(exc)
            return 0

    def _in_store(self, call: Callable[..., T], *args: Any) -> T:
        """Run a store call in this worker thread, unless the store is being closed."""
        with self._store_lock:
            if self._closed:
                raise EmbeddingStopped("the log is closing")
            return call(*args)

    def _failed(self, exc: ModelError) -> None:
        if self.last_error is None:
            log.warning("embedding paused (will retry): %s", exc)
        self.last_error = f"{exc} (at {time.strftime('%H:%M:%S')})"
        if self._retry is not None:
            self._retry.cancel()
        self._retry = asyncio.get_running_loop().call_later(self.retry_after_s, self.kick)

    async def stop(self) -> None:
        """Cancel the pending retry and any running catch-up."""
        if self._retry is not None:
            self._retry.cancel()
        if self._task is not None and not self._task.done():
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
