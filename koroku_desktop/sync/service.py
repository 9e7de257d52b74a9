"""SyncService: the app's continuous sync, in a daemon thread (never on the UI thread).

It LISTENs on the hub's channel, so a turn pushed by another device wakes it at once; it also
syncs when this device's log changed (`PRAGMA data_version`, e.g. a turn just finished). A hub
that cannot be reached makes it "offline since …", one that stops answering mid-sync (a
frozen server, a stalled link: every hub call is bounded, sync/deadline.py) "hub not
answering since …"; either way it retries with backoff (1 s doubling to 30 s). Its state
goes to `on_status` from the sync thread (the UI re-posts it).
"""

from __future__ import annotations

import enum
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from koroku_desktop.sync.deadline import answer_within
from koroku_desktop.sync.engine import SyncEngine
from koroku_desktop.sync.errors import HubNotAnswering
from koroku_desktop.sync.hub import HubError, describe_hub_error, login_refused
from koroku_desktop.sync.hub_schema import CHANNEL

if TYPE_CHECKING:  # psycopg is imported where a hub is reached: a start without sync skips it
    import psycopg

log = logging.getLogger(__name__)

POLL_S = 0.25
"""How often the thread looks at the local log between notifications."""
MAX_BACKOFF_S = 30.0


class SyncState(enum.Enum):
    """Where sync stands, for the status bar and settings."""

    OFF = "off"
    SYNCING = "syncing"
    UP_TO_DATE = "up to date"
    OFFLINE = "offline"
    NOT_ANSWERING = "hub not answering"
    ERROR = "error"


@dataclass(frozen=True)
class SyncStatus:
    """The state, since when (offline), a detail (error text) and the last success."""

    state: SyncState
    since: float | None = None
    detail: str = ""
    last_success: float | None = None

    def describe(self) -> str:
        """One line for people: 'Sync: up to date', 'Sync: offline since 14:02'."""
        match self.state:
            case SyncState.OFFLINE | SyncState.NOT_ANSWERING if self.since is not None:
                when = datetime.fromtimestamp(self.since)
                return f"Sync: {self.state.value} since {when:%H:%M}"
            case SyncState.ERROR:
                return f"Sync: error: {self.detail}"
            case _:
                return f"Sync: {self.state.value}"


class SyncService:
    """Continuous sync of one engine (see the module docstring)."""

    def __init__(
        self,
        engine: SyncEngine,
        local_version: Callable[[], int],
        on_status: Callable[[SyncStatus], None] = lambda _s: None,
    ) -> None:
        self.engine = engine
        self.local_version = local_version
        self.on_status = on_status
        self.status = SyncStatus(SyncState.OFF)
        self._stop = threading.Event()
        self._poke = threading.Event()
        self._thread: threading.Thread | None = None
        self._listener: psycopg.Connection[tuple[object, ...]] | None = None

    @property
    def online(self) -> bool:
        """Whether the last attempt reached the hub (the cross-device lock needs it)."""
        return self.status.state in (SyncState.SYNCING, SyncState.UP_TO_DATE)

    def describe(self) -> str:
        """The current state in one line (see `SyncStatus.describe`)."""
        return self.status.describe()

    def online_or_unknown(self) -> bool:
        """False only once the service knows the hub is unreachable (before it ran, a
        front end without the service, e.g. `koroku ask`, tries the hub)."""
        return self.status.state not in (SyncState.OFFLINE, SyncState.NOT_ANSWERING)

    def start(self) -> None:
        """Start the sync thread (once)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="koroku-sync", daemon=True)
            self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the thread and close its connections."""
        self._stop.set()
        self._poke.set()
        if self._thread is not None:
            self._thread.join(timeout)
        self.engine.hub.close()

    def poke(self) -> None:
        """Sync soon (e.g. a turn ended, or a new hub password was stored): also cuts short
        the wait before the next try when the hub could not be reached."""
        self._poke.set()

    def _set(self, status: SyncStatus) -> None:
        self.status = status
        try:
            self.on_status(status)
        except Exception:  # a closed window must not stop sync
            log.debug("sync status listener failed", exc_info=True)

    def _sync(self) -> int:
        """Sync once; the local version from before it (a change made meanwhile, e.g. a turn
        appended during the push, differs from it and brings the next sync)."""
        version = self.local_version()
        last = self.status.last_success
        self._set(SyncStatus(SyncState.SYNCING, last_success=last))
        self.engine.sync_once()
        now = time.time()
        self._set(SyncStatus(SyncState.UP_TO_DATE, last_success=now))
        return version

    def _listen(self) -> psycopg.Connection[tuple[object, ...]]:
        import psycopg

        address = self.engine.hub.address
        conn = psycopg.connect(address.conninfo(), autocommit=True)
        try:
            with answer_within(conn, address.answer_s, "starting to listen for new events"):
                conn.execute(f"LISTEN {CHANNEL}")
        except BaseException:
            conn.close()
            raise
        return conn

    def _close_listener(self) -> None:
        if self._listener is not None:
            self._listener.close()
            self._listener = None

    def _follow(self) -> None:
        """Connected: sync, then again on every notification or local change."""
        self._listener = self._listen()
        seen = self._sync()
        while not self._stop.is_set():
            woken = list(self._listener.notifies(timeout=POLL_S, stop_after=1))
            poked = self._poke.is_set()
            if woken or poked or self.local_version() != seen:
                self._poke.clear()
                seen = self._sync()

    def _unreachable(self, exc: BaseException) -> None:
        """The hub could not be used: offline (since the first failure), or an error when
        it answered but refused the login (a wrong password is not being offline)."""
        refused = login_refused(exc)
        if refused is not None:
            log.warning("sync: %s", refused)
            self._set(SyncStatus(SyncState.ERROR, time.time(), refused, self.status.last_success))
            return
        state = SyncState.NOT_ANSWERING if isinstance(exc, HubNotAnswering) else SyncState.OFFLINE
        # "since" is the first failure of a spell: not answering, then offline, is one spell.
        failing = self.status.state in (SyncState.OFFLINE, SyncState.NOT_ANSWERING)
        since = self.status.since if failing else None
        log.info("sync hub unreachable: %s", exc)  # libpq's own words, for the log
        why = describe_hub_error(exc, self.engine.hub.address.display())
        self._set(SyncStatus(state, since or time.time(), why, self.status.last_success))

    def _run(self) -> None:
        import psycopg

        backoff = 1.0
        while not self._stop.is_set():
            synced_before = self.status.last_success
            try:
                self._follow()
            except (HubError, psycopg.Error, OSError) as exc:  # psycopg: the listener
                self._unreachable(exc)
            except Exception as exc:  # a refused hub (mismatch), a bug: shown, retried
                log.warning("sync failed", exc_info=True)
                self._set(SyncStatus(SyncState.ERROR, time.time(), str(exc)))
            finally:
                self._close_listener()
                self.engine.hub.close()
            self._poke.wait(backoff)  # `stop` and `poke` end the wait early
            self._poke.clear()
            if self._stop.is_set():
                break
            if self.status.last_success != synced_before:  # it worked a while: retry soon
                backoff = 1.0
            else:
                backoff = min(backoff * 2, MAX_BACKOFF_S)
