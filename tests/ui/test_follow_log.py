"""The open app follows the log: a terminal's turns and compactions show up in the window
and go into its next request; while a terminal turn runs, the window's message waits."""

from __future__ import annotations

from pathlib import Path

from pytestqt.qtbot import QtBot

from koroku_desktop.agent.summarizer import SUMMARIZER_INSTRUCTION
from koroku_desktop.domain.events import MessageEvent
from koroku_desktop.ui.app import Desktop
from tests.fakes.gemini_replies import ReceivedRequest, Reply, TextReply, said_text
from tests.fakes.gemini_server import FakeGemini
from tests.ui.helpers import finish, koroku, quick_ask_into_the_chat, texts, type_and_send


def question(request: ReceivedRequest) -> str:
    for content in reversed(request.contents):
        parts = content.get("parts", [])
        if content.get("role") == "user" and not any("functionResponse" in p for p in parts):
            return said_text(parts)
    return ""


def contents_text(request: ReceivedRequest) -> list[str]:
    return [said_text(c.get("parts", [])) for c in request.contents]


def answer(request: ReceivedRequest) -> Reply:
    if request.system_text == SUMMARIZER_INSTRUCTION:
        return TextReply("SUMMARY-FROM-TERMINAL")
    return TextReply("A-" + question(request))


def test_a_terminal_turn_and_compaction_appear_in_the_window_and_its_next_request(
    desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot
) -> None:
    fake_gemini.set_fallback(answer)
    window = desktop.window
    type_and_send(qtbot, window.input, "from-the-window")
    qtbot.waitUntil(lambda: "A-from-the-window" in texts(window.model, "model"), timeout=15000)
    qtbot.waitUntil(lambda: not desktop.bridge.busy)

    assert desktop.bridge.follows_by_notification  # woken by the files, no poll while idle
    finish(koroku("ask", "from-the-terminal"))
    # Liveness only (the benchmark measures the delay): well within a few seconds.
    qtbot.waitUntil(lambda: "A-from-the-terminal" in texts(window.model, "model"), timeout=5000)
    assert texts(window.model, "user") == ["from-the-window", "from-the-terminal"]

    type_and_send(qtbot, window.input, "second")
    qtbot.waitUntil(lambda: "A-second" in texts(window.model, "model"), timeout=15000)
    qtbot.waitUntil(lambda: not desktop.bridge.busy)
    sent = contents_text(fake_gemini.generate_requests()[-1])
    assert sent == [
        "from-the-window",
        "A-from-the-window",
        "from-the-terminal",
        "A-from-the-terminal",
        "second",
    ]

    out = finish(koroku("compact"))
    assert "compacted" in out
    qtbot.waitUntil(lambda: desktop.runtime.agent.view.summary is not None, timeout=5000)
    type_and_send(qtbot, window.input, "third")
    qtbot.waitUntil(lambda: "A-third" in texts(window.model, "model"), timeout=15000)
    request = [r for r in fake_gemini.generate_requests() if question(r) == "third"][-1]
    sent = contents_text(request)
    assert "SUMMARY-FROM-TERMINAL" in sent[0]
    assert "from-the-window" not in sent


def test_a_window_message_waits_for_the_terminal_turn_and_is_not_interleaved(
    desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot, workspace: Path
) -> None:
    started, release = workspace / "started", workspace / "release"
    hold = f"touch {started}; while [ ! -e {release} ]; do sleep 0.05; done"
    fake_gemini.reply_calls(("bash", {"command": hold}))
    fake_gemini.reply_text("terminal done")
    fake_gemini.reply_text("window done")
    terminal = koroku("ask", "--yes", "slow terminal turn")
    try:
        qtbot.waitUntil(started.exists, timeout=60000)  # the terminal turn started its tool
        type_and_send(qtbot, desktop.window.input, "from the window")
        waiting = "waiting for the turn running in the terminal"
        qtbot.waitUntil(lambda: desktop.bridge.waiting_text == waiting, timeout=5000)
        assert desktop.bridge.queued == ["from the window"]
        assert waiting in desktop.window.statusBar().currentMessage()
    finally:
        release.touch()
    assert finish(terminal).strip() == "terminal done"
    window = desktop.window
    qtbot.waitUntil(lambda: "window done" in texts(window.model, "model"), timeout=15000)
    qtbot.waitUntil(lambda: not desktop.bridge.busy)
    assert desktop.bridge.queued == [] and desktop.bridge.waiting_text == ""
    assert texts(window.model, "model")[-2:] == ["terminal done", "window done"]
    roles = [
        (e.event.role, e.event.origin)
        for e in desktop.runtime.log.entries("default")
        if isinstance(e.event, MessageEvent)
    ]
    assert roles == [
        ("user", "person"),
        ("model", "model"),
        ("user", "tools"),
        ("model", "model"),
        ("user", "person"),
        ("model", "model"),
    ]


def test_quick_ask_follows_its_own_turn_even_when_a_terminal_asks_the_same_words(
    desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot, workspace: Path
) -> None:
    started, release = workspace / "started", workspace / "release"
    hold = f"touch {started}; while [ ! -e {release} ]; do sleep 0.05; done"
    fake_gemini.reply_calls(("bash", {"command": hold}))
    fake_gemini.reply_text("the terminal's answer")
    fake_gemini.reply_text("the popup's answer")
    quick_ask_into_the_chat(desktop)  # the same conversation as the terminal's turn
    terminal = koroku("ask", "--yes", "hello")
    popup = desktop.popup
    try:
        qtbot.waitUntil(started.exists, timeout=60000)  # the terminal turn started its tool
        desktop.show_quick_ask()
        popup.ask("hello")  # the same words: only the turn id tells the two apart
        qtbot.waitUntil(lambda: "waiting for the turn" in popup.tool_label.text(), timeout=5000)
    finally:
        release.touch()
    finish(terminal)
    qtbot.waitUntil(lambda: "the popup's answer" in popup.answer_text(), timeout=15000)
    qtbot.waitUntil(lambda: not desktop.bridge.busy)
    assert "the terminal's answer" not in popup.answer_text()
    assert "waiting for the turn" not in popup.tool_label.text(), "no stale waiting line"
    assert popup.exchange_seq is not None
    entry = desktop.runtime.log.get(popup.exchange_seq)
    assert entry is not None and entry.event.kind == "message"
    mine = [
        e
        for e in desktop.runtime.log.entries("default")
        if isinstance(e.event, MessageEvent) and e.event.is_user_turn
    ]
    assert [e.seq for e in mine][-1] == popup.exchange_seq, "the popup's own message"
