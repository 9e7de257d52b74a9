"""Every test in isolation: its own data dir, nothing from the developer's shell, no network.

Safe under pytest-xdist: everything a test writes is under its own tmp_path.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# Hundreds of `koroku` subprocesses each import the package, google-genai, pydantic and Qt:
# without bytecode caches every one of them compiles all of that again (about 1.4 CPU-s
# each). A shell that sets PYTHONDONTWRITEBYTECODE would make the suite twice as slow.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

_LOCAL_HOSTS = {"127.0.0.1", "::1", "localhost", "0.0.0.0"}
_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


def _check_address(address: Any) -> None:
    if isinstance(address, tuple) and address:
        host = str(address[0])
        if host not in _LOCAL_HOSTS and not host.startswith("127."):
            raise ConnectionRefusedError(f"tests may not reach the network (tried {host})")


def _guarded_connect(self: socket.socket, address: Any) -> None:
    _check_address(address)
    _real_connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: Any) -> int:
    _check_address(address)
    return _real_connect_ex(self, address)


socket.socket.connect = _guarded_connect  # type: ignore[method-assign]
socket.socket.connect_ex = _guarded_connect_ex  # type: ignore[method-assign]


@pytest.fixture(autouse=True)
def koroku_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Every test gets its own data dir and no API key or endpoint from the developer's shell."""
    home = tmp_path / "koroku-home"
    monkeypatch.setenv("KOROKU_HOME", str(home))
    for var in (
        "GOOGLE_API_KEY",
        "GEMINI_API_KEY",
        "GOOGLE_GEMINI_BASE_URL",
        "KOROKU_MODEL",
        "KOROKU_MAX_TOOL_CALLS",
        "KOROKU_WORKSPACE",
        "KOROKU_COMPACT_AT_TOKENS",
        "KOROKU_SYNC_URL",
        "PGPASSWORD",
    ):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    # No desktop portal from the developer's session (it would show its shortcut dialog).
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", f"unix:path={home}/no-session-bus")
    yield home
