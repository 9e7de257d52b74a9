"""TurnStatus: keeps the conversation's live status row and end-of-turn notices in step with
the bridge — thinking, running a tool, waiting for an approval, retrying, waiting for another
front end's turn; then Stopped, the failure with Retry, the tool budget, a cut-off answer."""

from __future__ import annotations

from PySide6.QtCore import QObject

from koroku_desktop.agent.hooks import TurnResult
from koroku_desktop.domain.parts import FunctionCallPart
from koroku_desktop.ui.approvals import PendingApproval
from koroku_desktop.ui.bridge import AgentBridge
from koroku_desktop.ui.chat.message_model import MessageModel
from koroku_desktop.ui.chat.turn_rows import retry_text, status_text
from koroku_desktop.ui.turn_lanes import LaneState


class TurnStatus(QObject):
    """Connects a bridge's turn signals to a model's status row and notices."""

    def __init__(self, bridge: AgentBridge, model: MessageModel, parent: QObject | None = None):
        super().__init__(parent)
        self.model = model
        bridge.turn_started.connect(self.on_turn_started)
        bridge.text_delta.connect(self.on_text)
        bridge.tool_started.connect(self.on_tool)
        bridge.tool_finished.connect(self.on_tool_done)
        bridge.approval_requested.connect(self.on_approval)
        bridge.approval_closed.connect(self.on_approval_closed)
        bridge.turn_finished.connect(self.on_turn_finished)
        bridge.error.connect(self.on_error)  # a failed request, or a bug inside a turn
        bridge.waiting_changed.connect(self.on_waiting_changed)  # another front end's turn
        bridge.lane_shown.connect(self.on_shown)  # another conversation is shown
        self._running = False
        self._tool: str | None = None

    def on_turn_started(self, _text: object = None) -> None:
        """A turn began (or a retry): the failure it retries goes, Thinking… shows."""
        self._running = True
        self.model.drop_turn_notices("error")
        self.model.set_status(status_text("thinking"))

    def on_shown(self, state: LaneState) -> None:
        """Another conversation is shown (its page just loaded): its turn's state, if one
        runs — the tool running, or the answer streamed so far, or Thinking…."""
        self._running, self._tool = state.running, state.tool.name if state.tool else None
        if not state.running:
            return
        if state.tool is not None:
            self.model.tool_started(state.tool)
            self.on_tool(state.tool)
        elif state.partial:
            self.model.append_delta(state.partial)
        else:
            self.model.set_status(status_text("thinking"))

    def on_text(self, _piece: str) -> None:
        """The answer streams: it shows the progress itself."""
        self.model.set_status(None)

    def on_tool(self, call: FunctionCallPart) -> None:
        """A tool runs (or waits for its approval, which says so next)."""
        self._tool = call.name
        self.model.set_status(status_text("tool", call.name))

    def on_tool_done(self, *_args: object) -> None:
        """Back to the model."""
        self._tool = None
        if self._running:
            self.model.set_status(status_text("thinking"))

    def on_approval(self, pending: PendingApproval) -> None:
        """The turn waits for the person."""
        self.model.set_status(status_text("approval", pending.request.tool))

    def on_approval_closed(self, _pending: PendingApproval) -> None:
        """Answered: the tool runs (or the model hears the denial)."""
        if self._running:
            tool = self._tool
            self.model.set_status(status_text("tool", tool) if tool else status_text("thinking"))

    def on_retry(self, attempt: int, attempts: int, reason: str) -> None:
        """A request is retried (attempt `attempt` of `attempts`, because of `reason`)."""
        self.model.set_status(retry_text(attempt, attempts, reason))

    def on_waiting(self, owner: str) -> None:
        """Another front end's turn holds the conversation; this one waits for it."""
        self.model.set_status(status_text("waiting", owner))

    def on_waiting_changed(self, text: str) -> None:
        """The bridge's waiting sentence (`waiting for the turn running in …`, or "" when
        this front end's turn starts or the wait ends)."""
        if text:
            self.model.set_status(text[:1].upper() + text[1:] + "…")
        elif self.model.status is not None and self.model.status.startswith("Waiting for the"):
            self.model.set_status(status_text("thinking") if self._running else None)

    def on_cut_off(self) -> None:
        """The answer hit the output limit."""
        self.model.add_turn_notice(
            "cutoff",
            "The answer reached the model's output limit and stops mid-way. "
            "Ask Koroku to continue.",
        )

    def on_error(self, message: str) -> None:
        """The turn failed: its full text, with Retry, under the failed message."""
        self.model.set_status(None)
        self.model.drop_turn_notices("error")
        self.model.add_turn_notice("error", message.strip() or "The request failed.")

    def on_turn_finished(self, result: TurnResult) -> None:
        """Say how the turn ended when it did not simply answer."""
        self._running = False
        self._tool = None
        self.model.set_status(None)
        if result.cancelled:
            self.model.add_turn_notice("stopped", "You stopped this turn.")
        if result.budget_exhausted:
            self.model.add_turn_notice(
                "budget",
                f"Koroku stopped after {result.tool_calls} tool calls, the most one turn may "
                "make (Settings → Tool calls per turn). Send “continue” to let it go on.",
            )
