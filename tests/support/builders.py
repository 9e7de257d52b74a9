"""Event builders shared by the suites: one spelling of "the person said" and "the model said"."""

from __future__ import annotations

from datetime import datetime

from koroku_desktop.domain.events import MessageEvent, TaskEvent
from koroku_desktop.domain.parts import TextPart


def user(text: str) -> MessageEvent:
    """A message the person typed."""
    return MessageEvent(role="user", origin="person", parts=[TextPart(text=text)])


def model(text: str) -> MessageEvent:
    """A text answer of the model."""
    return MessageEvent(role="model", origin="model", parts=[TextPart(text=text)])


def said(text: str, role: str = "user") -> MessageEvent:
    """`user(text)` or `model(text)` by role (the role as a string, as tables of cases hold)."""
    return user(text) if role == "user" else model(text)


def task_written_as(
    task_id: str, title: str, kind: str, rule: str, tz: str, start: datetime
) -> TaskEvent:
    """A task's `created` event as some writer put it in the log, whether Koroku would have
    accepted that schedule or not (a bad rule, an unknown zone)."""
    return TaskEvent(
        action="created",
        task_id=task_id,
        title=title,
        prompt="x",
        schedule_kind=kind,
        schedule_rule=rule,
        schedule_tz=tz,
        schedule_start=start.isoformat(),
    )
