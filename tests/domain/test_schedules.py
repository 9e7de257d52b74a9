"""Next due times against python-dateutil itself, for a year of rules across the
daylight-saving changes of Europe/Berlin and America/New_York (2026: 29 Mar / 25 Oct and
8 Mar / 1 Nov), plus cron expressions (cronsim) and one-off times, checked by hand."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from dateutil.rrule import rrulestr

from koroku_desktop.domain.schedules import Schedule, ScheduleError, check, last_due, next_due
from koroku_desktop.domain.task_words import describe, every_to_rrule

ZONES = ("Europe/Berlin", "America/New_York")
RULES = (
    "FREQ=DAILY",  # at DTSTART's 02:30: inside both spring gaps and both autumn repeats
    "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;BYHOUR=8;BYMINUTE=0;BYSECOND=0",
    "FREQ=DAILY;BYHOUR=1,2,3;BYMINUTE=0,30;BYSECOND=0",
    "FREQ=HOURLY;INTERVAL=5",
    "FREQ=MONTHLY;BYMONTHDAY=31;BYHOUR=2;BYMINUTE=15",
    "FREQ=WEEKLY;INTERVAL=2;BYDAY=SU;BYHOUR=2;BYMINUTE=45",
    "FREQ=YEARLY;BYMONTH=3,10,11;BYMONTHDAY=8,25,29,1;BYHOUR=2;BYMINUTE=30",
    "FREQ=MINUTELY;INTERVAL=97",
)


def reference(rule: str, start: datetime, end: datetime) -> list[datetime]:
    """dateutil's own wall-clock occurrences, each read as RFC 5545 says (a skipped time
    with the offset before the gap, a repeated one as its first), in UTC, each once."""
    occurrences = rrulestr(rule, dtstart=start).between(start, end, inc=True)
    return sorted({o.astimezone(UTC) for o in occurrences if o.astimezone(UTC) <= end})


@pytest.mark.parametrize("tz", ZONES)
@pytest.mark.parametrize("rule", RULES)
def test_a_year_of_next_due_matches_dateutil(rule: str, tz: str) -> None:
    start = datetime(2026, 1, 1, 2, 30, tzinfo=ZoneInfo(tz))
    end = start.astimezone(UTC) + timedelta(days=366)
    schedule = Schedule("rrule", rule, tz, start)
    expected = reference(rule, start, end)
    assert len(expected) >= 5
    if len(expected) < 2000:  # every time, stepping from one to the next
        got: list[datetime] = []
        moment = next_due(schedule, start.astimezone(UTC) - timedelta(seconds=1))
        while moment is not None and moment <= end:
            got.append(moment)
            moment = next_due(schedule, moment)
        assert got == expected
    else:  # stepping through each is quadratic in dateutil: a sample, each from just before
        for index in range(0, len(expected) - 1, 37):
            assert next_due(schedule, expected[index] - timedelta(seconds=1)) == expected[index]
            assert next_due(schedule, expected[index]) == expected[index + 1]
    assert all(m.tzinfo is UTC for m in expected[:1])


def test_wall_clock_stays_wall_clock_and_gaps_move_forward() -> None:
    berlin = ZoneInfo("Europe/Berlin")
    daily = Schedule(
        "rrule", "FREQ=DAILY", "Europe/Berlin", datetime(2026, 3, 1, 2, 30, tzinfo=berlin)
    )
    before_gap = datetime(2026, 3, 28, 12, tzinfo=UTC)
    gap_day = next_due(daily, before_gap)
    assert gap_day == datetime(2026, 3, 29, 1, 30, tzinfo=UTC)  # 03:30 CEST: moved by the gap
    assert next_due(daily, gap_day) == datetime(2026, 3, 30, 0, 30, tzinfo=UTC)  # 02:30 CEST
    # the repeated hour in autumn runs once, at its first 02:30 (CEST)
    autumn = next_due(daily, datetime(2026, 10, 24, 12, tzinfo=UTC))
    assert autumn == datetime(2026, 10, 25, 0, 30, tzinfo=UTC)
    assert next_due(daily, autumn) == datetime(2026, 10, 26, 1, 30, tzinfo=UTC)


def test_cron_in_a_zone_follows_debian_cron_across_the_changes() -> None:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    cron = Schedule("cron", "30 2 * * *", "Europe/Berlin", start)
    spring = next_due(cron, datetime(2026, 3, 28, 12, tzinfo=UTC))
    assert spring == datetime(2026, 3, 29, 1, 0, tzinfo=UTC)  # 03:00 CEST, the first real minute
    autumn = next_due(cron, datetime(2026, 10, 24, 12, tzinfo=UTC))
    assert autumn == datetime(2026, 10, 25, 0, 30, tzinfo=UTC)  # once, the first 02:30
    assert next_due(cron, autumn) == datetime(2026, 10, 26, 1, 30, tzinfo=UTC)
    weekdays = Schedule("cron", "0 8 * * 1-5", "America/New_York", start)
    friday = datetime(2026, 3, 6, 13, 0, tzinfo=UTC)  # Fri 08:00 EST
    assert next_due(weekdays, friday - timedelta(seconds=1)) == friday
    assert next_due(weekdays, friday) == datetime(2026, 3, 9, 12, 0, tzinfo=UTC)  # Mon 08:00 EDT


def test_a_one_off_time_is_due_once_and_a_start_bounds_every_rule() -> None:
    once = Schedule("once", "2026-03-29T02:30", "Europe/Berlin", datetime(2026, 3, 1, tzinfo=UTC))
    assert next_due(once, datetime(2026, 3, 1, tzinfo=UTC)) == datetime(
        2026, 3, 29, 1, 30, tzinfo=UTC
    )
    assert next_due(once, datetime(2026, 3, 29, 1, 30, tzinfo=UTC)) is None
    late_start = Schedule("cron", "0 * * * *", "UTC", datetime(2026, 5, 1, 10, 30, tzinfo=UTC))
    assert next_due(late_start, datetime(2026, 1, 1, tzinfo=UTC)) == datetime(
        2026, 5, 1, 11, tzinfo=UTC
    )
    counted = Schedule("rrule", "FREQ=DAILY;COUNT=2", "UTC", datetime(2026, 5, 1, 9, tzinfo=UTC))
    assert next_due(counted, datetime(2026, 5, 2, 9, tzinfo=UTC)) is None


def test_missed_times_are_one_run_of_the_latest() -> None:
    hourly = Schedule("cron", "0 * * * *", "UTC", datetime(2026, 1, 1, tzinfo=UTC))
    after = datetime(2026, 5, 1, 9, 30, tzinfo=UTC)
    assert last_due(hourly, after, datetime(2026, 5, 1, 9, 59, tzinfo=UTC)) is None
    assert last_due(hourly, after, datetime(2026, 5, 1, 10, 0, tzinfo=UTC)) == (
        datetime(2026, 5, 1, 10, tzinfo=UTC),
        False,
    )
    assert last_due(hourly, after, datetime(2026, 5, 1, 13, 5, tzinfo=UTC)) == (
        datetime(2026, 5, 1, 13, tzinfo=UTC),
        True,
    )
    # a month off: stepped back from the end, not through every hour
    month = last_due(hourly, after, datetime(2026, 6, 1, 0, 20, tzinfo=UTC))
    assert month == (datetime(2026, 6, 1, 0, tzinfo=UTC), True)
    rule = Schedule("rrule", "FREQ=MINUTELY;INTERVAL=10", "UTC", datetime(2026, 5, 1, tzinfo=UTC))
    assert last_due(rule, after, datetime(2026, 5, 3, 7, 4, tzinfo=UTC)) == (
        datetime(2026, 5, 3, 7, 0, tzinfo=UTC),
        True,
    )


@pytest.mark.parametrize(
    ("kind", "rule", "tz", "words"),
    [
        ("rrule", "FREQ=DAILY;BYHOUR=8", "Mars/Olympus", "unknown time zone"),
        ("rrule", "FREQ=FORTNIGHTLY", "UTC", "bad RRULE"),
        ("rrule", "FREQ=SECONDLY", "UTC", "at most once a minute"),
        ("rrule", "DTSTART:20260101T000000\nRRULE:FREQ=DAILY", "UTC", "not one RRULE"),
        ("cron", "61 * * * *", "UTC", "bad cron expression"),
        ("cron", "* * * *", "UTC", "five fields"),
        ("once", "tomorrow", "UTC", "not a date and time"),
        ("once", "2026-05-01T10:00+02:00", "UTC", "carries an offset"),
    ],
)
def test_a_bad_schedule_is_one_clear_error(kind: str, rule: str, tz: str, words: str) -> None:
    schedule = Schedule(kind, rule, tz, datetime(2026, 1, 1, tzinfo=UTC))  # type: ignore[arg-type]
    with pytest.raises(ScheduleError, match=words):
        check(schedule)
    assert words in describe(schedule, datetime(2026, 1, 2, tzinfo=UTC))


def test_schedules_in_words() -> None:
    berlin = ZoneInfo("Europe/Berlin")
    now = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)  # a Thursday, 13:00 in Berlin
    weekdays = Schedule("rrule", every_to_rrule("weekdays 08:00"), "Europe/Berlin", now)
    assert describe(weekdays, now) == (
        "every Monday–Friday at 08:00, Europe/Berlin; next: tomorrow 08:00"
    )
    twice = Schedule("rrule", every_to_rrule("mondays and thursdays 6pm"), "Europe/Berlin", now)
    assert describe(twice, now) == (
        "every Monday and Thursday at 18:00, Europe/Berlin; next: today 18:00"
    )
    hours = Schedule("rrule", every_to_rrule("every 2 hours"), "UTC", now)
    assert describe(hours, now) == "every 2 hours, UTC; next: today 14:00"
    cron = Schedule("cron", "0 8 * * 1-5", "Europe/Berlin", now)
    assert describe(cron, now).endswith("Europe/Berlin; next: tomorrow 08:00")
    once = Schedule("once", "2026-12-08T09:15", "Europe/Berlin", now)
    assert describe(once, now) == "once, Tuesday 09:15, Europe/Berlin"
    passed = Schedule("once", "2026-12-01T09:15", "Europe/Berlin", now.replace(day=1))
    assert describe(passed, now) == "once, Tue 1 Dec 09:15 (passed), Europe/Berlin"
    monthly = Schedule(
        "rrule",
        "FREQ=MONTHLY;BYMONTHDAY=1",
        "Europe/Berlin",
        datetime(2026, 1, 1, 7, tzinfo=berlin),
    )
    assert describe(monthly, now) == (
        "every month on day 1 at 07:00, Europe/Berlin; next: Fri 1 Jan 2027 07:00"
    )


@pytest.mark.parametrize(
    ("words", "rule"),
    [
        ("weekdays 08:00", "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;BYHOUR=8;BYMINUTE=0;BYSECOND=0"),
        ("daily 7:30", "FREQ=DAILY;BYHOUR=7;BYMINUTE=30;BYSECOND=0"),
        ("every day at 12am", "FREQ=DAILY;BYHOUR=0;BYMINUTE=0;BYSECOND=0"),
        ("weekends 10am", "FREQ=WEEKLY;BYDAY=SA,SU;BYHOUR=10;BYMINUTE=0;BYSECOND=0"),
        ("Mon, Wed and Fri 9:05", "FREQ=WEEKLY;BYDAY=MO,WE,FR;BYHOUR=9;BYMINUTE=5;BYSECOND=0"),
        ("hourly", "FREQ=HOURLY;BYMINUTE=0"),
        ("every 15 minutes", "FREQ=MINUTELY;INTERVAL=15"),
        ("FREQ=DAILY;BYHOUR=9", "FREQ=DAILY;BYHOUR=9"),
    ],
)
def test_every_reads_a_few_phrases(words: str, rule: str) -> None:
    assert every_to_rrule(words) == rule


@pytest.mark.parametrize("words", ["now and then", "weekdays", "daily 25:00", "fortnightly 9:00"])
def test_every_refuses_what_it_does_not_read(words: str) -> None:
    with pytest.raises(ScheduleError):
        every_to_rrule(words)
