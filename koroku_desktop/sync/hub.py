"""PostgresHub: one connection to the hub and the few statements sync needs.

Pushes are serialised by a transaction-level advisory lock and refuse to run when the hub
holds events this device has not pulled (`HubMovedError`), so a device's pushed events come
after everything it has seen: the hub's order never reorders what a device already showed.
"""

from __future__ import annotations

import contextlib
import functools
import logging
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Concatenate, ParamSpec, TypeVar

from koroku_desktop.domain.errors import SyncError
from koroku_desktop.sync.config import HubAddress
from koroku_desktop.sync.deadline import answer_within, close_quietly
from koroku_desktop.sync.errors import HubError as HubError
from koroku_desktop.sync.errors import HubNotAnswering
from koroku_desktop.sync.hub_schema import CHANNEL, PUSH_LOCK, migrate

if TYPE_CHECKING:  # psycopg is imported where a hub is reached: a start without sync skips it
    import psycopg

    Conn = psycopg.Connection[tuple[object, ...]]

log = logging.getLogger(__name__)

P = ParamSpec("P")
R = TypeVar("R")


def hub_call(
    method: Callable[Concatenate[PostgresHub, P], R],
) -> Callable[Concatenate[PostgresHub, P], R]:
    """Wrap psycopg's errors in `HubError` at the hub's boundary."""

    @functools.wraps(method)
    def call(hub: PostgresHub, /, *args: P.args, **kwargs: P.kwargs) -> R:
        import psycopg

        try:
            return method(hub, *args, **kwargs)
        except psycopg.Error as exc:
            raise HubError(str(exc).strip() or type(exc).__name__) from exc

    return call


SLOW_LINK_BYTES_S = 100_000
"""The slowest uplink a hub call's bound allows for (bytes per second, about 1 Mbit/s)."""

LOGIN_REFUSALS = ("authentication failed", "no password supplied", "pg_hba.conf")
"""What libpq says when the server answered but refused this login (it gives no SQLSTATE)."""


def login_refused(exc: BaseException) -> str | None:
    """What to tell a person when the hub refused the login (a wrong or missing password, a
    user the hub does not let in); None when the error is anything else (e.g. unreachable)."""
    text = str(exc)
    if not any(sign in text for sign in LOGIN_REFUSALS):
        return None
    reason = text.rsplit("failed: ", 1)[-1].strip().removeprefix("FATAL:").strip()
    return (
        f"the hub refused the login ({reason}): store the hub password in Settings or with"
        " `koroku sync --set-password`"
    )


def describe_hub_error(exc: BaseException, hub: str) -> str:
    """One line in Koroku's words for a failed hub call (libpq's several lines of detail are
    for the log, shown with `-v`)."""
    if isinstance(exc, HubNotAnswering):
        return str(exc)
    refused = login_refused(exc)
    if refused is not None:
        return refused
    text = str(exc).strip()
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if "Connection refused" in text or "could not connect" in text:
        return f"cannot reach the hub {hub}: nothing listens there (is the server running?)"
    if "timeout expired" in text:
        return f"cannot reach the hub {hub}: it did not answer the connection in time"
    if "could not translate host name" in text:
        return f"cannot reach the hub {hub}: its host name is unknown"
    first = lines[-1] if lines else type(exc).__name__
    first = first.removeprefix("FATAL:").removeprefix("ERROR:").strip()
    return f"the hub {hub} failed: {first}"


class HubMovedError(SyncError, RuntimeError):
    """The hub got events this device has not pulled yet: pull, then push again."""


class HubMismatchError(SyncError, RuntimeError):
    """This data dir synced with another hub before; mixing two hubs' orders is refused."""


@dataclass(frozen=True)
class HubEvent:
    """An event as the hub stores it (payload: the event's JSON as stored locally)."""

    event_id: str
    conversation_id: str
    turn_id: str
    writer: str
    kind: str
    schema_version: int
    payload: str
    created_at: float
    hub_seq: int = 0


_COLUMNS = "event_id, conversation_id, turn_id, writer, kind, schema_version, payload, created_at"


