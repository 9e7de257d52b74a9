"""Web tools in the desktop app: switched on in Settings, a grounded reply (the response
written from Gemini's REST docs) shows its sources as links under the answer, a click opens
one, the viewer shows them; screenshots in light and dark."""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import QObject, QUrl, Slot
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from koroku_desktop.domain.events import MessageEvent, StoredEvent
from koroku_desktop.ui.app import Desktop
from koroku_desktop.ui.viewer.event_render import readable
from koroku_desktop.ui.widgets import theme
from tests.fakes.gemini_grounding import grounded_reply
from tests.fakes.gemini_server import FakeGemini
from tests.support.waits import settle
from tests.ui.helpers import click_row_action, rows, type_and_send
from tests.ui.screenshots import save_screenshot


class UrlCatcher(QObject):
    """Stands in for the browser: QDesktopServices hands https links to it."""

    def __init__(self) -> None:
        super().__init__()
        self.opened: list[str] = []

    @Slot(QUrl)
    def open(self, url: QUrl) -> None:
        self.opened.append(url.toString())


@pytest.mark.parametrize("mode", ["light", "dark"])
def test_a_grounded_reply_shows_its_sources_as_links(
    desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot, mode: str
) -> None:
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    theme.apply(app, mode)
    if desktop.welcome is not None:
        desktop.welcome.ok_button.click()
    dialog = desktop.show_settings()
    assert not dialog.web.search.isChecked() and dialog.web.search.isEnabled()
    dialog.web.search.setChecked(True)
    dialog.web.urls.setChecked(True)
    dialog.web.ensurePolished()
    save_screenshot(dialog.web, f"settings-web-{mode}")
    dialog.save_button.click()
    stored = json.loads(desktop.runtime.paths.settings_file.read_text(encoding="utf-8"))
    assert stored["google_search"] is True and stored["url_context"] is True

    fake_gemini.reply_with(grounded_reply())
    window = desktop.window
    window.resize(820, 560)
    type_and_send(qtbot, window.input, "Who won the euro 2024?")
    qtbot.waitUntil(lambda: not desktop.bridge.busy, timeout=15000)
    assert {"googleSearch": {}} in fake_gemini.generate_requests()[-1].body["tools"]
    answer = rows(window.model, "model")[-1]
    assert "in the final. [1] This victory" in answer.text
    (sources,) = rows(window.model, "sources")
    titles = [s[1] for s in sources.args["sources"]]
    assert titles == ["aljazeera.com", "uefa.com", "www.uefa.com/euro2024/"]
    assert sources.args["queries"] == ["UEFA Euro 2024 winner", "who won euro 2024"]
    settle()  # lay the new rows out before the picture
    save_screenshot(window, f"chat-sources-{mode}")

    catcher = UrlCatcher()
    QDesktopServices.setUrlHandler("https", catcher, "open")
    try:
        with qtbot.waitSignal(window.view.delegate.link_opened, timeout=5000) as opened:
            click_row_action(qtbot, window.view, sources, "open:")
    finally:
        QDesktopServices.unsetUrlHandler("https")
    assert str(opened.args[0]).startswith("https://vertexaisearch.cloud.google.com/")
    assert catcher.opened == [opened.args[0]]
    # The Google Search suggestions Gemini gave are links too, to its own result pages.
    actions = [a for hits in window.view.delegate._hits.values() for _, a in hits]
    assert (
        "open:https://www.google.com/search?q=UEFA+Euro+2024+winner"
        "&client=app-vertex-grounding&safesearch=active"
    ) in actions

    last = desktop.runtime.log.entries(desktop.runtime.agent.conversation_id)[-1]
    assert isinstance(last, StoredEvent) and isinstance(last.event, MessageEvent)
    assert last.event.grounding is not None
    detail = readable(last)
    assert "**Sources**" in detail and "[aljazeera.com](<https://vertexaisearch." in detail


def test_an_environment_switch_locks_the_checkbox(
    desktop: Desktop, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KOROKU_URL_CONTEXT", "1")
    desktop.runtime.settings_store.reload()
    assert desktop.runtime.settings.url_context is True
    dialog = desktop.show_settings()
    assert dialog.web.urls.isChecked() and not dialog.web.urls.isEnabled()
    assert "KOROKU_URL_CONTEXT" in dialog.web.urls.toolTip()
    dialog.close()
