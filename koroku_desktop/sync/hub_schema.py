"""The hub's schema, created and migrated by Koroku: numbered steps in `koroku.migrations`.

Everything lives in the schema `koroku` of the user's database. `events` holds every pushed
event keyed by its global id, with `hub_seq` (an identity column) as the one order all
devices project; `blobs` holds attachments by SHA-256; `devices` says who synced when;
`turn_holders` says who holds a conversation's cross-device turn lock (sync/hub_lease.py).
Append-only list, like the local store's: never edit a step that has shipped.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # psycopg is imported where a hub is reached: a start without sync skips it
    import psycopg


CHANNEL = "koroku_events"
"""The NOTIFY channel a push announces new events on (payload: the new last hub_seq)."""
PUSH_LOCK = 0x6B6F726F6B75
"""The transaction-level advisory lock key that serialises pushes (b'koroku')."""

_M001 = (
    "CREATE TABLE IF NOT EXISTS koroku.hub (id text PRIMARY KEY, created_at timestamptz"
    " NOT NULL DEFAULT now())",
    "INSERT INTO koroku.hub (id) SELECT gen_random_uuid()::text"
    " WHERE NOT EXISTS (SELECT 1 FROM koroku.hub)",
    """CREATE TABLE IF NOT EXISTS koroku.events (
        hub_seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        event_id text NOT NULL UNIQUE,
        conversation_id text NOT NULL,
        turn_id text NOT NULL,
        writer text NOT NULL,
        device text NOT NULL,
        kind text NOT NULL,
        schema_version integer NOT NULL,
        payload text NOT NULL,
        created_at double precision NOT NULL,
        pushed_at timestamptz NOT NULL DEFAULT now()
    )""",
    """CREATE TABLE IF NOT EXISTS koroku.blobs (
        sha256 text PRIMARY KEY CHECK (sha256 ~ '^[0-9a-f]{64}$'),
        size bigint NOT NULL,
        data bytea NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS koroku.devices (
        device text PRIMARY KEY,
        name text NOT NULL,
        last_sync timestamptz NOT NULL DEFAULT now()
    )""",
)

_M002 = (
    # One row per advisory lock key, written by the holder on the connection that holds the
    # lock; believed only while that backend (`backend_pid`) still holds it (pg_locks).
    """CREATE TABLE IF NOT EXISTS koroku.turn_holders (
        lock_key bigint PRIMARY KEY,
        conversation_id text NOT NULL,
        owner text NOT NULL,
        front_end text NOT NULL,
        host text NOT NULL,
        pid integer NOT NULL,
        turn_id text NOT NULL,
        backend_pid integer NOT NULL,
        since timestamptz NOT NULL DEFAULT now()
    )""",
)

MIGRATIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("h001_events_blobs_devices", _M001),
    ("h002_turn_holders", _M002),
)


def migrate(conn: psycopg.Connection[tuple[object, ...]]) -> list[str]:
    """Apply the hub steps not applied yet, each in its own transaction; return their names.

    Two devices migrating at once take turns on an advisory lock, and each step re-checks.
    """
    ran: list[str] = []
    with conn.transaction():
        conn.execute("CREATE SCHEMA IF NOT EXISTS koroku")
    for name, statements in MIGRATIONS:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (PUSH_LOCK,))
            conn.execute(
                "CREATE TABLE IF NOT EXISTS koroku.migrations (name text PRIMARY KEY,"
                " applied_at timestamptz NOT NULL DEFAULT now())"
            )
            done = conn.execute("SELECT 1 FROM koroku.migrations WHERE name = %s", (name,))
            if done.fetchone():
                continue
            for sql in statements:
                conn.execute(sql)  # literal SQL, no user input
            conn.execute("INSERT INTO koroku.migrations (name) VALUES (%s)", (name,))
        ran.append(name)
    return ran
