"""Runs of consecutive calls of the same tool, shown as one card (`read_file ×15`) that opens
into the individual cards. Pure Python over chat items; the model keeps the marks current."""

from __future__ import annotations

from koroku_desktop.ui.chat.items import ChatItem, ToolStatus


def run_status(members: list[ChatItem]) -> ToolStatus:
    """A run's status: failed if any failed, running/pending while any is, else ok."""
    statuses = {m.status for m in members}
    for status in ("error", "running", "pending"):
        if status in statuses:
            return status
    return "ok"


def regroup(items: list[ChatItem], start: int = 0) -> list[ChatItem]:
    """Mark runs from row `start` on (it backs up to the run that row belongs to): the head
    carries the run's length and status, the others are folded unless the head is open.
    Returns the items whose marks changed."""
    while start > 0 and items[start - 1].kind == "tool":
        start -= 1
    changed: list[ChatItem] = []
    row = start
    while row < len(items):
        item = items[row]
        if item.kind != "tool":
            row += 1
            continue
        end = row + 1
        while end < len(items) and items[end].kind == "tool" and items[end].tool == item.tool:
            end += 1
        members = items[row:end]
        head_marks = (len(members), run_status(members) if len(members) > 1 else item.status)
        if (item.run, item.run_state, item.folded) != (*head_marks, False):
            item.run, item.run_state, item.folded = *head_marks, False
            changed.append(item)
        for member in members[1:]:
            folded = not item.run_open
            if (member.run, member.folded) != (1, folded):
                member.run, member.folded = 1, folded
                changed.append(member)
        row = end
    for item in changed:
        item.touch()
    return changed
