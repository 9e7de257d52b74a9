"""The desktop app brings the memory files up to date after its window is up (not while
building the runtime): a file edited while Koroku was closed is taken into the log."""

from __future__ import annotations

from pathlib import Path

import qasync
from pytestqt.qtbot import QtBot

from tests.fakes.gemini_server import FakeGemini
from tests.test_memory_on_start import a_file_edited_while_closed, outside_edits
from tests.ui.conftest import running_desktop


def test_the_app_takes_in_a_memory_file_edited_while_closed(
    qloop: qasync.QEventLoop, qtbot: QtBot, fake_gemini: FakeGemini, workspace: Path
) -> None:
    a_file_edited_while_closed(0)
    with running_desktop(qtbot):
        qtbot.waitUntil(lambda: len(outside_edits()) == 1, timeout=20_000)
        assert outside_edits()[0].text.endswith("corrected by hand, round 0\n")
