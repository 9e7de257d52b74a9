"""SettingsStore: the only writer of settings.json, saving the user's values and never the
environment's, and never clobbering what another process wrote meanwhile."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from koroku_desktop.agent.ports import ApprovalDecision, ApprovalRequest
from koroku_desktop.app.config import Settings, default_paths
from koroku_desktop.app.runtime import build_runtime
from koroku_desktop.app.settings_store import SettingsStore, add_grant

ROOT = Path(__file__).resolve().parents[1]


class NoApprover:
    """Says no to everything (these tests never run a tool)."""

    async def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        return ApprovalDecision(allowed=False)


def on_file() -> dict[str, object]:
    data: dict[str, object] = json.loads(default_paths().settings_file.read_text("utf-8"))
    return data


def koroku(*args: str) -> subprocess.CompletedProcess[str]:
    """`koroku ARGS` as another process on the same data dir."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "koroku_desktop", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=True,
    )


def test_update_saves_the_users_values_and_not_the_environments(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("KOROKU_MODEL", "gemini-from-env")
    monkeypatch.setenv("KOROKU_WORKSPACE", str(tmp_path))
    store = SettingsStore.open(default_paths())
    heard: list[Settings] = []
    store.subscribe(heard.append)
    effective = store.update({"model": "gemini-from-env", "workspace": "/x", "max_tool_calls": 4})
    assert (effective.model, effective.workspace, effective.max_tool_calls) == (
        "gemini-from-env",
        str(tmp_path),
        4,
    )
    assert heard == [effective]
    saved = on_file()
    assert saved["max_tool_calls"] == 4
    assert saved["model"] == Settings().model and saved["workspace"] == ""
    assert "gemini-from-env" not in default_paths().settings_file.read_text("utf-8")


def test_a_bad_value_is_refused_and_nothing_is_written() -> None:
    store = SettingsStore.open(default_paths())
    with pytest.raises(ValidationError):
        store.update({"max_tool_calls": 0})
    assert not default_paths().settings_file.exists()
    assert store.effective.max_tool_calls == Settings().max_tool_calls


def test_granting_a_tool_saves_the_grant_and_no_override(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("KOROKU_MODEL", "gemini-from-env")
    monkeypatch.setenv("KOROKU_COMPACT_AT_TOKENS", "5000")
    runtime = build_runtime(NoApprover())
    try:
        runtime.policy.grant("bash", "always")
        assert on_file()["always_allow"] == ["bash"]
        text = runtime.paths.settings_file.read_text("utf-8")
        assert "gemini-from-env" not in text and "5000" not in text
        assert runtime.settings.model == "gemini-from-env"
        assert runtime.agent.options.model == "gemini-from-env"
    finally:
        runtime.close()


def test_a_grant_revoked_by_another_process_stays_revoked() -> None:
    """The runtime re-reads the file before writing: `koroku grants --revoke` is not undone."""
    SettingsStore.open(default_paths()).update({"always_allow": ["bash", "write_file"]})
    runtime = build_runtime(NoApprover())
    try:
        assert runtime.policy.always_granted() == {"bash", "write_file"}
        done = koroku("grants", "--revoke", "write_file")
        assert "revoked: write_file" in done.stdout
        runtime.policy.grant("edit_file", "always")
        assert on_file()["always_allow"] == ["bash", "edit_file"]
        assert runtime.policy.always_granted() == {"bash", "edit_file"}, "applied live"
    finally:
        runtime.close()


def test_koroku_grants_revokes_only_what_it_names() -> None:
    SettingsStore.open(default_paths()).update({"always_allow": ["bash"], "max_tool_calls": 9})
    other = SettingsStore.open(default_paths())
    other.update(add_grant("write_file"))
    koroku("grants", "--revoke", "bash")
    saved = on_file()
    assert saved["always_allow"] == ["write_file"] and saved["max_tool_calls"] == 9
    assert koroku("grants").stdout.split() == ["write_file"]
    assert other.reload().always_allow == ["write_file"]
