"""A bound on every wait for the hub: a hub that stops answering ends the wait, never hangs.

TCP keepalives and `tcp_user_timeout` (sync/config.py) notice a dead network, and the
server-side `statement_timeout` a slow statement; neither notices a hub that is alive but
silent (a frozen server, a backend stopped by SIGSTOP, a link that drops the answers while
acknowledging the bytes). So each hub call runs under `answer_within`: a watchdog that, when
the hub has not answered in time, shuts the connection's socket down. libpq's blocking wait
then returns at once with a lost connection, which becomes `HubNotAnswering` naming what
the call was waiting for. The hub rolls back whatever the cut transaction had not committed.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING

from koroku_desktop.sync.errors import HubNotAnswering

if TYPE_CHECKING:  # psycopg is imported where a hub is reached: a start without sync skips it
    import psycopg

ANSWER_TIMEOUT_ENV = "KOROKU_SYNC_TIMEOUT"
"""Seconds a hub may stay silent before a sync gives up (default `ANSWER_TIMEOUT_S`)."""
ANSWER_TIMEOUT_S = 30.0


def answer_timeout() -> float:
    """The configured bound (`KOROKU_SYNC_TIMEOUT`, seconds), or the default; a value that
    is not a positive number is refused with `ValueError` naming the variable."""
    raw = os.environ.get(ANSWER_TIMEOUT_ENV, "").strip()
    if not raw:
        return ANSWER_TIMEOUT_S
    try:
        value = float(raw)
    except ValueError:
        value = 0.0
    if not 0 < value < 86_400:
        raise ValueError(f"{ANSWER_TIMEOUT_ENV} must be a number of seconds, not {raw!r}")
    return value


def _shut(conn: psycopg.Connection[tuple[object, ...]]) -> None:
    """Shut the connection's socket down (both ways) from any thread; its owner's wait ends."""
    import psycopg

    with contextlib.suppress(OSError, ValueError, psycopg.Error):
        fd = conn.fileno()
        dup = socket.socket(fileno=os.dup(fd))
        try:
            dup.shutdown(socket.SHUT_RDWR)
        finally:
            dup.close()


def close_quietly(conn: psycopg.Connection[tuple[object, ...]] | None) -> None:
    """Close `conn` (None: nothing to close) whatever state it is in: a cut, broken or
    already closed connection closes without an error (psycopg is imported only then)."""
    if conn is None:
        return
    import psycopg

    with contextlib.suppress(psycopg.Error, OSError):
        conn.close()


@contextlib.contextmanager
def answer_within(
    conn: psycopg.Connection[tuple[object, ...]], seconds: float, waiting_for: str
) -> Iterator[None]:
    """Run the block's hub calls on `conn`; if the hub stays silent for `seconds`, cut the
    connection and raise `HubNotAnswering(waiting_for)`. A connection that broke on its own
    (cut, reset) raises it too, without a time. Other hub errors pass through."""
    import psycopg

    fired = threading.Event()

    def expire() -> None:
        fired.set()
        _shut(conn)

    timer = threading.Timer(seconds, expire)
    timer.daemon = True
    timer.start()
    try:
        yield
    except psycopg.OperationalError as exc:
        if fired.is_set():
            raise HubNotAnswering(waiting_for, f"did not answer for {seconds:.0f} s") from exc
        if isinstance(exc, psycopg.errors.QueryCanceled):  # its statement_timeout
            raise HubNotAnswering(waiting_for, "gave up (statement timeout)") from exc
        if conn.closed or conn.broken:
            raise HubNotAnswering(waiting_for, "connection was lost") from exc
        raise
    finally:
        timer.cancel()
    if fired.is_set():  # answered at the last moment, after the socket was shut: unusable
        raise HubNotAnswering(waiting_for, f"did not answer for {seconds:.0f} s")
