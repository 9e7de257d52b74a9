"""`koroku tasks` as the systemd timer and a person run it: real `koroku` processes on one
data dir, the fake Gemini server, the time given by `KOROKU_NOW` (the injected clock)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from koroku_desktop.agent.tasks import TaskBook
from koroku_desktop.app.paths import Paths
from koroku_desktop.domain.events import StoredEvent, TaskEvent
from koroku_desktop.domain.tasks import Schedule, due_key
from koroku_desktop.fsutil import try_exclusive_lock
from koroku_desktop.store import SqliteEventLog
from tests.e2e.conftest import Koroku
from tests.fakes.gemini_server import FakeGemini
from tests.support.builders import task_written_as

NOW = datetime(2026, 12, 7, 7, 0, 30, tzinfo=UTC)  # Monday, 08:00:30 in Berlin
AT_NOW = {"KOROKU_NOW": NOW.isoformat()}
DAILY_8 = "FREQ=DAILY;BYHOUR=8;BYMINUTE=0;BYSECOND=0"


def schedule(rule: str = DAILY_8, days_ago: int = 3) -> Schedule:
    return Schedule("rrule", rule, "Europe/Berlin", NOW - timedelta(days=days_ago))


def make(home: Path, **tasks: dict[str, Any]) -> dict[str, str]:
    """Tasks made an hour before NOW (a few days before with `made_days_ago`), by id."""
    ids: dict[str, str] = {}
    with SqliteEventLog(home / "koroku.db") as log:
        for name, spec in tasks.items():
            ago = timedelta(days=spec.pop("made_days_ago", 0), hours=1)
            book = TaskBook(log, lambda ago=ago: NOW - ago)  # type: ignore[misc]
            ids[name] = book.create(spec.pop("schedule", schedule()), title=name, **spec).id
    return ids


def events(home: Path, task_id: str) -> list[TaskEvent]:
    with SqliteEventLog(home / "koroku.db") as log:
        found = [e.event for e in log.entries(None, kinds=("task",), limit=10_000)]
    return [e for e in found if isinstance(e, TaskEvent) and e.task_id == task_id]


def test_run_due_runs_what_is_due_once_and_nothing_else(
    koroku: Koroku, fake_gemini: FakeGemini
) -> None:
    home = koroku.home
    home.mkdir(parents=True, exist_ok=True)
    ids = make(
        home,
        due={"prompt": "Summarise my inbox"},
        late={
            "prompt": "Stretch",
            "reminder": True,
            "made_days_ago": 3,
            "schedule": schedule("FREQ=DAILY;BYHOUR=6;BYMINUTE=0;BYSECOND=0"),
        },
        paused={"prompt": "Paused one"},
        removed={"prompt": "Removed one"},
        running={"prompt": "Running elsewhere"},
    )
    with SqliteEventLog(home / "koroku.db") as log:
        book = TaskBook(log, lambda: NOW)
        book.pause(ids["paused"])
        book.remove(ids["removed"])
        running = book.get(ids["running"])
        started = TaskEvent(
            action="run_started", task_id=running.id, due=due_key(NOW - timedelta(seconds=30))
        )
        log.append(running.conversation_id, [started])
        bad = task_written_as("bad", "Broken zone", "cron", "0 8 * * *", "Mars/Base", NOW)
        log.append("elsewhere", [bad])
    fake_gemini.reply_text("Three mails need an answer.\nThe rest can wait.")
    result = koroku.run("tasks", "run-due", **AT_NOW)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert sorted(result.stdout.splitlines()) == sorted(
        [f"due ({ids['due'][:8]}): ok", f"late ({ids['late'][:8]}) (late): notified"]
    )
    problems = [line for line in result.stderr.splitlines() if "cannot run" in line]
    assert problems == [
        "koroku tasks: “Broken zone” (bad) cannot run: "
        "unknown time zone “Mars/Base” (an IANA name: Europe/Berlin)"
    ]
    assert "Reminder (late): late: Stretch" in result.stderr
    assert "due: Three mails need an answer." in result.stderr  # the notification's line
    assert len(fake_gemini.generate_requests()) == 1  # the reminder made no model call
    finished = [e for e in events(home, ids["due"]) if e.action == "run_finished"]
    assert [(f.outcome, f.late) for f in finished] == [("ok", False)]
    late = [e for e in events(home, ids["late"]) if e.action.startswith("run_")]
    assert [(e.action, e.due) for e in late] == [
        ("run_started", due_key(datetime(2026, 12, 7, 5, 0, tzinfo=UTC))),
        ("run_finished", due_key(datetime(2026, 12, 7, 5, 0, tzinfo=UTC))),
    ]  # three missed mornings: one late run, of the latest
    for name in ("paused", "removed"):
        assert not [e for e in events(home, ids[name]) if e.action.startswith("run_")]
    assert [e.action for e in events(home, ids["running"])][-1] == "run_started"

    again = koroku.run("tasks", "run-due", **AT_NOW)
    assert (again.returncode, again.stdout) == (0, "")
    assert len(fake_gemini.generate_requests()) == 1
    listed = json.loads(koroku.run("tasks", "list", "--json", **AT_NOW).stdout)
    by_title = {t["title"]: t for t in listed}
    assert by_title["due"]["last_run"]["outcome"] == "ok"
    assert by_title["due"]["next_due"] == "2026-12-08T07:00:00+00:00"
    assert by_title["Broken zone"]["problem"].startswith("unknown time zone")
    text = koroku.run("tasks", "list", **AT_NOW).stdout
    assert "    last run (today 08:00): ok: Three mails need an answer." in text
    assert "    last run (today 06:00, late): notified: Stretch" in text
    assert "⚠ cannot run: unknown time zone" in text and "(paused)" in text


def test_two_processes_racing_for_one_due_time_run_it_once(
    koroku: Koroku, fake_gemini: FakeGemini
) -> None:
    koroku.home.mkdir(parents=True, exist_ok=True)
    ids = make(koroku.home, race={"prompt": "Only once"})
    fake_gemini.delay(1.0)  # the first turn is slow: the second process comes meanwhile
    fake_gemini.reply_text("done")
    racers = [koroku.popen("tasks", "run-due", **AT_NOW) for _ in range(2)]
    outputs = [r.communicate(timeout=120) for r in racers]
    assert [r.returncode for r in racers] == [0, 0], outputs
    name = f"race ({ids['race'][:8]})"
    lines = [out.strip() for out, _err in outputs]
    # the other saw the claim before its own read (nothing due: "") or met it under the lease
    assert lines.count(f"{name}: ok") == 1
    assert {*lines} - {f"{name}: ok"} <= {"", f"{name}: skipped"}
    actions = [e.action for e in events(koroku.home, ids["race"])]
    assert actions.count("run_started") == 1 and actions.count("run_finished") == 1
    assert len(fake_gemini.generate_requests()) == 1


def test_add_list_pause_and_bad_input(koroku: Koroku) -> None:
    made = koroku.run(
        "tasks",
        "add",
        "--every",
        "weekdays 08:00",
        "--tz",
        "Europe/Berlin",
        "--prompt",
        "Plan the day",
        "--allow-tool",
        "read_file",
        "--json",
        **AT_NOW,
    )
    assert made.returncode == 0, made.stderr
    task = json.loads(made.stdout)
    assert task["in_words"] == ("every Monday–Friday at 08:00, Europe/Berlin; next: tomorrow 08:00")
    assert task["allowed_tools"] == ["read_file"]
    paused = koroku.run("tasks", "pause", "Plan the day", **AT_NOW)
    assert paused.returncode == 0 and "paused Plan the day" in paused.stdout
    listing = koroku.run("tasks", "list", **AT_NOW).stdout
    assert "Plan the day  [prompt] (paused)" in listing
    for bad, words in (
        (["--every", "now and then"], "not a schedule Koroku reads"),
        (["--cron", "0 8 * *"], "five fields"),
        (["--at", "17:00", "--tz", "Mars/Base"], "unknown time zone"),
        (["--at", "2026-12-01 08:00"], "no time left"),
    ):
        result = koroku.run("tasks", "add", *bad, "--remind", "x", **AT_NOW)
        assert result.returncode == 2, result.stderr
        assert result.stderr.count("\n") == 1 and words in result.stderr
    unknown = koroku.run("tasks", "run", "nothing-like-it", **AT_NOW)
    assert unknown.returncode == 2 and "no task" in unknown.stderr
    assert StoredEvent  # the log's types are what the helpers above read


def test_run_due_with_nothing_due_loads_no_pydantic_sdk_or_event_log(koroku: Koroku) -> None:
    koroku.home.mkdir(parents=True, exist_ok=True)
    make(koroku.home, later={"prompt": "Not yet", "schedule": schedule(days_ago=0)})
    probe = (
        "import sys\n"
        "from koroku_desktop.launcher import main\n"
        "code = main(['tasks', 'run-due'])\n"
        "heavy = [m for m in ('pydantic', 'google.genai', 'koroku_desktop.store.log.event_log',"
        " 'koroku_desktop.agent.loop') if m in sys.modules]\n"
        "print(code, heavy)\n"
    )
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", probe],
        env=koroku.env(KOROKU_HOME=str(koroku.home), **AT_NOW),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.stdout.strip() == "0 []", done.stderr


def test_a_failed_model_call_records_failed_and_the_task_runs_next_time(
    koroku: Koroku, fake_gemini: FakeGemini
) -> None:
    koroku.home.mkdir(parents=True, exist_ok=True)
    ids = make(koroku.home, flaky={"prompt": "Summarise"})
    fake_gemini.fail(400, message="Invalid request")
    failed = koroku.run("tasks", "run-due", **AT_NOW)
    assert failed.returncode == 0, failed.stderr
    assert failed.stdout.strip() == f"flaky ({ids['flaky'][:8]}): failed"
    assert "Task failed: flaky" in failed.stderr
    fake_gemini.reply_text("All done.")
    assert koroku.run("tasks", "run-due", **AT_NOW).stdout == ""  # not retried for that time
    tomorrow = {"KOROKU_NOW": (NOW + timedelta(days=1)).isoformat()}
    again = koroku.run("tasks", "run-due", **tomorrow)
    assert again.stdout.strip() == f"flaky ({ids['flaky'][:8]}): ok", again.stderr
    outcomes = [e.outcome for e in events(koroku.home, ids["flaky"]) if e.action == "run_finished"]
    assert outcomes == ["failed", "ok"]


def test_run_due_leaves_the_due_tasks_to_the_app_that_holds_the_runner_lock(
    koroku: Koroku, fake_gemini: FakeGemini
) -> None:
    """While the desktop app runs (it holds the task-runner lock), the timer's run-due runs
    nothing: a run that needs the person waits in the app's chat instead of being refused."""
    koroku.home.mkdir(parents=True, exist_ok=True)
    ids = make(koroku.home, daily={"prompt": "Summarise"})
    app = try_exclusive_lock(Paths(koroku.home).task_runner_lock)  # as the app holds it
    assert app is not None
    deferred = koroku.run("tasks", "run-due", **AT_NOW)
    assert (deferred.returncode, deferred.stdout) == (0, ""), deferred.stderr
    assert events(koroku.home, ids["daily"])[-1].action == "created"
    assert fake_gemini.generate_requests() == []
    app.release()  # the app quit: the next run-due runs it
    fake_gemini.reply_text("done")
    ran = koroku.run("tasks", "run-due", **AT_NOW)
    assert ran.stdout.strip() == f"daily ({ids['daily'][:8]}): ok", ran.stderr
