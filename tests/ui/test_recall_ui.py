"""Recall in the desktop app: the viewer searches by meaning, "Remembered" rows in the chat,
and the Memory & thinking settings apply live."""

from __future__ import annotations

import json

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from koroku_desktop.domain.events import MessageEvent
from koroku_desktop.domain.parts import TextPart
from koroku_desktop.ui.app import Desktop
from koroku_desktop.ui.widgets import theme
from tests.fakes.gemini_server import FakeGemini
from tests.ui.conftest import run, said_and_embedded
from tests.ui.helpers import type_and_send
from tests.ui.screenshots import save_screenshot


def _say(desktop: Desktop, text: str) -> int:
    event = MessageEvent(role="user", origin="person", parts=[TextPart(text=text)])
    (stored,) = desktop.runtime.log.append("other", [event])
    return stored.seq


def test_the_viewer_searches_by_meaning(desktop: Desktop, qtbot: QtBot) -> None:
    car = _say(desktop, "my car is painted crimson")
    _say(desktop, "buy oat milk and bread")
    worker = desktop.runtime.background_embedder
    assert worker is not None
    dialog = desktop.show_history()
    dialog.show_tab("Search")  # the backfill's progress shows under the box
    qtbot.waitUntil(lambda: "2 events are still being embedded" in dialog.search.progress.text())
    assert run(qtbot, worker.catch_up()) == 2
    dialog.search.box.setText("automobile colour")
    hits = run(qtbot, dialog.search.search_now())
    assert [h.seq for h in hits][:1] == [car]


def test_remembered_passages_show_under_the_message_in_the_chat(
    desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot
) -> None:
    car = said_and_embedded(desktop, qtbot, "my car is painted crimson")
    type_and_send(qtbot, desktop.window.input, "what colour is my automobile?")
    qtbot.waitUntil(lambda: not desktop.bridge.busy, timeout=15000)
    items = desktop.window.model.items()
    kinds = [i.kind for i in items]
    assert kinds[:3] == ["user", "remembered", "model"]
    chips = items[1]
    assert chips.text.startswith("Remembered: ") and f"#{car}" in chips.text
    assert "crimson" in chips.text
    model = desktop.window.model
    tip = model.data(model.index(1), Qt.ItemDataRole.ToolTipRole)
    assert tip.startswith(f"#{car} · ") and "my car is painted crimson" in tip


def test_memory_and_thinking_settings_apply_live(
    desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot
) -> None:
    dialog = desktop.show_settings()
    assert dialog.recall.memories.isChecked()
    dialog.recall.memories.setChecked(False)
    dialog.recall.quick_thinking.setCurrentIndex(1)  # minimal
    dialog.save_button.click()
    stored = json.loads(desktop.runtime.paths.settings_file.read_text(encoding="utf-8"))
    assert stored["surface_memories"] is False
    assert stored["quick_ask_thinking_level"] == "minimal"
    options = desktop.runtime.agent.options
    assert options.surface_memories is False and options.quick_thinking_level == "minimal"


def test_the_viewer_finds_memory_files_by_meaning_and_opens_them(
    desktop: Desktop, qtbot: QtBot
) -> None:
    folder = desktop.runtime.paths.memory
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "30-11-2026.md").write_text("[10:00]: The user's car is painted crimson.\n\n")
    (folder / "29-11-2026.md").write_text("[09:00]: Bought oat milk and bread.\n\n")
    worker = desktop.runtime.background_embedder
    assert worker is not None
    run(qtbot, worker.catch_up())
    dialog = desktop.show_history()
    dialog.show_tab("Search")
    dialog.search.box.setText("automobile colour")
    run(qtbot, dialog.search.search_now())
    assert [m.file for m in dialog.search.memory] == ["30-11-2026.md"]
    assert dialog.search.summary.text() == "1 in the memory files."
    dialog.resize(820, 480)
    for mode in ("light", "dark"):
        theme.apply(desktop.app, mode)
        run(qtbot, dialog.search.search_now())  # the rows' HTML takes the theme's colours
        save_screenshot(dialog, f"viewer-search-memory-{mode}")  # copied to resources/
    theme.apply(desktop.app, "light")
    dialog.search.activate_row(len(dialog.search.hits))  # the memory row comes after the hits
    assert dialog.tabs.tabText(dialog.tabs.currentIndex()) == "Memory"
    assert dialog.memory.current is not None and dialog.memory.current.name == "30-11-2026.md"