class PostgresHub:
    """The hub database (see hub_schema.py); blocking calls, used from a sync thread."""

    def __init__(self, address: HubAddress, device: str) -> None:
        self.address = address
        self.device = device
        self._conn: Conn | None = None
        self.migrated: list[str] = []

    @hub_call
    def connect(self) -> Conn:
        """The open connection (made, and the schema migrated, on first use)."""
        import psycopg

        if self._conn is None or self._conn.closed or self._conn.broken:
            self.close()
            conn = psycopg.connect(self.address.conninfo(), autocommit=True)
            self._conn = conn
            with self._answer("setting up the hub's tables", conn):
                self.migrated = migrate(conn)
        return self._conn

    @contextlib.contextmanager
    def _answer(
        self, waiting_for: str, conn: Conn | None = None, sending: int = 0
    ) -> Iterator[Conn]:
        """The connection, for calls the hub must answer within the address's bound
        (sync/deadline.py), plus a second per `SLOW_LINK_BYTES_S` bytes `sending` (a big
        attachment on a slow uplink is not a silent hub); a cut or silent hub raises
        `HubNotAnswering` and the connection is dropped (the next call reconnects)."""
        conn = conn or self.connect()
        bound = self.address.answer_s + sending / SLOW_LINK_BYTES_S
        try:
            with answer_within(conn, bound, waiting_for):
                yield conn
        except HubNotAnswering:
            self.close()
            raise

    def close(self) -> None:
        """Close the connection (a later call reconnects)."""
        close_quietly(self._conn)
        self._conn = None

    @hub_call
    def hub_id(self) -> str:
        """The hub's identity, made when its schema was created."""
        with self._answer("reading the hub's identity") as conn:
            row = conn.execute("SELECT id FROM koroku.hub").fetchone()
        return str(row[0]) if row else ""

    @hub_call
    def last_seq(self) -> int:
        """The highest hub position (0: empty hub)."""
        with self._answer("reading the hub's position") as conn:
            found = conn.execute("SELECT COALESCE(MAX(hub_seq), 0) FROM koroku.events").fetchone()
        return int(str(found[0])) if found else 0

    @hub_call
    def fetch_after(self, position: int, limit: int) -> list[HubEvent]:
        """Up to `limit` events after `position`, in hub order."""
        with self._answer(f"pulling events after hub position {position}") as conn:
            found = conn.execute(
                f"SELECT {_COLUMNS}, hub_seq FROM koroku.events WHERE hub_seq > %s"
                " ORDER BY hub_seq LIMIT %s",
                (position, limit),
            ).fetchall()
        return [
            HubEvent(
                str(r[0]),
                str(r[1]),
                str(r[2]),
                str(r[3]),
                str(r[4]),
                int(str(r[5])),
                str(r[6]),
                float(str(r[7])),
                int(str(r[8])),
            )
            for r in found
        ]

    @hub_call
    def push(self, pulled: int, events: Sequence[HubEvent]) -> list[tuple[str, int]]:
        """Append whole turns in one transaction, after `pulled`; return (event id, hub seq).

        Raises `HubMovedError` (nothing written) when the hub is past `pulled`, and
        `HubNotAnswering` (nothing written, or, when only the answer to the COMMIT was lost,
        everything: the next pull brings those events back with their positions).
        """
        import psycopg

        with self._answer("waiting for the push lock (another device may be pushing)") as conn:
            conn.execute("BEGIN")
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (PUSH_LOCK,))
        try:
            size = sum(len(e.payload) for e in events)
            with self._answer(f"pushing {len(events)} events", conn, size):
                rows = self._insert(conn, pulled, events)
            with self._answer(f"committing {len(events)} pushed events", conn):
                conn.execute("COMMIT")
        except BaseException:
            if not (conn.closed or conn.broken):
                with (
                    contextlib.suppress(psycopg.Error, HubError),
                    self._answer("rolling back", conn),
                ):
                    conn.execute("ROLLBACK")
            raise
        return [(str(r[0]), int(str(r[1]))) for r in rows]

    def _insert(
        self, conn: Conn, pulled: int, events: Sequence[HubEvent]
    ) -> list[tuple[object, ...]]:
        """The push's statements inside its transaction (see `push`)."""
        found = conn.execute("SELECT COALESCE(MAX(hub_seq), 0) FROM koroku.events").fetchone()
        if found is None or int(str(found[0])) != pulled:
            raise HubMovedError(f"the hub is at {found}, this device pulled up to {pulled}")
        with conn.cursor() as cur:
            cur.executemany(
                f"INSERT INTO koroku.events ({_COLUMNS}, device)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)"
                " ON CONFLICT (event_id) DO NOTHING",
                [
                    (
                        e.event_id,
                        e.conversation_id,
                        e.turn_id,
                        e.writer,
                        e.kind,
                        e.schema_version,
                        e.payload,
                        e.created_at,
                        self.device,
                    )
                    for e in events
                ],
            )
        rows = conn.execute(
            "SELECT event_id, hub_seq FROM koroku.events WHERE event_id = ANY(%s)",
            ([e.event_id for e in events],),
        ).fetchall()
        newest = max((int(str(r[1])) for r in rows), default=pulled)
        conn.execute("SELECT pg_notify(%s, %s)", (CHANNEL, str(newest)))
        return rows

    @hub_call
    def seen_device(self, name: str) -> None:
        """Note that this device synced now (the `devices` table, for `--status`)."""
        with self._answer("noting this device on the hub") as conn:
            conn.execute(
                "INSERT INTO koroku.devices (device, name) VALUES (%s, %s) ON CONFLICT (device)"
                " DO UPDATE SET name = excluded.name, last_sync = now()",
                (self.device, name),
            )

    # -- blobs -----------------------------------------------------------------------------

    @hub_call
    def missing_blobs(self, shas: Sequence[str]) -> set[str]:
        """Which of these blobs the hub lacks."""
        with self._answer("asking which attachments the hub lacks") as conn:
            rows = conn.execute(
                "SELECT sha256 FROM koroku.blobs WHERE sha256 = ANY(%s)", (list(shas),)
            ).fetchall()
        return set(shas) - {str(r[0]) for r in rows}

    @hub_call
    def put_blob(self, sha256: str, data: bytes) -> None:
        """Store a blob (a no-op when the hub has it)."""
        with self._answer(f"pushing an attachment of {len(data):,} bytes", None, len(data)) as conn:
            conn.execute(
                "INSERT INTO koroku.blobs (sha256, size, data) VALUES (%s, %s, %s)"
                " ON CONFLICT (sha256) DO NOTHING",
                (sha256, len(data), data),
            )

    @hub_call
    def fetch_blob(self, sha256: str) -> bytes | None:
        """The blob's bytes, or None when the hub does not have it (the `BlobSource`)."""
        with self._answer("fetching an attachment", None, 20_000_000) as conn:  # up to 20 MB
            row = conn.execute(
                "SELECT data FROM koroku.blobs WHERE sha256 = %s", (sha256,)
            ).fetchone()
        data = row[0] if row else None
        return bytes(data) if isinstance(data, bytes | memoryview) else None
