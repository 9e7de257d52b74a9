"""Built-in `schedule`: the model makes a scheduled task (a reminder, or a prompt that runs on
its own), always asked: its approval card says the schedule in words with the next run, the
prompt, and the tools it may use unattended (`describe_call`).

The tool only shapes the call; the composition root's `ScheduleTask` (ToolContext.schedule)
writes the task through the core's TaskBook with the one clock and the user's time zone.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import ClassVar, Literal

from pydantic import Field, ValidationError

from koroku_desktop.domain.json_value import JsonObject
from koroku_desktop.domain.schedules import Schedule, ScheduleError, check, parse_local
from koroku_desktop.domain.task_words import describe
from koroku_desktop.tools.base import AgentTool, ToolContext, tool_error


@dataclass(frozen=True)
class ScheduleRequest:
    """A task as the model asked for it (`time_zone` "" is the user's own)."""

    title: str
    prompt: str
    reminder: bool
    kind: Literal["once", "rrule", "cron"]
    rule: str
    time_zone: str
    first: str
    allowed_tools: tuple[str, ...]
    tool_budget: int


def build_schedule(request: ScheduleRequest, tz: str, now: datetime) -> Schedule:
    """The request's schedule in zone `tz`: a one-off's rule is its local time; an RRULE
    starts at `first` (local) or now, to the minute. `ScheduleError` when it cannot be used."""
    if request.kind == "once":
        local = parse_local(request.rule, tz)
        schedule = Schedule("once", local.replace(tzinfo=None).isoformat(), tz, now)
    else:
        start = parse_local(request.first, tz) if request.first else now
        start = start.replace(second=0, microsecond=0)
        schedule = Schedule(request.kind, request.rule.strip(), tz, start)
    check(schedule)
    return schedule


class ScheduleTool(AgentTool):
    """Schedule a task that runs on its own later, even with Koroku's window closed: a plain
    reminder (a notification at its time, no model call) or a prompt you will be given at
    each due time, in the task's own conversation. Use it when the user asks to be reminded
    or for something to happen at a time or repeatedly. The user approves each task.
    Times are the user's local wall-clock times unless `time_zone` says otherwise.
    """

    name: ClassVar[str] = "schedule"
    needs_approval: ClassVar[bool] = True

    title: str = Field(description="A short name for the task, e.g. 'Call the garage'.")
    prompt: str = Field(
        description=(
            "What to do at each due time, written as the user's request to you "
            "(for a reminder: the text to remind them of)."
        )
    )
    reminder: bool = Field(
        default=False, description="True for a plain reminder: notify only, no model call."
    )
    kind: Literal["once", "rrule", "cron"] = Field(
        description="once (a single time), rrule (RFC 5545 recurrence) or cron (5 fields)."
    )
    rule: str = Field(
        description=(
            "once: local date-time 'YYYY-MM-DDTHH:MM'; rrule: e.g. "
            "'FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;BYHOUR=8;BYMINUTE=0'; cron: e.g. '0 8 * * 1-5'."
        )
    )
    time_zone: str = Field(default="", description="IANA zone; empty: the user's own.")
    first: str = Field(
        default="",
        description="rrule only: the local date-time the rule starts at (its DTSTART).",
    )
    allowed_tools: list[str] = Field(
        default_factory=list,
        description="Tools the task may use without asking (only what the prompt needs).",
    )
    tool_budget: int = Field(default=10, ge=0, le=100, description="Tool calls one run may make.")

    def request(self) -> ScheduleRequest:
        """The call as a `ScheduleRequest`."""
        return ScheduleRequest(
            title=self.title.strip(),
            prompt=self.prompt.strip(),
            reminder=self.reminder,
            kind=self.kind,
            rule=self.rule.strip(),
            time_zone=self.time_zone.strip(),
            first=self.first.strip(),
            allowed_tools=tuple(dict.fromkeys(t.strip() for t in self.allowed_tools if t.strip())),
            tool_budget=self.tool_budget,
        )

    async def execute(self, ctx: ToolContext) -> JsonObject:
        """Make the task through the wired writer."""
        if ctx.schedule is None:
            return tool_error("scheduled tasks are not available here")
        return await ctx.schedule(self.request())

    @classmethod
    def approval_for(cls, args: JsonObject, workspace: Path) -> str:
        """A task runs unattended later: asked every time, never granted for good."""
        return "always_ask"


@dataclass(frozen=True)
class CallSummary:
    """What an approval card says about a `schedule` call."""

    title: str
    when: str
    prompt: str
    reminder: bool
    tools: tuple[str, ...]
    budget: int
    problem: str = ""


def describe_call(args: JsonObject, default_tz: str, now: datetime) -> CallSummary:
    """The call in words for its approval card: "every Monday–Friday at 08:00,
    Europe/Berlin; next: tomorrow 08:00", the prompt and the tools; `problem` when the
    arguments or the schedule cannot be used (the card still shows what was asked)."""
    try:
        request = ScheduleTool.model_validate(args).request()
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "arguments"
        return CallSummary(
            str(args.get("title", "")),
            "",
            str(args.get("prompt", "")),
            False,
            (),
            0,
            f"{where}: {first['msg']}",
        )
    tz = request.time_zone or default_tz
    try:
        words = describe(build_schedule(request, tz, now), now)
        problem = ""
    except (ScheduleError, ValueError) as exc:
        words, problem = f"{request.kind} “{request.rule}”", str(exc)
    return CallSummary(
        request.title,
        words,
        request.prompt,
        request.reminder,
        request.allowed_tools,
        request.tool_budget,
        problem,
    )
