"""Schedules in words, both ways: what a schedule says ("every Monday–Friday at 08:00,
Europe/Berlin; next: tomorrow 08:00") and the few plain phrases `--every` takes
("weekdays 08:00", "daily 7:30", "mondays and thursdays 18:00", "every 2 hours") as the RRULE
they mean. A phrase it does not know is refused, never guessed. Pure."""

from __future__ import annotations

import re
from datetime import datetime

from koroku_desktop.domain.schedules import Schedule, ScheduleError, next_due, zone

DAYS = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")
DAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_UNITS = {"MINUTELY": "minute", "HOURLY": "hour", "DAILY": "day", "WEEKLY": "week"}
_UNITS |= {"MONTHLY": "month", "YEARLY": "year"}


def _parts(rule: str) -> dict[str, str]:
    text = rule.strip()
    text = text[6:] if text.upper().startswith("RRULE:") else text
    found: dict[str, str] = {}
    for item in text.split(";"):
        key, _, value = item.partition("=")
        found[key.strip().upper()] = value.strip().upper()
    return found


def day_list(codes: list[str]) -> str:
    """`MO,TU,WE,TH,FR` -> `Monday–Friday`; `MO,TH` -> `Monday and Thursday`."""
    indexes = sorted(DAYS.index(c) for c in codes)
    if len(indexes) > 2 and indexes == list(range(indexes[0], indexes[-1] + 1)):
        return f"{DAY_NAMES[indexes[0]]}–{DAY_NAMES[indexes[-1]]}"
    names = [DAY_NAMES[i] for i in indexes]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _times(parts: dict[str, str], start: datetime) -> str:
    hours = parts.get("BYHOUR", str(start.hour)).split(",")
    minutes = parts.get("BYMINUTE", str(start.minute)).split(",")
    if len(hours) * len(minutes) > 4:
        return ""
    return " and ".join(f"{int(h):02d}:{int(m):02d}" for h in hours for m in minutes)


def rrule_words(rule: str, start: datetime) -> str:
    """An RRULE in words (`start` in the schedule's zone gives the time of day it takes from
    DTSTART); a rule with parts these words do not cover is shown as its text."""
    parts = _parts(rule)
    freq = parts.get("FREQ", "")
    known = {"FREQ", "INTERVAL", "BYDAY", "BYHOUR", "BYMINUTE", "BYSECOND", "BYMONTHDAY"}
    known |= {"COUNT", "UNTIL"}
    days = [d for d in parts.get("BYDAY", "").split(",") if d]
    if freq not in _UNITS or set(parts) - known or any(d not in DAYS for d in days):
        return f"by the rule {rule.strip()}"
    try:
        interval = int(parts.get("INTERVAL", "1"))
        at = _times(parts, start)
    except ValueError:
        return f"by the rule {rule.strip()}"
    unit = _UNITS[freq]
    every = f"every {unit}" if interval == 1 else f"every {interval} {unit}s"
    if days and freq in ("DAILY", "WEEKLY") and interval == 1:
        every = f"every {day_list(days)}"
    elif days:
        every += f" on {day_list(days)}"
    elif freq == "WEEKLY":
        every += f" on {DAY_NAMES[start.weekday()]}"
    if freq == "MONTHLY":
        every += f" on day {parts.get('BYMONTHDAY', str(start.day))}"
    if freq == "YEARLY":
        every += f" on {start.day} {start:%B}"
    if freq in ("MINUTELY", "HOURLY"):
        at = ""
    words = every + (f" at {at}" if at else "")
    if "COUNT" in parts:
        words += f", {parts['COUNT']} times"
    if "UNTIL" in parts:
        words += f", until {parts['UNTIL'][:8]}"
    return words


def when_words(moment: datetime, now: datetime) -> str:
    """A time relative to `now`, both in the zone of `moment`: `today 17:00`, `tomorrow 08:00`,
    `Friday 08:00`, `Tue 12 Jan 08:00`, `Tue 12 Jan 2027 08:00`."""
    local_now = now.astimezone(moment.tzinfo)
    days = (moment.date() - local_now.date()).days
    clock = f"{moment:%H:%M}"
    if days == 0:
        return f"today {clock}"
    if days == 1:
        return f"tomorrow {clock}"
    if 1 < days < 7:
        return f"{moment:%A} {clock}"
    if moment.year == local_now.year:
        return f"{moment:%a} {moment.day} {moment:%b} {clock}"
    return f"{moment:%a} {moment.day} {moment:%b %Y} {clock}"


