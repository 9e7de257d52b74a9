"""Screenshots of every window (light and dark) into tests/screenshots/ for a human to look at
(the README's picture is one of them), each checked: the rows, cards and answers the picture is
meant to show are there and visible, and the saved file is a real picture of the window."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from koroku_desktop.agent.ports import ApprovalRequest
from koroku_desktop.domain.events import CompactionEvent, MessageEvent, StoredEvent
from koroku_desktop.domain.parts import TextPart
from koroku_desktop.ui.app import Desktop
from koroku_desktop.ui.approvals import PendingApproval
from koroku_desktop.ui.widgets import theme
from tests.fakes.gemini_server import FakeGemini
from tests.support.waits import settle
from tests.ui.helpers import rows, type_and_send
from tests.ui.realwin.scenes import ANSWER, downloads_turn
from tests.ui.screenshots import save_screenshot


def _stored(seq: int, event: MessageEvent | CompactionEvent) -> StoredEvent:
    return StoredEvent(seq=seq, conversation_id="default", created_at=0.0, event=event)


def sample_history() -> list[StoredEvent]:
    """A conversation with every kind of row."""
    return [
        _stored(
            1,
            CompactionEvent(
                summary="We set up the **project** and chose SQLite.",
                covers_up_to_seq=0,
                kept_from_seq=1,
                tokens_before=84210,
                tokens_after=3120,
            ),
        ),
        *(_stored(seq, event) for seq, event in enumerate(downloads_turn(), start=2)),
        _stored(
            6,
            MessageEvent(
                role="user",
                parts=[TextPart(text="Write me a script that finds the largest files.")],
            ),
        ),
        _stored(7, MessageEvent(role="model", parts=[TextPart(text=ANSWER)])),
    ]


@pytest.mark.parametrize("mode", ["light", "dark"])
def test_screenshots(
    desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot, workspace: Path, mode: str
) -> None:
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    theme.apply(app, mode)
    window = desktop.window
    if desktop.welcome is not None:  # the first-start card has its own screenshot
        desktop.welcome.ok_button.click()
    window.resize(920, 820)
    window.set_history(sample_history())  # type: ignore[arg-type]
    window.thoughts_button.setChecked(True)
    tool_row = next(i for i, item in enumerate(window.model.items()) if item.kind == "tool")
    window.model.toggle_expanded(tool_row)
    window.show_meter(23_400, 100_000)
    window.show_queue(["And then compress the biggest one"])
    (workspace / "notes.md").write_text("# Notes\n\n- buy milk\n- call Ana\n")
    request = ApprovalRequest(
        "c9",
        "edit_file",
        {"path": "notes.md", "old_str": "- call Ana\n", "new_str": "- call Ana at 5pm\n"},
    )
    pending = PendingApproval(request, asyncio.get_event_loop().create_future())
    window.approvals.add(pending)
    card = window.approvals.cards()[0]
    qtbot.waitUntil(lambda: card.diff_view is not None and "+" in card.diff_view.toPlainText())
    settle()
    window.view.scroll_to_bottom()
    settle()
    assert card.isVisible() and window.approvals.isVisible()
    assert window.model.rowCount() >= len(sample_history())
    save_screenshot(window, f"chat-{mode}")
    window.approvals.remove(pending)
    pending.future.cancel()
    assert not window.approvals.isVisible()
    window.show_queue([])

    fake_gemini.reply_text(
        "The capital of **France** is *Paris* — about 2.1 million people live in the city itself."
    )
    desktop.show_quick_ask()
    qtbot.waitExposed(desktop.popup)
    desktop.popup.pin_button.setChecked(True)
    type_and_send(qtbot, desktop.popup.input, "What's the capital of France?")
    qtbot.waitUntil(lambda: "Paris" in desktop.popup.answer_text(), timeout=10000)
    qtbot.waitUntil(lambda: not desktop.bridge.busy)
    settle()
    assert desktop.popup.isVisible() and "Paris" in desktop.popup.answer_text()
    save_screenshot(desktop.popup, f"quick-ask-{mode}")

    desktop.popup.hide()
    fake_gemini.reply_calls(
        ("bash", {"command": "rm -rf ~/Downloads/*.iso", "timeout_seconds": 60})
    )
    fake_gemini.reply_text("Done.")
    desktop.bridge.send("clean up the ISO files")
    qtbot.waitUntil(lambda: bool(window.approvals.cards()), timeout=10000)
    settle()
    assert window.approvals.cards()[0].isVisible()
    save_screenshot(window, f"chat-approval-{mode}")
    window.approvals.cards()[0].deny.click()
    qtbot.waitUntil(lambda: not desktop.bridge.busy, timeout=10000)
    assert rows(window.model, "tool")[-1].status == "error"
    theme.apply(app, "light")
