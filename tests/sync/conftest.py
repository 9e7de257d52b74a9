"""Fixtures of the sync tests: two data dirs as two devices of one real PostgreSQL hub (the
hub fixtures themselves are the tests/support plugin's)."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.processes import Koroku
from tests.sync.pg_server import PASSWORD


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
def devices(
    tmp_path: Path, hub_url: str, koroku_home: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[Device, Device]:
    """Devices A and B, syncing with this test's hub (the password in PGPASSWORD, as the
    keyring is off in tests)."""
    monkeypatch.setenv("PGPASSWORD", PASSWORD)
    return make_device(tmp_path, "A", hub_url), make_device(tmp_path, "B", hub_url)
