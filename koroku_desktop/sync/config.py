"""Where the hub is: the URL from settings or `KOROKU_SYNC_URL`, checked before any connect.

The URL names user, host, port and database (`postgresql://user@host:port/db`); the
password never lives in it (it comes from the OS keyring, or PGPASSWORD). TLS is required
(`sslmode=require` or stronger) except to this machine (localhost, 127.0.0.1, ::1, a unix
socket), so nothing readable leaves the machine, and nothing leaves it at all unless a hub
is configured.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from koroku_desktop.domain.errors import ConfigError
from koroku_desktop.sync.deadline import ANSWER_TIMEOUT_S, answer_timeout

if TYPE_CHECKING:  # psycopg is imported where a hub is reached: a start without sync skips it
    pass

LOCAL_HOSTS = frozenset({"", "localhost", "127.0.0.1", "::1", "[::1]"})
SECURE_SSLMODES = frozenset({"require", "verify-ca", "verify-full"})


class SyncConfigError(ConfigError, ValueError):
    """A hub URL Koroku refuses to use, with a message fit for a person."""


PasswordSource = Callable[[], str | None]
"""Where the hub password comes from, asked at every connect (a password stored while Koroku
runs is used at the next connect, no restart needed)."""


def no_password() -> str | None:
    """No password (peer or trust authentication, or a `.pgpass` file libpq reads itself)."""
    return None


@dataclass(frozen=True)
class HubAddress:
    """A checked hub URL and where its password comes from (never shown, never stored)."""

    url: str
    password: PasswordSource = field(default=no_password, compare=False)
    answer_s: float = field(default=ANSWER_TIMEOUT_S, compare=False)
    """How long the hub may stay silent before a call gives up (sync/deadline.py)."""

    def __repr__(self) -> str:
        return f"HubAddress({self.display()!r})"

    def display(self) -> str:
        """The hub as `user@host:port/db` (no password), for status lines."""
        from psycopg.conninfo import conninfo_to_dict

        parts = conninfo_to_dict(self.url)
        host = str(parts.get("host") or "localhost")
        user = f"{parts['user']}@" if parts.get("user") else ""
        port = f":{parts['port']}" if parts.get("port") else ""
        return f"{user}{host}{port}/{parts.get('dbname', '')}"

    def conninfo(self) -> str:
        """The libpq connection string, the password added in memory only.

        Never hang on the hub: TCP keepalives and a TCP user timeout notice a dead link;
        the server cancels a statement before this side gives up on it (`statement_timeout`)
        and ends a session left idle inside a transaction (`idle_in_transaction_session_
        timeout`, half the bound), so a device that stalls mid-push frees the push lock
        before another device's wait for it runs out.
        """
        from psycopg.conninfo import conninfo_to_dict, make_conninfo

        secret = self.password()
        extra = {"password": secret} if secret else {}
        bound_ms = int(self.answer_s * 1000)
        server = (
            f"-c statement_timeout={bound_ms * 4 // 5}"
            f" -c idle_in_transaction_session_timeout={max(bound_ms // 2, 500)}"
            f" -c tcp_user_timeout={bound_ms}"
        )
        given = str(conninfo_to_dict(self.url).get("options") or "")
        return make_conninfo(
            self.url,
            connect_timeout=max(2, min(5, int(self.answer_s))),
            application_name="koroku",
            keepalives=1,
            keepalives_idle=max(1, int(self.answer_s) // 3),
            keepalives_interval=max(1, int(self.answer_s) // 10),
            keepalives_count=3,
            tcp_user_timeout=bound_ms,
            options=f"{given} {server}".strip(),
            **extra,
        )


def _is_local(host: str) -> bool:
    return all(h.strip() in LOCAL_HOSTS or h.strip().startswith("/") for h in host.split(","))


def check_url(url: str, password: str | PasswordSource | None = None) -> HubAddress:
    """The hub address for `url`, or `SyncConfigError` saying what is wrong with it.
    `password`: the password itself, or where to ask for it at each connect."""
    import psycopg
    from psycopg.conninfo import conninfo_to_dict

    url = url.strip()
    if not url.startswith(("postgresql://", "postgres://")):
        raise SyncConfigError("the hub URL must look like postgresql://user@host:port/db")
    try:
        parts = conninfo_to_dict(url)
    except (psycopg.ProgrammingError, ValueError) as exc:  # a malformed URL
        raise SyncConfigError(f"the hub URL cannot be read: {exc}") from None
    if parts.get("password"):
        raise SyncConfigError(
            "the hub URL must not contain the password: store it with"
            " `koroku sync --set-password` (OS keyring) or set PGPASSWORD"
        )
    if not parts.get("dbname"):
        raise SyncConfigError("the hub URL must name a database (postgresql://user@host/db)")
    host = str(parts.get("host") or "")
    sslmode = str(parts.get("sslmode") or "")
    if not _is_local(host) and sslmode not in SECURE_SSLMODES:
        raise SyncConfigError(
            f"refusing to sync with {host} without TLS: add ?sslmode=require (or verify-full)"
            " to the hub URL; only localhost may go without"
        )
    try:
        bound = answer_timeout()
    except ValueError as exc:
        raise SyncConfigError(str(exc)) from None
    if password is None:
        return HubAddress(url, answer_s=bound)
    if isinstance(password, str):
        fixed = password
        return HubAddress(url, lambda: fixed, bound)
    return HubAddress(url, password, bound)
