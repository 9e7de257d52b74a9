"""read_file asks outside the workspace; secrets always ask, even with 'always allow'."""

from __future__ import annotations

from pathlib import Path

import pytest

from koroku_desktop.tools.approval import ApprovalPolicy
from koroku_desktop.tools.registry import ToolRegistry
from koroku_desktop.tools.sensitive import read_verdict


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nsecret\n")
    (home / "notes.txt").write_text("outside the workspace")
    monkeypatch.setenv("HOME", str(home))
    return home


@pytest.fixture
def workspace(home: Path) -> Path:
    workspace = home / "project"
    workspace.mkdir()
    (workspace / "readme.md").write_text("inside")
    (workspace / ".env.local").write_text("API_TOKEN=abc")
    (workspace / "key-link").symlink_to(home / ".ssh" / "id_rsa")
    (workspace / "escape").symlink_to(home / "notes.txt")
    return workspace


def _asks(policy: ApprovalPolicy, path: str, workspace: Path) -> bool:
    return policy.needs_asking("read_file", ToolRegistry(None), {"path": path}, workspace)


def test_inside_the_workspace_reads_freely(workspace: Path) -> None:
    assert not _asks(ApprovalPolicy(), "readme.md", workspace)
    assert not _asks(ApprovalPolicy(), str(workspace / "readme.md"), workspace)


def test_outside_the_workspace_asks_like_a_write_unless_granted(
    workspace: Path, home: Path
) -> None:
    assert _asks(ApprovalPolicy(), "~/notes.txt", workspace)
    assert _asks(ApprovalPolicy(), "../notes.txt", workspace)
    assert _asks(ApprovalPolicy(), "escape", workspace)  # a symlink out of the workspace
    assert not _asks(ApprovalPolicy(always=["read_file"]), "~/notes.txt", workspace)


@pytest.mark.parametrize(
    "path",
    [
        "~/.ssh/id_rsa",
        "key-link",  # a symlink inside the workspace to ~/.ssh/id_rsa
        ".env.local",  # inside the workspace, but a .env file
        "~/.gnupg/private-keys-v1.d/x.key",
        "~/.local/share/keyrings/login.keyring",
        "~/.mozilla/firefox/abc.default/logins.json",
        "~/.config/google-chrome/Default/Login Data",
        "~/.config/chromium/Default/Cookies",
    ],
)
def test_secrets_always_ask_even_when_always_allowed(workspace: Path, path: str) -> None:
    policy = ApprovalPolicy(always=["read_file"])
    policy.grant("read_file", "session")
    assert _asks(policy, path, workspace)
    assert read_verdict(path, workspace) == "always_ask"


def test_an_edit_with_nothing_to_replace_is_not_put_to_the_person(workspace: Path) -> None:
    policy, registry = ApprovalPolicy(), ToolRegistry(None)
    for args in ({"path": "readme.md"}, {"path": "readme.md", "old_str": "", "new_str": ""}):
        assert not policy.needs_asking("edit_file", registry, args, workspace)
    real = {"path": "readme.md", "old_str": "inside", "new_str": "in"}
    assert policy.needs_asking("edit_file", registry, real, workspace)
