"""Running one model step's tool calls: approvals, the per-turn budget, cancellation.

Split out of the agent loop: each call is asked about (if the policy says so), run, and
answered; all responses of one step are persisted as one user content, even on a cancel.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from koroku_desktop.agent.ports import ApprovalRequest
from koroku_desktop.domain.events import MessageEvent
from koroku_desktop.domain.parts import FunctionCallPart, FunctionResponsePart
from koroku_desktop.tools.base import ToolContext
from koroku_desktop.tools.registry import split_media

if TYPE_CHECKING:
    from koroku_desktop.agent.loop import Agent

DENIED = {"error": "denied by the user"}
CANCELLED = {"error": "cancelled by the user before the tool returned"}
OVER_BUDGET = {"error": "not run: the tool-call budget for this turn is spent"}


@dataclass
class TurnState:
    """What one turn has done so far (for cancellation and the result)."""

    calls_made: int
    thinking_level: str = ""
    """Gemini's thinking level for this turn's requests ("" = the model's default)."""
    partial_text: list[str] = field(default_factory=list)
    executed: int = 0
    budget_exhausted: bool = False


async def run_calls(agent: Agent, calls: list[FunctionCallPart], state: TurnState) -> None:
    """Run each call in order and persist all responses as one user content."""
    responses: list[FunctionResponsePart] = []
    try:
        for call in calls:
            responses.append(await run_call(agent, call, state))
    except asyncio.CancelledError:
        responses.extend(
            FunctionResponsePart(name=c.name, id=c.id, response=dict(CANCELLED), call_args=c.args)
            for c in calls[len(responses) :]
        )
        await agent.append([MessageEvent(role="user", origin="tools", parts=responses)])
        raise
    await agent.append([MessageEvent(role="user", origin="tools", parts=responses)])


async def run_call(agent: Agent, call: FunctionCallPart, state: TurnState) -> FunctionResponsePart:
    """Ask (if needed), run and answer one call; over the budget it is not run."""
    agent.hooks.on_tool_call(call)
    options = agent.options
    args: dict[str, Any] = dict(call.args)
    media = None
    if state.calls_made >= options.max_tool_calls:
        response: dict[str, Any] = dict(OVER_BUDGET)
    else:
        state.calls_made += 1
        allowed, refused = True, DENIED
        if agent.policy.needs_asking(call.name, agent.tools, args, options.workspace):
            source = agent.tools.describe(call.name)
            request = ApprovalRequest(call.id, call.name, args, source)
            decision = await agent.approver.approve(request)
            allowed = decision.allowed
            if decision.reason is not None:
                refused = {"error": decision.reason}
            if allowed and decision.scope != "once":
                agent.policy.grant(call.name, decision.scope)
            if allowed and decision.args is not None:
                args = dict(decision.args)
        if allowed:
            state.executed += 1
            ctx = ToolContext(options.workspace, options.data_dir, agent.recall)
            response, _ran = await agent.tools.run(call.name, args, ctx)
            media = split_media(response)
        else:
            response = dict(refused)
    part = FunctionResponsePart(
        name=call.name, id=call.id, response=response, call_args=args, parts=media
    )
    agent.hooks.on_tool_result(call, part)  # failed or not: `part.failed`, the one rule
    return part
