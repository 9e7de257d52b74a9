"""A hub URL changed in settings (or sync turned off) switches sync while the app runs: the
service restarts against the new hub, the agent's turn lock follows, the status says so."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
import pytest

from koroku_desktop.app.config import default_paths, store_sync_password
from koroku_desktop.app.runtime import CONVERSATION_ID, Runtime, build_runtime
from koroku_desktop.app.settings_store import SettingsStore
from koroku_desktop.app.sync_wiring import SyncSwitch
from koroku_desktop.domain.events import MessageEvent
from koroku_desktop.domain.parts import TextPart
from koroku_desktop.sync.service import SyncState, SyncStatus
from tests.support.keyring_memory import MemoryKeyring
from tests.sync.pg_server import PASSWORD, PgServer, free_port
from tests.sync.test_follow_and_lock import wait_until
from tests.sync.test_sync_crash import hub_ids
from tests.test_settings_store import NoApprover


def hub_rows(url: str, sql: str) -> list[tuple[object, ...]]:
    with psycopg.connect(url, password=PASSWORD) as conn:
        return list(conn.execute(sql).fetchall())  # type: ignore[call-overload]


def on_hub(url: str, event_id: str) -> bool:
    """Whether the hub has the event (False while its schema is not made yet)."""
    try:
        return event_id in hub_ids(url)
    except psycopg.errors.UndefinedTable:
        return False


@contextmanager
def app_sync(
    sync_url: str | None = None,
) -> Iterator[tuple[Runtime, SyncSwitch, list[SyncStatus]]]:
    """The app's runtime (with `sync_url` saved in settings first, if given), its sync
    switch started as the app starts it, and the statuses it reports."""
    if sync_url is not None:
        SettingsStore.open(default_paths()).update({"sync_url": sync_url})
    runtime = build_runtime(NoApprover(), front_end="app")
    switch = runtime.sync_switch
    assert switch is not None
    statuses: list[SyncStatus] = []
    try:
        switch.start(statuses.append)
        yield runtime, switch, statuses
    finally:
        runtime.close()


def test_a_new_hub_url_in_settings_switches_sync_without_a_restart(
    hub: PgServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PGPASSWORD", PASSWORD)
    first, second = hub.new_database(), hub.new_database()
    nowhere = f"postgresql://koroku@127.0.0.1:{free_port()}/hub"
    with app_sync(nowhere) as (runtime, switch, statuses):
        wait_until(lambda: switch.describe().startswith("Sync: offline since"), "offline")
        written = runtime.log.append(
            CONVERSATION_ID, [MessageEvent(role="user", parts=[TextPart(text="hello hub")])]
        )

        runtime.settings_store.update({"sync_url": first})  # what the settings dialog does
        assert runtime.sync is not None and runtime.sync.setup.address.url == first
        wait_until(lambda: on_hub(first, written[0].event_id), "the log pushed to the new hub")
        wait_until(lambda: statuses[-1].state is SyncState.UP_TO_DATE, "up to date")
        assert switch.describe() == "Sync: up to date"
        # The agent's turn lock now takes the new hub's lock.
        lock = runtime.agent.turn_lock
        assert lock is not None and lock.try_acquire(CONVERSATION_ID, "turn-1") is None
        assert hub_rows(first, "SELECT front_end FROM koroku.turn_holders") == [("app",)]
        lock.release(CONVERSATION_ID)

        # Another hub: contacted, and refused, as this data dir synced with the first one.
        runtime.settings_store.update({"sync_url": second})
        wait_until(lambda: statuses[-1].state is SyncState.ERROR, "the second hub refused")
        assert "synced with another hub" in statuses[-1].detail
        assert len(hub_rows(second, "SELECT id FROM koroku.hub")) == 1

        runtime.settings_store.update({"sync_url": ""})  # sync off
        assert runtime.sync is None
        assert statuses[-1].state is SyncState.OFF and switch.describe() == "Sync: off"
        assert lock.try_acquire(CONVERSATION_ID, "turn-2") is None  # the local lease alone
        assert hub_rows(first, "SELECT COUNT(*) FROM koroku.turn_holders") == [(0,)]
        lock.release(CONVERSATION_ID)


def test_a_refused_url_in_settings_shows_an_error_and_keeps_working(
    hub: PgServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    with app_sync() as (runtime, switch, statuses):
        assert runtime.sync is None
        runtime.settings_store.update({"sync_url": "postgresql://me@hub.example.org/koroku"})
        assert runtime.sync is None
        assert statuses[-1].state is SyncState.ERROR and "without TLS" in statuses[-1].detail
        assert switch.describe().startswith("Sync: error: refusing")  # as Settings shows it
        lock = runtime.agent.turn_lock
        assert lock is not None and lock.try_acquire(CONVERSATION_ID, "turn") is None
        lock.release(CONVERSATION_ID)


def test_a_url_refused_at_start_is_shown_once_the_app_listens() -> None:
    with app_sync("postgresql://me@far.example/k") as (runtime, _switch, statuses):
        assert runtime.sync is None
        assert [s.state for s in statuses] == [SyncState.ERROR]
        assert "without TLS" in statuses[0].detail


def test_a_hub_password_stored_while_the_app_runs_is_used_without_a_restart(
    hub: PgServer,
    monkeypatch: pytest.MonkeyPatch,
    memory_keyring: MemoryKeyring,
) -> None:
    """The password is read at each connect: a wrong one shows an error, the right one
    stored in the keyring (what Settings' "Store password" does) brings sync back."""
    monkeypatch.setenv("PGPASSWORD", "not-the-password")
    url = hub.new_database()
    with app_sync(url) as (_runtime, switch, statuses):
        refused = "the wrong password refused"
        wait_until(lambda: bool(statuses) and statuses[-1].state is SyncState.ERROR, refused)
        assert "the hub refused the login" in statuses[-1].detail
        assert "password authentication failed" in statuses[-1].detail
        assert "not-the-password" not in statuses[-1].detail

        store_sync_password(PASSWORD)
        switch.retry_now()
        wait_until(lambda: statuses[-1].state is SyncState.UP_TO_DATE, "synced")
        assert switch.describe() == "Sync: up to date"
        assert len(hub_rows(url, "SELECT id FROM koroku.hub")) == 1
