"""`koroku tasks`: make, list, pause, resume, run and remove scheduled tasks.

Every change is one `task` event in the log. A task is named by its id, an id prefix (4+
characters) or its title. `add` takes one schedule (`--at`, `--every`, `--cron`) in a time
zone (`--tz`, the machine's by default) and a prompt (`--prompt`, a turn of the model) or a
reminder (`--remind`, a notification only). `run` runs one now; `run-due` (the systemd
timer's command, cli/tasks_due.py) runs what is due.
"""

from __future__ import annotations

import argparse
import json
import re
from datetime import datetime, timedelta
from typing import Any

from koroku_desktop.cli.actions import add_ref_actions, json_on_every_action, print_list
from koroku_desktop.cli.refusal import refused
from koroku_desktop.domain.errors import KorokuError

RUN_DUE_HELP = "run the tasks that are due (what the systemd timer runs every minute)"
REF_ACTIONS = (
    ("pause", "stop running it until resumed"),
    ("resume", "run it again from its next time"),
    ("remove", "remove it (its history stays in the log)"),
    ("run", "run it now"),
)
"""The actions on one task, each with its `--help` line."""


def register(sub: Any) -> None:
    """Add `koroku tasks` and its actions."""
    tasks = sub.add_parser("tasks", help="scheduled tasks: add, list, pause, resume, run...")
    actions = tasks.add_subparsers(dest="action", parser_class=type(tasks))
    tasks.set_defaults(handler=cmd_tasks, action=None, json=False)
    add = actions.add_parser("add", help="make a task")
    when = add.add_mutually_exclusive_group(required=True)
    when.add_argument("--at", metavar="WHEN", help="once: `2026-12-24 17:00`, or `17:00` (next)")
    when.add_argument(
        "--every",
        metavar="RULE",
        help="repeating: an RRULE (`FREQ=DAILY;BYHOUR=8`) or `weekdays 08:00`, `daily 7:30`, "
        "`mondays and thursdays 18:00`, `every 2 hours`",
    )
    when.add_argument("--cron", metavar="EXPR", help="repeating: a cron expression (5 fields)")
    what = add.add_mutually_exclusive_group(required=True)
    what.add_argument("--prompt", metavar="TEXT", help="what to ask the model at each time")
    what.add_argument("--remind", metavar="TEXT", help="a reminder: notify only, no model call")
    add.add_argument("--tz", metavar="ZONE", help="an IANA zone (default: this machine's)")
    add.add_argument("--title", help="its name (default: the start of the prompt)")
    add.add_argument(
        "--allow-tool",
        metavar="NAME",
        action="append",
        default=[],
        help="a tool it may use unattended (repeatable); others wait for approval",
    )
    add.add_argument("--budget", type=int, metavar="N", help="tool calls a run may make")
    add.add_argument("-c", "--conversation", metavar="NAME|ID", help="where its runs go")
    actions.add_parser("list", help="the tasks, their schedules, next runs and last outcomes")
    add_ref_actions(
        actions, REF_ACTIONS, metavar="NAME|ID", ref_help="an id, an id prefix or the title"
    )
    actions.add_parser("run-due", help=RUN_DUE_HELP)
    json_on_every_action(actions, cmd_tasks)


_CLOCK_ONLY = re.compile(r"^(\d{1,2}):(\d{2})$")


def local_time(text: str, tz: str, now: datetime) -> str:
    """`--at` as an ISO local date-time: a full date and time, or a time of day (the next
    one: today, or tomorrow when it has passed)."""
    from koroku_desktop.domain.schedules import ScheduleError, zone

    words = text.strip().replace(" ", "T", 1)
    match = _CLOCK_ONLY.match(text.strip())
    if match is not None:
        hour, minute = int(match.group(1)), int(match.group(2))
        if hour > 23 or minute > 59:
            raise ScheduleError(f"“{text}” is not a time of day")
        local_now = now.astimezone(zone(tz))
        moment = local_now.replace(hour=hour, minute=minute, second=0, microsecond=0)
        if moment <= local_now:
            moment += timedelta(days=1)
        return moment.replace(tzinfo=None).isoformat(timespec="minutes")
    try:
        parsed = datetime.fromisoformat(words)
    except ValueError as exc:
        raise ScheduleError(f"“{text}” is not a time (`2026-12-24 17:00` or `17:00`)") from exc
    if parsed.tzinfo is not None:
        raise ScheduleError(f"“{text}” carries an offset; give a local time and --tz")
    return parsed.isoformat(timespec="minutes")


def schedule_of(args: argparse.Namespace, tz: str, now: datetime) -> Any:
    """The `Schedule` that `--at`, `--every` or `--cron` says, in `tz`."""
    from koroku_desktop.domain.schedules import Schedule, parse_local, zone
    from koroku_desktop.domain.task_words import every_to_rrule

    start = now.astimezone(zone(tz)).replace(second=0, microsecond=0)
    if args.at is not None:
        rule = local_time(args.at, tz, now)
        return Schedule("once", rule, tz, parse_local(rule, tz))
    if args.every is not None:
        return Schedule("rrule", every_to_rrule(args.every), tz, start)
    return Schedule("cron", " ".join(args.cron.split()), tz, start)


