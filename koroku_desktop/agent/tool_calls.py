"""Running one model step's tool calls: approvals, the per-turn budget, cancellation.

Split out of the agent loop: each call is asked about (if the policy says so), run, and
answered; all responses of one step are persisted as one user content, even on a cancel.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from koroku_desktop.agent.hooks import AgentHooks
from koroku_desktop.agent.options import AgentOptions
from koroku_desktop.agent.ports import ApprovalRequest, Approver
from koroku_desktop.agent.turn import Journal, TurnState
from koroku_desktop.domain.events import MessageEvent
from koroku_desktop.domain.json_value import JsonObject
from koroku_desktop.domain.parts import FunctionCallPart, FunctionResponsePart
from koroku_desktop.tools.approval import ApprovalPolicy
from koroku_desktop.tools.base import RecallSearch, RememberFact, ScheduleTask, ToolContext
from koroku_desktop.tools.registry import ToolRegistry, split_media

DENIED = {"error": "denied by the user"}
CANCELLED = {"error": "cancelled by the user before the tool returned"}
OVER_BUDGET = {"error": "not run: the tool-call budget for this turn is spent"}


@dataclass
class ToolCaller:
    """What running a call needs: the tools, who decides, who is asked, who is told."""

    tools: ToolRegistry
    policy: ApprovalPolicy
    approver: Approver
    options: AgentOptions
    hooks: AgentHooks
    recall: RecallSearch | None = None
    """The `recall` tool's search (set by the composition once search is wired)."""
    remember: RememberFact | None = None
    """The `remember` tool's writer (set by the composition; None: facts are off)."""
    schedule: ScheduleTask | None = None
    """The `schedule` tool's writer (set by the composition; None: no tasks here)."""

    async def run_calls(
        self, journal: Journal, calls: list[FunctionCallPart], state: TurnState
    ) -> None:
        """Run each call in order and persist all responses as one user content."""
        responses: list[FunctionResponsePart] = []
        try:
            for call in calls:
                responses.append(await self.run_call(call, state))
        except asyncio.CancelledError:
            responses.extend(
                FunctionResponsePart(
                    name=c.name, id=c.id, response=dict(CANCELLED), call_args=c.args
                )
                for c in calls[len(responses) :]
            )
            await journal.append([MessageEvent(role="user", origin="tools", parts=responses)])
            raise
        await journal.append([MessageEvent(role="user", origin="tools", parts=responses)])

    async def run_call(self, call: FunctionCallPart, state: TurnState) -> FunctionResponsePart:
        """Ask (if needed), run and answer one call; over the budget it is not run."""
        self.hooks.on_tool_call(call)
        options = self.options
        args: JsonObject = dict(call.args)
        media = None
        if state.calls_made >= options.max_tool_calls:
            response: JsonObject = dict(OVER_BUDGET)
        else:
            state.calls_made += 1
            allowed, refused = True, DENIED
            if self.policy.needs_asking(call.name, self.tools, args, options.workspace):
                source = self.tools.describe(call.name)
                request = ApprovalRequest(call.id, call.name, args, source)
                decision = await self.approver.approve(request)
                allowed = decision.allowed
                if decision.reason is not None:
                    refused = {"error": decision.reason}
                if allowed and decision.scope != "once":
                    self.policy.grant(call.name, decision.scope)
                if allowed and decision.args is not None:
                    args = dict(decision.args)
            if allowed:
                state.executed += 1
                remember = self.remember if options.remember_facts else None
                ctx = ToolContext(
                    options.workspace, options.data_dir, self.recall, remember, self.schedule
                )
                response, _ran = await self.tools.run(call.name, args, ctx)
                media = split_media(response)
            else:
                response = dict(refused)
        part = FunctionResponsePart(
            name=call.name, id=call.id, response=response, call_args=args, parts=media
        )
        self.hooks.on_tool_result(call, part)  # failed or not: `part.failed`, the one rule
        return part
