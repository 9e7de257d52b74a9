"""Fixtures of the sync tests: a real PostgreSQL hub and two data dirs as two devices."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.e2e.conftest import Koroku
from tests.fakes.fixtures import fake_gemini  # noqa: F401  (re-exported fixture)
from tests.sync.pg_server import PASSWORD, PgServer, find_bin


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    """One PostgreSQL server for the session (skipped only where it is not installed)."""
    bindir = find_bin()
    if bindir is None:
        if os.environ.get("CI"):
            pytest.fail("PostgreSQL is missing in CI: .ci/run must apt-get install postgresql")
        pytest.skip("PostgreSQL is not installed (apt-get install postgresql)")
    server = PgServer(bindir).init()
    server.start()
    try:
        yield server
    finally:
        server.destroy()


@pytest.fixture
def hub(pg_server: PgServer) -> Iterator[PgServer]:
    """The server, running (a test that stops it gets it restarted afterwards)."""
    pg_server.start()
    yield pg_server
    pg_server.start()


@dataclass
class Device(Koroku):
    """One device: its own data dir, the shared hub URL and the hub password in the env."""

    hub_url: str = ""

    def env(self, **extra: str) -> dict[str, str]:
        env = super().env(**extra)
        env["KOROKU_HOME"] = str(self.home)
        env.setdefault("KOROKU_SYNC_URL", self.hub_url)
        env["PGPASSWORD"] = PASSWORD
        env.update(extra)
        return env

    def sql(self, query: str, params: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
        with sqlite3.connect(self.home / "koroku.db") as conn:
            return list(conn.execute(query, params))

    def sync(self) -> str:
        done = self.run("sync")
        assert done.returncode == 0, done.stderr
        return done.stdout

    def ask(self, text: str) -> None:
        done = self.run("ask", text)
        assert done.returncode == 0, done.stderr


def make_device(tmp_path: Path, name: str, hub_url: str) -> Device:
    home = tmp_path / name
    workspace = tmp_path / f"{name}-workspace"
    workspace.mkdir()
    return Device(home, workspace, hub_url)


@pytest.fixture
def hub_url(hub: PgServer) -> str:
    """A fresh hub database for this test."""
    return hub.new_database()


@pytest.fixture
def devices(
    tmp_path: Path, hub_url: str, koroku_home: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[Device, Device]:
    """Devices A and B, syncing with this test's hub (the password in PGPASSWORD, as the
    keyring is off in tests)."""
    monkeypatch.setenv("PGPASSWORD", PASSWORD)
    return make_device(tmp_path, "A", hub_url), make_device(tmp_path, "B", hub_url)
