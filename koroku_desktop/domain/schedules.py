"""When a task is due: one-off times, RFC 5545 rules and cron expressions, in a time zone.

Pure: every function takes the times it needs. Wall-clock times stay wall-clock across
daylight-saving changes: "every day at 08:00, Europe/Berlin" is 07:00 UTC in winter and
06:00 UTC in summer. A local time that does not exist (the hour skipped in spring) moves
forward: an RFC 5545 rule or a one-off time by the length of the gap (RFC 5545 §3.3.5:
read with the offset before the gap, so 02:30 is 03:30), a cron expression to the first
minute after the gap (as Debian's cron does; `cronsim`). A local time that happens twice
(the hour repeated in autumn) runs once, at its first occurrence.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from koroku_desktop.domain.errors import RefusedError

if TYPE_CHECKING:
    from dateutil.rrule import rrule

ScheduleKind = Literal["once", "rrule", "cron"]
SCHEDULE_KINDS: tuple[ScheduleKind, ...] = ("once", "rrule", "cron")
_SLACK = timedelta(hours=3)
"""More than any daylight-saving shift: how far around a time wall-clock candidates are read."""
_SCAN = 200_000
"""At most this many occurrences are stepped through in one call (a guard, not a limit a real
schedule reaches: a year of minutes is about half of it)."""


class ScheduleError(RefusedError, ValueError):
    """A schedule that cannot be used: a bad rule, an unknown time zone, a naive start."""


@dataclass(frozen=True, slots=True)
class Schedule:
    """When a task runs. `rule` is an ISO local date-time (`once`), the text of an RFC 5545
    RRULE (`rrule`, with or without the `RRULE:` prefix) or a cron expression of five fields
    (`cron`); `tz` is an IANA zone name; `start` (aware) is the rule's DTSTART: no
    occurrence is before it, and an RRULE takes its time of day from it unless it says one."""

    kind: ScheduleKind
    rule: str
    tz: str
    start: datetime


def zone(name: str) -> ZoneInfo:
    """The IANA zone `name`; `ScheduleError` for one this machine does not know."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ScheduleError(f"unknown time zone “{name}” (an IANA name: Europe/Berlin)") from exc


def parse_local(text: str, tz: str) -> datetime:
    """An ISO local date-time (`2026-12-03T17:00`) in `tz`, aware (an offset in the text is
    refused: the zone says it). A time skipped by a daylight-saving change reads with the
    offset before the gap; a repeated one as its first occurrence."""
    try:
        local = datetime.fromisoformat(text.strip())
    except ValueError as exc:
        raise ScheduleError(f"“{text}” is not a date and time (2026-12-03T17:00)") from exc
    if local.tzinfo is not None:
        raise ScheduleError(f"“{text}” carries an offset; give a local time and a zone")
    return local.replace(tzinfo=zone(tz), fold=0)


def to_utc(moment: datetime) -> datetime:
    """An aware time in UTC (a wall-clock time in the gap moves forward by the gap)."""
    return moment.astimezone(UTC)


def _rrule_text(rule: str) -> str:
    text = rule.strip()
    if text.upper().startswith("RRULE:"):
        text = text[6:]
    if not text or "\n" in text or ":" in text:
        raise ScheduleError(f"“{rule}” is not one RRULE (FREQ=DAILY;BYHOUR=8;BYMINUTE=0)")
    return text


def _rrule(schedule: Schedule) -> rrule:
    from dateutil.rrule import rrule, rrulestr

    tz = zone(schedule.tz)
    text = _rrule_text(schedule.rule)
    start = schedule.start.astimezone(tz).replace(microsecond=0)
    try:
        parsed = rrulestr(text, dtstart=start, cache=False)
    except (ValueError, TypeError, KeyError, IndexError) as exc:
        raise ScheduleError(f"bad RRULE “{schedule.rule}”: {exc}") from exc
    if not isinstance(parsed, rrule):
        raise ScheduleError(f"“{schedule.rule}” is not one RRULE")
    if "FREQ=SECONDLY" in text.upper().replace(" ", ""):
        raise ScheduleError("a task runs at most once a minute (FREQ=SECONDLY is refused)")
    return parsed


def _cron(expression: str, local: datetime, *, reverse: bool = False) -> Iterator[datetime]:
    from cronsim import CronSim, CronSimError

    if len(expression.split()) != 5:
        raise ScheduleError(f"“{expression}” is not a cron expression of five fields")
    try:
        return iter(CronSim(expression, local, reverse=reverse))
    except CronSimError as exc:
        raise ScheduleError(f"bad cron expression “{expression}”: {exc}") from exc


def check(schedule: Schedule) -> None:
    """Raise `ScheduleError` unless `schedule` can be computed (a rule, a zone, a start)."""
    if schedule.kind not in SCHEDULE_KINDS:
        raise ScheduleError(f"unknown schedule kind “{schedule.kind}”")
    if schedule.start.tzinfo is None:
        raise ScheduleError("a schedule's start must carry its zone")
    zone(schedule.tz)
    if schedule.kind == "once":
        parse_local(schedule.rule, schedule.tz)
    elif schedule.kind == "rrule":
        _rrule(schedule)
    else:
        _cron(schedule.rule, schedule.start.astimezone(zone(schedule.tz)))


def occurrences(schedule: Schedule, after: datetime) -> Iterator[datetime]:
    """Every time (aware, UTC) the schedule is due strictly after `after` and not before its
    start, in order, each once. Raises `ScheduleError` for a schedule that cannot be used."""
    tz = zone(schedule.tz)
    floor = max(after, schedule.start - timedelta(microseconds=1))
    if schedule.kind == "once":
        moment = to_utc(parse_local(schedule.rule, schedule.tz))
        if moment > floor:
            yield moment
        return
    if schedule.kind == "rrule":
        rule = _rrule(schedule)
        local = floor.astimezone(tz) - _SLACK  # wall-clock arithmetic: a little early
        candidates: Iterator[datetime] = rule.xafter(local.replace(tzinfo=tz))
    elif schedule.kind == "cron":
        candidates = _cron(schedule.rule, (floor - _SLACK).astimezone(tz))
    else:
        raise ScheduleError(f"unknown schedule kind “{schedule.kind}”")
    last = floor
    for scanned, candidate in enumerate(candidates):
        moment = to_utc(candidate.replace(fold=0))
        if moment > last:
            yield moment
            last = moment
        elif scanned > _SCAN:
            return


def next_due(schedule: Schedule, after: datetime) -> datetime | None:
    """The first time (aware, UTC) the schedule is due strictly after `after`; None when it
    has no more (a one-off that has passed, a rule's COUNT or UNTIL reached)."""
    return next(occurrences(schedule, after), None)


def last_due(schedule: Schedule, after: datetime, until: datetime) -> tuple[datetime, bool] | None:
    """The latest time the schedule was due in (after, until], and whether it was due there
    earlier too (a run missed while the machine slept or was off is one late run, of the
    latest of them); None when it was not due there."""
    first = next_due(schedule, after)
    if first is None or first > until:
        return None
    if schedule.kind == "cron" and until - first > timedelta(days=1):
        # a long gap: step back from `until` rather than through every missed time
        tz = zone(schedule.tz)
        for candidate in _cron(schedule.rule, (until + _SLACK).astimezone(tz), reverse=True):
            moment = to_utc(candidate.replace(fold=0))
            if moment <= until:
                return (moment, moment > first) if moment >= first else (first, False)
        return first, False
    found = first
    for moment in occurrences(schedule, first):
        if moment > until:
            break
        found = moment
    return found, found > first
