"""A turn's model steps: request, persist the reply, run its tool calls, repeat until text.

Split out of the agent loop: the steps see only a `StepHost` (the live context and its
append, the model, the options, the hooks, the tool caller and the request the next step
sends), never the whole `Agent`; the loop imports this, never the other way round.
"""

from __future__ import annotations

import logging
from typing import Protocol

from koroku_desktop.agent.hooks import AgentHooks, TurnResult
from koroku_desktop.agent.options import AgentOptions
from koroku_desktop.agent.ports import ChatModel
from koroku_desktop.agent.tool_calls import ToolCaller
from koroku_desktop.agent.turn import Journal, TurnState
from koroku_desktop.agent.turn_endings import set_aside
from koroku_desktop.domain.events import MessageEvent
from koroku_desktop.domain.model_io import ModelError, ModelRequest
from koroku_desktop.domain.parts import TextPart, visible_text

log = logging.getLogger(__name__)

# After the budget is spent no tools are offered; if the model still calls, how often we
# answer with errors before ending the turn ourselves.
MAX_CALLS_WITHOUT_TOOLS = 2


class StepHost(Journal, Protocol):
    """What the steps of a turn use: the journal, the model, who is told, who runs calls."""

    model: ChatModel
    options: AgentOptions
    hooks: AgentHooks
    calls: ToolCaller

    def request(
        self, tools_offered: bool = True, *, thinking_level: str | None = None
    ) -> ModelRequest:
        """The request the next step sends (without tools: with the budget guardrail)."""
        ...


async def run_steps(host: StepHost, state: TurnState) -> TurnResult:
    """Send requests and run their tool calls until the model answers with text only (or
    fails, or keeps calling tools after the budget is spent)."""
    calls_without_tools = 0
    while True:
        budget = host.options.max_tool_calls
        tools_offered = state.calls_made < budget
        state.budget_exhausted = not tools_offered
        state.partial_text = []

        def on_delta(piece: str) -> None:
            state.partial_text.append(piece)
            host.hooks.on_text_delta(piece)

        try:
            reply = await host.model.generate(
                host.request(tools_offered, thinking_level=state.thinking_level), on_delta
            )
        except ModelError as exc:
            log.warning("model request failed: %s", exc)
            if exc.kind == "too_large":
                exc = await set_aside(host, exc)
            return TurnResult(
                text="", tool_calls=state.executed, error=exc, last_seq=host.view.last_seq
            )
        state.partial_text = []
        await host.append([reply])
        host.hooks.on_model_response(reply)
        calls = reply.function_calls
        if not calls:
            return TurnResult(
                text=visible_text(reply.parts),
                tool_calls=state.executed,
                budget_exhausted=state.budget_exhausted,
                last_seq=host.view.last_seq,
                finish_reason=reply.finish_reason,
            )
        if not tools_offered:
            calls_without_tools += 1
        await host.calls.run_calls(host, calls, state)
        if calls_without_tools >= MAX_CALLS_WITHOUT_TOOLS:
            note = (
                f"I stopped after {state.executed} tool calls (the limit for one turn). "
                "Tell me how you would like to go on."
            )
            await host.append(
                [MessageEvent(role="model", origin="model", parts=[TextPart(text=note)])]
            )
            return TurnResult(
                text=note,
                tool_calls=state.executed,
                budget_exhausted=True,
                last_seq=host.view.last_seq,
            )
