"""The rows of a turn while it runs: the streamed answer, the status line, running tool
cards and how the turn ended (a mixin of `MessageModel`, kept apart to keep each module
small).

None of these rows comes from the log yet: the streamed row is replaced by the reply's
event when it lands, a card gets its result before its event does (by the same rule as a
reload), and the status row stays last until the turn ends.
"""

from __future__ import annotations

from koroku_desktop.domain.parts import FunctionCallPart, FunctionResponsePart
from koroku_desktop.render.fold import tool_result
from koroku_desktop.ui.chat.items import ChatItem, ToolCardIndex


class RunningTurnRows:
    """Live rows of the running turn (mixed into `MessageModel`)."""

    _items: list[ChatItem]
    _cards: ToolCardIndex
    _streaming: ChatItem | None
    _status: ChatItem | None

    def _append(self, items: list[ChatItem]) -> None:
        raise NotImplementedError

    def _remove(self, item: ChatItem) -> None:
        raise NotImplementedError

    def _changed(self, item: ChatItem) -> None:
        raise NotImplementedError

    def append_delta(self, piece: str) -> None:
        """Stream visible text into the current answer row (created on the first piece)."""
        if self._streaming is None:
            self._streaming = ChatItem(kind="model", text=piece, streaming=True)
            self._append([self._streaming])
            return
        self._streaming.text += piece
        self._streaming.touch()
        self._changed(self._streaming)

    def end_stream(self) -> None:
        """Drop a streamed row no event replaced (the request failed mid-answer)."""
        if self._streaming is not None:
            self._remove(self._streaming)
            self._streaming = None

    def tool_started(self, call: FunctionCallPart) -> None:
        """Show a card as running."""
        item = self._cards.find_open(call)
        if item is not None:
            item.status = "running"
            item.touch()
            self._changed(item)

    def tool_progress(self, tool: str, text: str) -> bool:
        """Show a running card's progress (an MCP server's report); False if none runs."""
        item = self._cards.find_open(FunctionCallPart(name=tool, args={}))
        if item is None or item.status != "running":
            return False
        if item.text != text:
            item.text = text
            item.touch()
            self._changed(item)
        return True

    def tool_finished(self, call: FunctionCallPart, part: FunctionResponsePart) -> None:
        """Show a card's result (✓ or ✗, by the same rule as a reload) before the event lands."""
        item = self._cards.resolve(tool_result(part))
        if item is not None:
            self._changed(item)

    def set_status(self, text: str | None) -> None:
        """Show what the running turn does now in the last row (None: remove it)."""
        if text is None:
            if self._status is not None:
                self._remove(self._status)
                self._status = None
            return
        if self._status is None:
            self._append([ChatItem(kind="status", text=text)])
            self._status = self._items[-1]
            return
        if self._status.text != text:
            self._status.text = text
            self._status.touch()
            self._changed(self._status)

    @property
    def status(self) -> str | None:
        """The live status line shown, if any."""
        return self._status.text if self._status is not None else None

    def add_turn_notice(self, kind: str, text: str) -> ChatItem:
        """Say how a turn ended (stopped, failed, budget, cut off) under its last row."""
        item = ChatItem(kind="turn_notice", tool=kind, text=text)
        self._append([item])
        return item

    def drop_turn_notices(self, kind: str) -> None:
        """Remove the notices of one kind (a failure once its retry starts)."""
        for item in [i for i in self._items if i.kind == "turn_notice" and i.tool == kind]:
            self._remove(item)
