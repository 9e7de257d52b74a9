"""What Koroku knows about you, in the desktop app: the viewer's Memory tab and Settings list
the facts; adding, editing and forgetting there are events; a fact from another process
(`koroku memory add`) shows in the open app and goes with the window's next request; a fact
longer than a page is refused with the text kept; the feature turns off in Settings."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import qasync
from PySide6.QtWidgets import QScrollArea
from pytestqt.qtbot import QtBot

from koroku_desktop.domain.events import FactEvent, StoredEvent
from koroku_desktop.domain.facts import Fact
from koroku_desktop.domain.model_io import ModelRequest
from koroku_desktop.ui.app import Desktop
from koroku_desktop.ui.settings.dialog import SettingsDialog
from koroku_desktop.ui.widgets import theme
from koroku_desktop.ui.widgets.facts_editor import FactsEditor
from tests.fakes.chat_model import FakeChatModel, call
from tests.fakes.gemini_server import FakeGemini
from tests.support.waits import settle
from tests.ui.conftest import run, running_desktop
from tests.ui.helpers import finish, koroku, texts, type_and_send
from tests.ui.screenshots import save_screenshot


def fact_events(desktop: Desktop) -> list[FactEvent]:
    return [
        e.event
        for e in desktop.runtime.log.entries(kinds=["fact"], limit=100)
        if isinstance(e, StoredEvent) and isinstance(e.event, FactEvent)
    ]


def editor_of(desktop: Desktop) -> FactsEditor:
    dialog = desktop.show_history()
    dialog.show_tab("Memory")
    assert dialog.facts is not None
    return dialog.facts


def test_a_fact_from_another_process_shows_in_the_open_app_and_its_next_request(
    desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot
) -> None:
    editor = editor_of(desktop)
    qtbot.waitUntil(lambda: editor.empty.isVisible())
    assert editor.facts_shown() == []

    out = finish(koroku("memory", "add", "--subject", "home city", "Lives in Oslo."))
    assert out.startswith("Remembered #")
    # The app follows the log: the open Memory tab lists it without a click.
    qtbot.waitUntil(lambda: editor.facts_shown() == ["home city — Lives in Oslo."], timeout=5000)

    fake_gemini.reply_text("Hi Jan")
    window = desktop.window
    type_and_send(qtbot, window.input, "hello")
    qtbot.waitUntil(lambda: "Hi Jan" in texts(window.model, "model"), timeout=15000)
    qtbot.waitUntil(lambda: not desktop.bridge.busy)
    sent = fake_gemini.generate_requests()[-1].system_text
    assert sent.endswith("- (about you) home city: Lives in Oslo.")


def test_add_edit_and_forget_in_the_memory_tab_are_events(desktop: Desktop, qtbot: QtBot) -> None:
    editor = editor_of(desktop)
    editor.start_add()
    assert editor.form.isVisible()
    editor.subject.setText("coffee")
    editor.category.setCurrentIndex(1)  # Preferences
    editor.text.setPlainText("Black, no sugar.")
    assert run(qtbot, editor.save())
    assert not editor.form.isVisible()
    assert editor.facts_shown() == ["coffee — Black, no sugar."]

    assert editor.select("coffee")
    editor.start_edit()
    assert not editor.subject.isEnabled()  # an edit keeps its subject
    editor.text.setPlainText("Oat flat white.")
    assert run(qtbot, editor.save())
    assert editor.facts_shown() == ["coffee — Oat flat white."]

    assert editor.select("coffee")
    forgetting = editor.forget_selected()
    assert forgetting is not None and run(qtbot, forgetting)
    assert editor.facts_shown() == [] and editor.empty.isVisible()
    assert "stays in the history" in editor.note.text()
    ops = [(e.op, e.text, e.category) for e in fact_events(desktop)]
    assert ops == [
        ("remember", "Black, no sugar.", "preference"),
        ("remember", "Oat flat white.", "preference"),
        ("forget", "", "preference"),
    ]


def test_a_fact_longer_than_a_page_is_refused_and_the_text_stays(
    desktop: Desktop, qtbot: QtBot
) -> None:
    editor = editor_of(desktop)
    editor.start_add()
    editor.subject.setText("name")
    editor.text.setPlainText("Jan.")
    assert run(qtbot, editor.save())
    page = "A long story. " * 120
    editor.start_add()
    editor.subject.setText("story")
    editor.text.setPlainText(page)
    assert not run(qtbot, editor.save())
    assert editor.form.isVisible() and editor.text.toPlainText() == page  # nothing lost
    assert "at most 1,000 characters" in editor.note.text()
    assert "Not saved" in editor.note.text()
    editor.start_add()
    editor.text.setPlainText("   ")
    assert not run(qtbot, editor.save())
    assert "cannot be empty" in editor.note.text()
    assert [e.text for e in fact_events(desktop)] == ["Jan."]
    assert editor.facts_shown() == ["name — Jan."]


def test_settings_lists_the_facts_and_turns_the_feature_off(
    desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot
) -> None:
    facts = desktop.runtime.facts
    assert facts is not None
    facts.remember("default", "sister", "Anna, lives in Bergen.", "person")
    dialog = desktop.show_settings()
    group = dialog.facts
    assert group.enabled.isChecked() and not group.off_note.isVisible()
    assert group.editor is not None
    assert group.editor.facts_shown() == ["sister — Anna, lives in Bergen."]

    group.enabled.setChecked(False)
    assert group.off_note.isVisible()
    assert dialog.save()
    stored = json.loads(desktop.runtime.paths.settings_file.read_text(encoding="utf-8"))
    assert stored["remember_facts"] is False
    fake_gemini.reply_text("ok")
    type_and_send(qtbot, desktop.window.input, "who is my sister?")
    qtbot.waitUntil(lambda: not desktop.bridge.busy and len(fake_gemini.generate_requests()) == 1)
    off = fake_gemini.generate_requests()[-1]
    assert "Anna" not in off.system_text and "remember" not in off.tool_names


def test_screenshots_of_the_memory_tab_and_settings_at_two_widths_in_both_themes(
    desktop: Desktop, qtbot: QtBot
) -> None:
    facts = desktop.runtime.facts
    assert facts is not None
    facts.remember("default", "name", "Jan Novák, a translator from Brno.")
    facts.remember("default", "coffee", "Oat flat white, never after 3 pm.", "preference")
    facts.remember(
        "default",
        "sister Anna",
        "Lives in Bergen with her two kids; birthday on 14 March.",
        "person",
    )
    facts.remember("default", "Tern", "His sync tool in Rust; releases on Fridays.", "project")
    history = desktop.show_history()
    history.show_tab("Memory")
    assert history.facts is not None
    run(qtbot, history.facts.reload())
    settings: SettingsDialog = desktop.show_settings()
    assert settings.facts.editor is not None
    for mode in ("light", "dark"):
        theme.apply(desktop.app, mode)
        for width in (400, 900):
            for widget, name in ((history, "facts-memory-tab"), (settings, "facts-settings")):
                widget.resize(width, 760)
                desktop.app.processEvents()
                desktop.app.processEvents()
                if widget is settings:
                    scroll = settings.findChild(QScrollArea)
                    assert scroll is not None
                    scroll.ensureWidgetVisible(settings.facts, 0, 0)
                settle()  # the layouts re-run after the resize and the scroll
                save_screenshot(widget, f"{name}-{mode}-{width}")
    theme.apply(desktop.app, "light")
    # A refused fact: the form stays open with its text, the reason under it.
    editor = history.facts
    history.resize(900, 760)
    editor.start_add()
    editor.subject.setText("life story")
    editor.text.setPlainText("Born in Brno. " * 90)
    assert not run(qtbot, editor.save())
    desktop.app.processEvents()
    assert editor.note.isVisible() and "at most 1,000 characters" in editor.note.text()
    save_screenshot(history, "facts-refused-light-900")
    # The group itself fits the narrow width: no text of it is cut.
    assert settings.facts.minimumSizeHint().width() <= 380


def test_the_remember_tool_runs_without_asking_and_the_chat_says_what_it_stored(
    qloop: qasync.QEventLoop, qtbot: QtBot, fake_gemini: FakeGemini, workspace: Path
) -> None:
    def reply(request: ModelRequest) -> Any:
        if request.contents[-1].function_responses:
            return "I'll remember that."
        return [call("remember", subject="editor", fact="Uses Helix.", category="preference")]

    with running_desktop(qtbot, FakeChatModel(reply)) as desk:
        if desk.welcome is not None:
            desk.welcome.ok_button.click()
        editor = editor_of(desk)
        type_and_send(qtbot, desk.window.input, "remember that I use Helix")
        qtbot.waitUntil(lambda: "I'll remember that." in texts(desk.window.model, "model"))
        qtbot.waitUntil(lambda: not desk.bridge.busy)
        # No approval card was needed: the turn ran to its answer on its own.
        cards = [i for i in desk.window.model.items() if i.kind == "tool"]
        assert [c.tool for c in cards] == ["remember"], cards
        qtbot.waitUntil(lambda: editor.facts_shown() == ["editor — Uses Helix."], timeout=5000)
        desk.history.close() if desk.history is not None else None
        for mode in ("light", "dark"):
            theme.apply(desk.app, mode)
            for width in (400, 900):
                desk.window.resize(width, 760)
                settle()
                save_screenshot(desk.window, f"facts-chat-{mode}-{width}")
        theme.apply(desk.app, "light")


def test_an_edit_of_a_fact_changed_meanwhile_elsewhere_is_not_saved_and_keeps_its_text(
    desktop: Desktop, qtbot: QtBot
) -> None:
    facts = desktop.runtime.facts
    assert facts is not None
    stored = facts.remember("default", "editor", "Uses vim.", "preference").stored
    editor = editor_of(desktop)
    run(qtbot, editor.reload())
    assert editor.select("editor")
    editor.start_edit()
    editor.text.setPlainText("Uses Emacs.")
    finish(koroku("memory", "edit", str(stored.seq), "Uses Helix."))  # another process
    assert not run(qtbot, editor.save())
    assert "edited or forgotten meanwhile" in editor.note.text()
    assert editor.form.isVisible() and editor.text.toPlainText() == "Uses Emacs."
    qtbot.waitUntil(lambda: editor.facts_shown() == ["editor — Uses Helix."], timeout=5000)


def test_a_fact_with_a_long_url_wraps_and_the_list_never_scrolls_sideways(
    qtbot: QtBot,
) -> None:
    """A fact holding a long unbroken run (a URL) made the list scroll sideways at 400 px;
    the line breaks inside the run, and the list still reads the fact as written."""
    url = "https://example.org/" + "a1b2c3d4e5" * 20
    fact = Fact(1, "e1", "blog", f"My blog is at {url}", "person", "person", (), 0.0, "default")

    keeper = SimpleNamespace(facts=[fact], refresh=lambda: False)
    editor = FactsEditor(keeper, "default")  # type: ignore[arg-type]
    qtbot.addWidget(editor)
    editor.resize(360, 400)
    editor.show()
    qtbot.waitExposed(editor)
    assert editor.facts_shown() == [f"blog — My blog is at {url}"]
    bar = editor.list.horizontalScrollBar()
    assert bar.maximum() == 0, f"the list scrolls {bar.maximum()} px sideways"
