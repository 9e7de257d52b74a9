"""What the approval card of a `schedule` call shows: the schedule in words with its next
run, the prompt (or that it is a plain reminder), and the tools it may use unattended."""

from __future__ import annotations

import html
from datetime import UTC, datetime

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel

from koroku_desktop.app.task_wiring import local_zone
from koroku_desktop.domain.json_value import JsonObject
from koroku_desktop.tools.schedule import CallSummary, describe_call
from koroku_desktop.ui.widgets import theme

PROMPT_CHARS = 600


def summary_html(summary: CallSummary) -> str:
    """The summary as the card's rich text."""
    e = html.escape
    lines = [f"<b>{e(summary.title or 'A task')}</b>"]
    if summary.when:
        lines.append(f"<b>When:</b> {e(summary.when)}")
    if summary.reminder:
        lines.append(f"<b>Reminds you:</b> {e(summary.prompt[:PROMPT_CHARS])}")
        lines.append("A plain reminder: a notification, no model call.")
    else:
        prompt = summary.prompt[:PROMPT_CHARS] + ("…" if len(summary.prompt) > PROMPT_CHARS else "")
        lines.append(f"<b>Prompt:</b> {e(prompt).replace(chr(10), '<br>')}")
        tools = ", ".join(summary.tools) if summary.tools else "none (any tool call will ask you)"
        lines.append(f"<b>Tools it may use unattended:</b> {e(tools)}")
        lines.append(f"<b>Budget:</b> {summary.budget} tool calls a run")
    if summary.problem:
        danger = theme.current().danger
        lines.append(
            f"<span style='color:{danger}'>Cannot be scheduled: {e(summary.problem)}</span>"
        )
    return "<br>".join(lines)


def schedule_summary(args: JsonObject, now: datetime | None = None) -> QLabel:
    """A label for the card (the time now, unless given, is only for the words)."""
    summary = describe_call(args, local_zone(), now or datetime.now(UTC))
    label = QLabel(summary_html(summary))
    label.setObjectName("ScheduleSummary")
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.RichText)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label
