"""Inline approvals: a tool call that needs the person's yes waits as a `PendingApproval`
whose future an approval card resolves, so approving is never modal and the agent's turn
simply awaits the answer. `ApprovalDesk` keeps the ones not answered yet; the bridge (the
agent's `Approver`) hands each one to the UI through its signals."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field

from koroku_desktop.agent.ports import ApprovalDecision, ApprovalRequest


@dataclass(eq=False)
class PendingApproval:
    """A tool call waiting for the user; the approval card resolves `future`."""

    request: ApprovalRequest
    future: asyncio.Future[ApprovalDecision] = field(repr=False)
    owner: object = field(default=None, repr=False)
    """Whose turn asks (the bridge: the agent of its conversation)."""

    @property
    def done(self) -> bool:
        """Answered or abandoned."""
        return self.future.done()


class ApprovalDesk:
    """The approvals asked for and not answered yet; says when one opens and when it closes."""

    def __init__(
        self,
        opened: Callable[[PendingApproval], None],
        closed: Callable[[PendingApproval], None],
    ) -> None:
        self._opened, self._closed = opened, closed
        self._pending: list[PendingApproval] = []

    @property
    def pending(self) -> list[PendingApproval]:
        """Approvals not answered yet."""
        return [p for p in self._pending if not p.done]

    async def ask(self, request: ApprovalRequest, owner: object = None) -> ApprovalDecision:
        """Open an approval for `request` (asked by `owner`) and wait for the answer."""
        future: asyncio.Future[ApprovalDecision] = asyncio.get_running_loop().create_future()
        pending = PendingApproval(request, future, owner)
        self._pending.append(pending)
        future.add_done_callback(lambda _f: self._close(pending))
        self._opened(pending)
        return await future

    def _close(self, pending: PendingApproval) -> None:
        if pending in self._pending:
            self._pending.remove(pending)
        self._closed(pending)

    def abandon_all(self, owner: object = None) -> None:
        """Cancel every approval still waiting (the app quits), or `owner`'s (its turn is
        cancelled)."""
        for pending in self.pending:
            if owner is None or pending.owner is owner:
                pending.future.cancel()