def task_json(task: Any, now: datetime) -> dict[str, Any]:
    """One task as `--json` gives it."""
    from koroku_desktop.domain.tasks import describe

    last = task.last_run
    return {
        "id": task.id,
        "title": task.title,
        "prompt": task.prompt,
        "reminder": task.reminder,
        "schedule": {
            "kind": task.schedule.kind,
            "rule": task.schedule.rule,
            "tz": task.schedule.tz,
            "start": task.schedule.start.isoformat(),
        },
        "in_words": describe(task.schedule, now),
        "next_due": task.next_due.isoformat() if task.next_due else None,
        "allowed_tools": list(task.allowed_tools),
        "tool_budget": task.tool_budget,
        "conversation_id": task.conversation_id,
        "paused": task.paused,
        "removed": task.removed,
        "device": task.device,
        "problem": task.problem or None,
        "last_run": None
        if last is None
        else {
            "due": last.due.isoformat(),
            "outcome": last.outcome,
            "late": last.late,
            "turn_id": last.turn_id,
            "detail": last.detail,
        },
    }


def list_lines(task: Any, now: datetime) -> list[str]:
    """A task as `koroku tasks list` shows it: a title line, then its schedule in words and
    its last outcome."""
    from koroku_desktop.domain.schedules import ScheduleError, zone
    from koroku_desktop.domain.task_words import when_words
    from koroku_desktop.domain.tasks import describe

    kind = "reminder" if task.reminder else "prompt"
    flags = " (paused)" if task.paused else " (removed)" if task.removed else ""
    lines = [f"{task.short_id}  {task.title}  [{kind}]{flags}"]
    if task.problem:
        lines.append(f"    ⚠ cannot run: {task.problem}")
    elif task.paused or task.removed:
        lines.append(f"    {describe(task.schedule, now).split('; next:')[0]}; not running")
    else:
        lines.append(f"    {describe(task.schedule, now)}")
    last = task.last_run
    if last is not None:
        try:
            local = last.due.astimezone(zone(task.schedule.tz))
        except ScheduleError:  # a task whose zone is bad: its runs in UTC
            local = last.due
        at = when_words(local, now)
        late = ", late" if last.late else ""
        detail = f": {last.detail.splitlines()[0][:80]}" if last.detail else ""
        lines.append(f"    last run ({at}{late}): {last.outcome}{detail}")
    if task.allowed_tools:
        lines.append(f"    may use: {', '.join(task.allowed_tools)}")
    return lines


def cmd_tasks(args: argparse.Namespace) -> int:
    """Run one `koroku tasks` action (see the module)."""
    from koroku_desktop.app.task_peek import task_clock

    try:
        clock = task_clock()
        if args.action in ("run", "run-due"):
            from koroku_desktop.cli.tasks_due import run_due, run_now

            return run_now(args.ref, clock) if args.action == "run" else run_due(clock)
        return _book_action(args, clock)
    except KorokuError as exc:  # a bad schedule, an unknown task, a database problem
        return refused("tasks", exc, 2 if args.action not in (None, "list") else 1)


def _book_action(args: argparse.Namespace, clock: Any) -> int:
    from koroku_desktop.app.config import default_paths
    from koroku_desktop.app.task_wiring import open_task_book

    action = args.action or "list"
    now = clock()
    with open_task_book(default_paths(), clock, read_only=action == "list") as book:
        if action == "list":
            return print_list(
                book.list(),
                args.json,
                lambda task: task_json(task, now),
                lambda task: "\n".join(list_lines(task, now)),
                "No tasks yet (`koroku tasks add --every 'weekdays 08:00' --prompt ...`).",
            )
        if action == "add":
            task = _add(book, args, now)
            return _done(args, task, now, f"scheduled {task.title} ({task.short_id})")
        change = {"pause": book.pause, "resume": book.resume, "remove": book.remove}[action]
        task = change(args.ref)
        past = {"pause": "paused", "resume": "resumed", "remove": "removed"}[action]
        return _done(args, task, now, f"{past} {task.title} ({task.short_id})")


def _add(book: Any, args: argparse.Namespace, now: datetime) -> Any:
    from koroku_desktop.agent.conversations import ConversationBook
    from koroku_desktop.app.task_wiring import local_zone

    tz = args.tz or local_zone()
    schedule = schedule_of(args, tz, now)
    conversation = None
    if args.conversation:
        conversation = ConversationBook(book.log).find(args.conversation).id
    extra = {} if args.budget is None else {"tool_budget": args.budget}
    return book.create(
        schedule,
        prompt=args.prompt if args.prompt is not None else args.remind,
        title=args.title,
        reminder=args.remind is not None,
        allowed_tools=args.allow_tool,
        conversation_id=conversation,
        **extra,
    )


def _done(args: argparse.Namespace, task: Any, now: datetime, line: str) -> int:
    if args.json:
        print(json.dumps(task_json(task, now), ensure_ascii=False))
    else:
        print(line)
        print("\n".join(list_lines(task, now)[1:]))
    return 0
