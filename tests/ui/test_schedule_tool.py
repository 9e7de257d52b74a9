"""The `schedule` tool through the whole app: the model (a scripted FakeChatModel) asks for a
task, the approval card in the chat says the schedule in words, the prompt and the tools it
may use unattended, and allowing it writes the task to the log."""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any, cast

import qasync
from pytestqt.qtbot import QtBot

from koroku_desktop.agent.conversations import ConversationBook
from koroku_desktop.app.schedule_wiring import give_schedule
from koroku_desktop.domain.parts import FunctionResponsePart
from koroku_desktop.tools.schedule import describe_call
from koroku_desktop.ui.app import Desktop
from koroku_desktop.ui.widgets.approval_card import ApprovalCard
from tests.fakes.chat_model import FakeChatModel, call
from tests.fakes.gemini_server import FakeGemini
from tests.ui.conftest import run, running_desktop
from tests.ui.helpers import type_and_send
from tests.ui.screenshots import save_screenshot

WEEKDAYS = "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;BYHOUR=8;BYMINUTE=0"
ARGS = {
    "title": "Inbox summary",
    "prompt": "Summarise ~/notes/inbox.md and list what is due",
    "kind": "rrule",
    "rule": WEEKDAYS,
    "time_zone": "Europe/Berlin",
    "allowed_tools": ["read_file"],
}
NOW = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)  # a Thursday


def ask_to_schedule(qtbot: QtBot, desk: Desktop) -> ApprovalCard:
    """Past the welcome, the person asks for a weekday task: the card the model's call shows."""
    if desk.welcome is not None:
        desk.welcome.ok_button.click()
    type_and_send(qtbot, desk.window.input, "every weekday at 8 summarise my inbox")
    qtbot.waitUntil(lambda: bool(desk.window.approvals.cards()), timeout=15000)
    return desk.window.approvals.cards()[0]


def test_the_card_says_the_schedule_in_words_with_the_next_run() -> None:
    summary = describe_call(ARGS, "UTC", NOW)
    assert summary.when.startswith("every Monday–Friday at 08:00, Europe/Berlin; next: ")
    assert "tomorrow 08:00" in summary.when
    assert summary.tools == ("read_file",) and not summary.problem


def test_a_bad_rule_is_shown_as_the_reason_not_a_crash() -> None:
    summary = describe_call({**ARGS, "rule": "FREQ=SOMETIMES"}, "UTC", NOW)
    assert summary.problem and summary.title == "Inbox summary"
    missing = describe_call({"title": "x"}, "UTC", NOW)
    assert missing.problem


def test_the_model_schedules_a_task_through_the_approval_card(
    qloop: qasync.QEventLoop, qtbot: QtBot, fake_gemini: FakeGemini
) -> None:
    model = FakeChatModel.scripted([call("schedule", "s1", **ARGS)], then="Scheduled it.")
    with running_desktop(qtbot, model) as desk:
        card = ask_to_schedule(qtbot, desk)
        text = card.schedule_view.text()
        assert "every Monday–Friday at 08:00, Europe/Berlin; next:" in text
        assert "Summarise ~/notes/inbox.md" in text
        assert "Tools it may use unattended:</b> read_file" in text
        # It asks every time: no grant is offered, the one yes says what it does.
        assert not card.allow_session.isVisible() and not card.allow_always.isVisible()
        assert card.allow_once.isVisible() and card.allow_once.text() == "&Schedule it"
        save_screenshot(desk.window, "schedule-approval-card")
        card.allow_once.click()
        qtbot.waitUntil(lambda: not desk.bridge.busy, timeout=15000)
        (task,) = desk.tasks.book.list()
        assert task.title == "Inbox summary"
        assert task.schedule.kind == "rrule" and task.schedule.tz == "Europe/Berlin"
        assert task.allowed_tools == ("read_file",)
        assert task.conversation_id != desk.runtime.agent.conversation_id  # its own
        answer = model.requests[-1].contents[-1].parts[0]
        assert isinstance(answer, FunctionResponsePart)
        assert answer.response["scheduled"] == "Inbox summary"
        # What the model is told of the task's conversation is what the log says of it.
        made = ConversationBook(desk.runtime.log).get(task.conversation_id)
        assert made is not None and not made.archived
        assert "archived" not in str(answer.response["conversation"])


def test_denying_the_card_makes_no_task(
    qloop: qasync.QEventLoop, qtbot: QtBot, fake_gemini: FakeGemini
) -> None:
    model = FakeChatModel.scripted([call("schedule", "s1", **ARGS)], then="Not scheduled.")
    with running_desktop(qtbot, model) as desk:
        ask_to_schedule(qtbot, desk).deny.click()
        qtbot.waitUntil(lambda: not desk.bridge.busy, timeout=15000)
        assert desk.tasks.book.list() == []


def test_a_conversation_started_later_schedules_too(
    qloop: qasync.QEventLoop, qtbot: QtBot, fake_gemini: FakeGemini
) -> None:
    """Each conversation has an agent of its own in the app: every one can schedule."""
    model = FakeChatModel.scripted([call("schedule", "s1", **ARGS)], then="Scheduled it.")
    with running_desktop(qtbot, model) as desk:
        first = desk.runtime.agent
        assert run(qtbot, desk.conversations.start_new()) is not None
        assert desk.runtime.agent is not first
        ask_to_schedule(qtbot, desk).allow_once.click()
        qtbot.waitUntil(lambda: not desk.bridge.busy, timeout=15000)
        (task,) = desk.tasks.book.list()
        assert task.title == "Inbox summary"


def test_every_agent_the_pool_holds_or_builds_gets_the_schedule_writer() -> None:
    """The agents held now get the writer; the kit gives it to every agent built later
    (AgentKit.equip: a switch's, quick ask's; the app tests above and in
    test_quick_ask_conversation.py schedule through those)."""

    def agent() -> Any:
        return SimpleNamespace(calls=SimpleNamespace(schedule=None))

    shown, behind = agent(), agent()
    pool = SimpleNamespace(agents=lambda: [shown, behind])
    kit = SimpleNamespace(schedule=None)
    runtime = cast(Any, SimpleNamespace(agent=shown, pool=pool, kit=kit))

    async def writer(_request: object) -> dict[str, object]:
        return {}

    give_schedule(runtime, writer)
    assert shown.calls.schedule is writer and behind.calls.schedule is writer
    assert kit.schedule is writer