def _cron_words(expression: str) -> str:
    from cronsim import CronSim

    try:
        text = CronSim(expression, datetime(2000, 1, 1)).explain()
    except Exception:  # noqa: BLE001 — explain's own gaps: the expression is shown as it is
        return f"by cron “{expression}”"
    return text[:1].lower() + text[1:] + f" (cron “{expression}”)"


def describe(schedule: Schedule, now: datetime) -> str:
    """The schedule in words with its next time: `every Monday–Friday at 08:00,
    Europe/Berlin; next: tomorrow 08:00`. A schedule that cannot be computed says why."""
    try:
        tz = zone(schedule.tz)
        start = schedule.start.astimezone(tz)
        if schedule.kind == "once":
            from koroku_desktop.domain.schedules import parse_local

            at = parse_local(schedule.rule, schedule.tz)
            done = "" if next_due(schedule, now) else " (passed)"
            return f"once, {when_words(at, now)}{done}, {schedule.tz}"
        elif schedule.kind == "rrule":
            what = rrule_words(schedule.rule, start)
        else:
            what = _cron_words(schedule.rule)
        upcoming = next_due(schedule, now)
    except ScheduleError as exc:
        return f"cannot be computed: {exc}"
    following = when_words(upcoming.astimezone(tz), now) if upcoming else "none (finished)"
    return f"{what}, {schedule.tz}; next: {following}"


_DAY_WORDS = {name.lower(): code for name, code in zip(DAY_NAMES, DAYS, strict=True)}
_DAY_WORDS |= {name[:3].lower(): code for name, code in zip(DAY_NAMES, DAYS, strict=True)}
_GROUPS = {
    "day": DAYS,
    "daily": DAYS,
    "weekday": DAYS[:5],
    "weekdays": DAYS[:5],
    "weekend": DAYS[5:],
    "weekends": DAYS[5:],
}
_TIME = re.compile(r"^(?:at\s+)?(\d{1,2})(?::(\d{2}))?\s*(am|pm)?$")
_INTERVAL = re.compile(r"^(?:every\s+)?(\d+)?\s*(minute|hour)s?$")


def _clock(text: str) -> tuple[int, int]:
    match = _TIME.match(text.strip())
    if match is None:
        raise ScheduleError(f"“{text}” is not a time of day (08:00, 7:30, 6pm)")
    hour, minute = int(match.group(1)), int(match.group(2) or 0)
    if match.group(3) == "pm" and hour < 12:
        hour += 12
    elif match.group(3) == "am" and hour == 12:
        hour = 0
    if hour > 23 or minute > 59:
        raise ScheduleError(f"“{text}” is not a time of day")
    return hour, minute


def every_to_rrule(text: str) -> str:
    """`--every` as an RRULE: RRULE text as it is, or one of a few phrases: `daily 08:00`,
    `weekdays 8:00`, `weekends 10am`, `mondays and thursdays 18:00`, `every 2 hours`,
    `hourly`, `every 15 minutes`. Raises `ScheduleError` for anything else."""
    words = " ".join(text.lower().replace(",", " ").split())
    if words.upper().startswith(("FREQ=", "RRULE:")):
        return text.strip()
    if words in ("hourly", "every hour"):
        return "FREQ=HOURLY;BYMINUTE=0"
    interval = _INTERVAL.match(words)
    if interval is not None:
        count = int(interval.group(1) or 1)
        freq = "MINUTELY" if interval.group(2) == "minute" else "HOURLY"
        on_hour = "" if freq == "MINUTELY" else ";BYMINUTE=0"
        return f"FREQ={freq};INTERVAL={count}{on_hour}"
    tokens = words.removeprefix("every ").split()
    days: list[str] = []
    rest: list[str] = []
    for token in tokens:
        bare = token.removesuffix("s") if token not in _GROUPS else token
        if token in _GROUPS:
            days += _GROUPS[token]
        elif bare in _DAY_WORDS:
            days.append(_DAY_WORDS[bare])
        elif token in ("and", "on") and not rest:
            continue
        else:
            rest.append(token)
    if not days or not rest:
        raise ScheduleError(
            f"“{text}” is not a schedule Koroku reads (say `weekdays 08:00`, `daily 7:30`, "
            "`mondays 18:00`, `every 2 hours`, or give an RRULE or --cron)"
        )
    hour, minute = _clock(" ".join(rest))
    unique = [d for d in DAYS if d in days]
    by_day = "" if len(unique) == 7 else ";BYDAY=" + ",".join(unique)
    freq = "DAILY" if not by_day else "WEEKLY"
    return f"FREQ={freq}{by_day};BYHOUR={hour};BYMINUTE={minute};BYSECOND=0"
