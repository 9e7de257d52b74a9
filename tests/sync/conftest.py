"""Fixtures of the sync tests: two data dirs as two devices of one real PostgreSQL hub (the
hub fixtures themselves are the tests/support plugin's)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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

    def ok(self, *args: str) -> str:
        """`koroku <args>`, which must succeed; what it printed."""
        done = self.run(*args)
        assert done.returncode == 0, done.stderr
        return done.stdout

    def ok_json(self, *args: str) -> Any:
        """`koroku <args> --json`, which must succeed; what it printed, parsed."""
        return json.loads(self.ok(*args, "--json"))

    def sync(self) -> str:
        return self.ok("sync")

    def ask(self, text: str) -> None:
        self.ok("ask", text)


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
