"""A real keyring backend in one JSON file, shared by the test and its `koroku` subprocesses.

Subprocesses load it with `PYTHON_KEYRING_BACKEND=tests.support.keyring_file.FileKeyring`
and find the file in `$KOROKU_TEST_KEYRING` (so a token stored by one process is read by the
next, as with the OS keyring across restarts).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

import keyring
import pytest
from keyring.backend import KeyringBackend

BACKEND = "tests.support.keyring_file.FileKeyring"
ENV = "KOROKU_TEST_KEYRING"


class FileKeyring(KeyringBackend):
    """Passwords in the JSON file named by `$KOROKU_TEST_KEYRING` ({"service\\tuser": value})."""

    priority = 1

    @property
    def path(self) -> Path:
        return Path(os.environ[ENV])

    def entries(self) -> dict[str, str]:
        """Everything stored, keyed `service<TAB>user`."""
        try:
            data: dict[str, str] = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        return data

    def _save(self, data: dict[str, str]) -> None:
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data), encoding="utf-8")
        tmp.replace(self.path)

    def get_password(self, service: str, username: str) -> str | None:
        return self.entries().get(f"{service}\t{username}")

    def set_password(self, service: str, username: str, password: str) -> None:
        data = self.entries()
        data[f"{service}\t{username}"] = password
        self._save(data)

    def delete_password(self, service: str, username: str) -> None:
        data = self.entries()
        data.pop(f"{service}\t{username}", None)
        self._save(data)


@pytest.fixture
def file_keyring(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FileKeyring]:
    """One keyring file for this test and every `koroku` it starts."""
    # Read before the environment names this backend: keyring picks its process-wide backend
    # on first use, and a worker whose first use came here would keep the file keyring (with
    # no file) for every later test.
    previous = keyring.get_keyring()
    monkeypatch.setenv(ENV, str(tmp_path / "keyring.json"))
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", BACKEND)
    backend = FileKeyring()  # type: ignore[no-untyped-call]
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)


class LockedKeyring(FileKeyring):
    """A keyring waiting to be unlocked (as the OS keyring's unlock dialog waits for the
    person) for the MCP servers' OAuth entries: each read of one notes `<file>.asked` and
    blocks until `<file>.unlocked` exists."""

    def get_password(self, service: str, username: str) -> str | None:
        if "mcp_oauth" not in f"{service} {username}":
            return super().get_password(service, username)
        self.path.with_suffix(".asked").touch()
        unlocked = self.path.with_suffix(".unlocked")
        while not unlocked.exists():
            time.sleep(0.02)
        return super().get_password(service, username)
