"""Consecutive calls of the same tool group into one card (`read_file ×4`) that opens."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import qasync
from PySide6.QtWidgets import QApplication, QStyleOptionViewItem
from pytestqt.qtbot import QtBot

from koroku_desktop.ui.app import Desktop
from koroku_desktop.ui.chat.items import ChatItem
from koroku_desktop.ui.chat.tool_runs import regroup
from tests.fakes.gemini_server import FakeGemini
from tests.ui.conftest import running_desktop
from tests.ui.helpers import click_row_action, rows, type_and_send
from tests.ui.screenshots import save_variants


def _tool(name: str, status: str = "ok") -> ChatItem:
    return ChatItem(kind="tool", tool=name, status=status)  # type: ignore[arg-type]


def test_runs_are_consecutive_calls_of_one_tool() -> None:
    items = [
        ChatItem(kind="user", text="go"),
        _tool("read_file"),
        _tool("read_file", "error"),
        _tool("read_file"),
        _tool("bash"),
        _tool("read_file"),
    ]
    regroup(items)
    assert [i.run for i in items] == [1, 3, 1, 1, 1, 1]
    assert [i.folded for i in items] == [False, False, True, True, False, False]
    assert items[1].run_state == "error", "a run with a failure shows ✗"
    items[1].run_open = True
    regroup(items, 3)
    assert not any(i.folded for i in items)


@pytest.fixture
def four_calls(
    qloop: qasync.QEventLoop,
    qtbot: QtBot,
    fake_gemini: FakeGemini,
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[Desktop]:
    """The app with a budget of four tool calls per turn."""
    monkeypatch.setenv("KOROKU_MAX_TOOL_CALLS", "4")
    with running_desktop(qtbot) as desk:
        yield desk


def test_a_run_folds_into_one_card_that_opens(
    four_calls: Desktop, fake_gemini: FakeGemini, qtbot: QtBot, workspace: Path, qapp: QApplication
) -> None:
    window = four_calls.window
    if four_calls.welcome is not None:
        four_calls.welcome.ok_button.click()
    (workspace / "a.txt").write_text("a\n")
    four_calls.runtime.policy.grant("read_file", "session")
    fake_gemini.endless_calls("read_file", {"path": "a.txt"})
    type_and_send(qtbot, window.input, "read it again and again")
    qtbot.waitUntil(lambda: len(rows(window.model, "tool")) == 4, timeout=20000)
    qtbot.waitUntil(lambda: all(t.status == "ok" for t in rows(window.model, "tool")))
    head, *rest = rows(window.model, "tool")
    assert head.run == 4 and head.run_state == "ok" and all(t.folded for t in rest)
    delegate = window.view.delegate

    def height(item: ChatItem) -> int:
        index = window.model.index(window.model.row_of(item))
        return delegate.sizeHint(QStyleOptionViewItem(), index).height()

    assert height(rest[0]) == 0 and height(head) > 0
    save_variants(qapp, window, "tool-run-folded")
    click_row_action(qtbot, window.view, head, "run")
    assert head.run_open and not any(t.folded for t in rest) and height(rest[0]) > 0
    save_variants(qapp, window, "tool-run-open")
    click_row_action(qtbot, window.view, head, "run")
    assert all(t.folded for t in rest)
