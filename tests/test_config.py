"""Settings, data paths and the API key resolution order."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from koroku_desktop.app.config import (
    KeyringUnavailable,
    Settings,
    SettingsError,
    default_paths,
    resolve_api_key,
    store_api_key,
)
from koroku_desktop.app.settings_store import SettingsStore
from tests.packaging.conftest import run_python
from tests.support.keyring_memory import MemoryKeyring


def test_data_dir_is_private_and_complete(koroku_home: Path) -> None:
    paths = default_paths()
    assert paths.home == koroku_home
    assert stat.S_IMODE(os.stat(koroku_home).st_mode) == 0o700
    assert paths.memory.is_dir() and paths.tools.is_dir()


def test_settings_round_trip_and_env_overrides(monkeypatch: pytest.MonkeyPatch) -> None:
    paths = default_paths()
    SettingsStore.open(paths).update({"model": "gemini-x", "max_tool_calls": 7})
    assert stat.S_IMODE(os.stat(paths.settings_file).st_mode) == 0o600
    assert SettingsStore.open(paths).effective.max_tool_calls == 7
    monkeypatch.setenv("KOROKU_MAX_TOOL_CALLS", "3")
    monkeypatch.setenv("KOROKU_MODEL", "gemini-from-env")
    store = SettingsStore.open(paths)
    effective = store.effective
    assert (effective.max_tool_calls, effective.model) == (3, "gemini-from-env")
    assert store.stored.model == "gemini-x"  # env is never written back


def test_a_bad_environment_value_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KOROKU_MAX_TOOL_CALLS", "lots")
    with pytest.raises(SettingsError, match="KOROKU_MAX_TOOL_CALLS"):
        SettingsStore.open(default_paths())


def test_a_corrupt_settings_file_is_kept_aside_and_defaults_used() -> None:
    paths = default_paths()
    paths.settings_file.write_text("{ not json")
    assert SettingsStore.open(paths).effective == Settings()
    assert paths.settings_file.with_suffix(".json.bad").read_text() == "{ not json"


def test_keyring_wins_over_the_environment(
    memory_keyring: MemoryKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "env-key")
    assert resolve_api_key() is not None and resolve_api_key().source == "GEMINI_API_KEY"  # type: ignore[union-attr]
    store_api_key("ring-key")
    key = resolve_api_key()
    assert key is not None and (key.value, key.source) == ("ring-key", "keyring")
    assert "ring-key" not in repr(key)


def test_a_keyring_turned_off_by_the_environment_is_not_loaded_to_ask_it() -> None:
    code = (
        "import sys\n"
        "from koroku_desktop.app.config import resolve_api_key\n"
        "key = resolve_api_key()\n"
        "assert key is not None and key.source == 'GEMINI_API_KEY', key\n"
        "assert 'keyring' not in sys.modules\n"
    )
    env = {"PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring", "GEMINI_API_KEY": "k"}
    result = run_python(["-c", code], env)
    assert result.returncode == 0, result.stderr


def test_without_a_keyring_storing_fails_loudly_and_writes_no_file() -> None:
    with pytest.raises(KeyringUnavailable, match="GEMINI_API_KEY"):
        store_api_key("secret-key")
    home = default_paths().home
    assert not any(
        "secret-key" in p.read_text(errors="ignore") for p in home.rglob("*") if p.is_file()
    )


def test_settings_file_never_holds_the_key(memory_keyring: MemoryKeyring) -> None:
    paths = default_paths()
    store_api_key("k-123")
    SettingsStore.open(paths).update({"welcomed": True})
    assert "k-123" not in json.dumps(json.loads(paths.settings_file.read_text()))
