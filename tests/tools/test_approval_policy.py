"""ApprovalPolicy: who asks, and what grants remember."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from koroku_desktop.tools.approval import ApprovalPolicy
from koroku_desktop.tools.registry import ToolRegistry

SELF_APPROVING_TOOL = textwrap.dedent(
    '''
    from typing import Any, ClassVar
    from koroku_desktop.tools.base import AgentTool, ToolContext

    class Sneaky(AgentTool):
        """Claims it needs no approval."""
        name: ClassVar[str] = "sneaky"
        needs_approval: ClassVar[bool] = False
        async def execute(self, ctx: ToolContext) -> dict[str, Any]:
            return {}
    '''
)


@pytest.fixture
def registry(tmp_path: Path) -> ToolRegistry:
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "sneaky.py").write_text(SELF_APPROVING_TOOL, encoding="utf-8")
    return ToolRegistry(tools)


def test_read_only_builtins_never_ask(registry: ToolRegistry) -> None:
    policy = ApprovalPolicy()
    assert not policy.needs_asking("read_file", registry)
    assert not policy.needs_asking("recall", registry)


@pytest.mark.parametrize("tool", ["write_file", "edit_file", "bash"])
def test_changing_builtins_ask(registry: ToolRegistry, tool: str) -> None:
    assert ApprovalPolicy().needs_asking(tool, registry)


def test_user_tools_ask_even_if_they_claim_otherwise(registry: ToolRegistry) -> None:
    assert registry.get("sneaky") is not None
    assert ApprovalPolicy().needs_asking("sneaky", registry)


def test_unknown_tools_ask(registry: ToolRegistry) -> None:
    assert ApprovalPolicy().needs_asking("ghost", registry)


def test_once_remembers_nothing(registry: ToolRegistry) -> None:
    policy = ApprovalPolicy()
    policy.grant("bash", "once")
    assert policy.needs_asking("bash", registry)
    assert policy.session_granted() == set()
    assert policy.always_granted() == set()


def test_session_grant_and_revoke(registry: ToolRegistry) -> None:
    policy = ApprovalPolicy()
    policy.grant("bash", "session")
    assert not policy.needs_asking("bash", registry)
    assert policy.needs_asking("write_file", registry)
    assert policy.session_granted() == {"bash"}
    policy.revoke("bash")
    assert policy.needs_asking("bash", registry)
    assert policy.session_granted() == set()


def test_always_grant_is_reported_for_persisting(registry: ToolRegistry) -> None:
    persisted: list[str] = []
    policy = ApprovalPolicy(on_always_granted=persisted.append)
    policy.grant("sneaky", "always")
    assert persisted == ["sneaky"]
    assert not policy.needs_asking("sneaky", registry)
    assert policy.always_granted() == {"sneaky"}
    policy.revoke("sneaky")
    assert policy.needs_asking("sneaky", registry)


def test_always_from_settings(registry: ToolRegistry) -> None:
    policy = ApprovalPolicy(always=["edit_file"])
    assert not policy.needs_asking("edit_file", registry)
    assert policy.needs_asking("write_file", registry)
    policy.set_always(["write_file"])
    assert policy.always_granted() == {"write_file"}
    assert policy.needs_asking("edit_file", registry)


def test_returned_sets_are_copies() -> None:
    policy = ApprovalPolicy(always=["bash"])
    policy.always_granted().clear()
    policy.session_granted().add("bash")
    assert policy.always_granted() == {"bash"}
    assert policy.session_granted() == set()


def test_callback_can_be_attached_later(registry: ToolRegistry) -> None:
    persisted: list[str] = []
    policy = ApprovalPolicy()
    policy.on_always_granted = persisted.append
    policy.grant("bash", "always")
    assert persisted == ["bash"]
