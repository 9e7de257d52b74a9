"""FactsEditor: what Koroku knows about you, listed by category, to add, edit or forget.

Shown in the viewer's Memory tab and in Settings. Every change is a `fact` event in the log
(agent/facts.py), written off the event loop; the list is read from the log again after
each change and whenever the app sees a fact arrive (from `koroku memory`, a turn, a sync).
A refused fact (empty, longer than a page) keeps the text in the editor and says why.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable
from typing import Any, Protocol

from PySide6.QtCore import QSize, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from koroku_desktop.domain.errors import KorokuError
from koroku_desktop.domain.facts import CATEGORIES, CATEGORY_WORDS, MAX_FACT_CHARS, Fact
from koroku_desktop.ui.widgets.controls import note_label, push_button
from koroku_desktop.ui.widgets.tasks import TaskSet

log = logging.getLogger(__name__)

FACT_ROLE = Qt.ItemDataRole.UserRole + 1
EMPTY_TEXT = (
    "Koroku knows no facts about you yet. Tell it “remember that …” in a chat, or add one here."
)


class FactsKeeper(Protocol):
    """Where facts are read and written (the runtime's `FactBook`). Blocking calls."""

    @property
    def facts(self) -> list[Fact]:
        """The live facts as last read."""
        ...

    def refresh(self) -> bool:
        """Read new fact events from the log."""
        ...

    def remember(self, conversation_id: str, subject: str, text: str, category: Any) -> object:
        """Store a new fact (`FactRefused` when it cannot be)."""
        ...

    def edit(self, ref: str | int, text: str) -> object:
        """Change a fact's text."""
        ...

    def forget(self, ref: str | int) -> object:
        """Forget a fact."""
        ...


BREAK = "\u200b"
"""A zero-width space: where a long unbroken run (a URL) may break in the list."""


def fact_label(fact: Fact) -> str:
    """One line of the list: `subject — text` (the text on one line; a long unbroken run
    gets break opportunities, or the list would scroll sideways)."""
    line = f"{fact.subject} — {' '.join(fact.text.split())}"
    return re.sub(r"(\S{20})(?=\S)", rf"\1{BREAK}", line)


def fact_tooltip(fact: Fact) -> str:
    """Where a fact came from, for its tooltip."""
    who = {"person": "you", "model": "Koroku, when you asked", "compaction": "a summary"}
    came = ", ".join(f"#{s}" for s in fact.from_seqs)
    return f"{fact.text}\n\nStated by {who.get(fact.source, fact.source)} in event #{fact.seq}" + (
        f", from {came}" if came else ""
    )


class FactList(QListWidget):
    """The facts' list: it asks for a few rows, then takes the room there is. In a scroll area
    (Settings, the viewer's short Memory pane) the 192 px every list asks for pushed the
    open form below the fold."""

    def sizeHint(self) -> QSize:
        rows = 5 * self.fontMetrics().lineSpacing() + 2 * self.frameWidth()
        return QSize(super().sizeHint().width(), rows)


class FactsEditor(QWidget):
    """The facts, grouped by category, with Add, Edit and Forget; `changed` after a write."""

    changed = Signal()

    def __init__(
        self, keeper: FactsKeeper, conversation_id: str, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.keeper = keeper
        self.conversation_id = conversation_id
        self._tasks = TaskSet()
        self._editing: Fact | None = None
        self.writing: asyncio.Future[bool] | None = None
        """The last write, while it runs (tests await it)."""
        col = QVBoxLayout(self)
        col.setContentsMargins(0, 0, 0, 0)
        self.list = FactList()
        self.list.setWordWrap(True)
        self.list.setAlternatingRowColors(True)
        self.list.currentItemChanged.connect(lambda *_: self._selection_changed())
        self.list.itemDoubleClicked.connect(lambda *_: self.start_edit())
        col.addWidget(self.list, 1)
        self.empty = note_label(EMPTY_TEXT)
        col.addWidget(self.empty)
        col.addLayout(self._buttons())
        self.form = self._form()
        col.addWidget(self.form)
        self.note = note_label("")
        self.note.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        col.addWidget(self.note)
        self.form.setVisible(False)
        self.show_facts(keeper.facts)

    def _buttons(self) -> QHBoxLayout:
        row = QHBoxLayout()
        self.add_button = push_button("Add…", self.start_add, tip="Tell Koroku a fact about you")
        self.edit_button = push_button("Edit…", self.start_edit)
        self.forget_button = push_button(
            "Forget",
            self.forget_selected,
            tip="Koroku stops knowing it (it stays in the history)",
            name="Danger",
        )
        for button in (self.add_button, self.edit_button, self.forget_button):
            row.addWidget(button)
        row.addStretch(1)
        return row

    def _form(self) -> QWidget:
        form = QWidget()
        col = QVBoxLayout(form)
        col.setContentsMargins(0, 4, 0, 0)
        top = QHBoxLayout()
        self.subject = QLineEdit()
        self.subject.setPlaceholderText("About (e.g. home city)")
        self.subject.setMaxLength(80)
        top.addWidget(self.subject, 1)
        self.category = QComboBox()
        for value in CATEGORIES:
            self.category.addItem(CATEGORY_WORDS[value], value)
        top.addWidget(self.category)
        col.addLayout(top)
        self.text = QPlainTextEdit()
        self.text.setPlaceholderText("The fact, in a sentence or two")
        self.text.setFixedHeight(72)
        col.addWidget(self.text)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(push_button("Cancel", self.close_form))
        self.save_button = push_button("Save fact", self.save, name="Primary")
        row.addWidget(self.save_button)
        col.addLayout(row)
        return form

    # -- showing -----------------------------------------------------------------------

    def show_facts(self, facts: list[Fact]) -> None:
        """List `facts` under their category headings, keeping the selection by subject."""
        chosen = self.selected()
        self.list.clear()
        heading = None
        for fact in facts:
            if fact.category != heading:
                heading = fact.category
                head = QListWidgetItem(CATEGORY_WORDS.get(heading, heading))
                head.setFlags(Qt.ItemFlag.NoItemFlags)
                font = head.font()
                font.setBold(True)
                head.setFont(font)
                self.list.addItem(head)
            item = QListWidgetItem(fact_label(fact))
            item.setData(FACT_ROLE, fact)
            item.setToolTip(fact_tooltip(fact))
            self.list.addItem(item)
            if chosen is not None and fact.key == chosen.key:
                self.list.setCurrentItem(item)
        self.list.setVisible(bool(facts))
        self.empty.setVisible(not facts)
        self._selection_changed()

    def facts_shown(self) -> list[str]:
        """The listed facts' lines (headings left out), for tests and screenshots."""
        items = [self.list.item(i) for i in range(self.list.count())]
        return [i.text().replace(BREAK, "") for i in items if i.data(FACT_ROLE) is not None]

    def selected(self) -> Fact | None:
        """The fact selected in the list, if any."""
        item = self.list.currentItem()
        fact = item.data(FACT_ROLE) if item is not None else None
        return fact if isinstance(fact, Fact) else None

    def select(self, subject: str) -> bool:
        """Select the fact on `subject` (False when none is listed)."""
        for row in range(self.list.count()):
            fact = self.list.item(row).data(FACT_ROLE)
            if isinstance(fact, Fact) and fact.subject == subject:
                self.list.setCurrentRow(row)
                return True
        return False

    def _selection_changed(self) -> None:
        has = self.selected() is not None
        self.edit_button.setEnabled(has)
        self.forget_button.setEnabled(has)

    def reload(self) -> asyncio.Future[bool]:
        """Read the log for new facts (off the loop) and show them."""
        return self._tasks.start(self._run(self.keeper.refresh, None))

    # -- changing ----------------------------------------------------------------------

    def start_add(self) -> None:
        """Open the form for a new fact."""
        self._open_form(None)

    def start_edit(self) -> None:
        """Open the form on the selected fact (its text can change; its subject stays)."""
        fact = self.selected()
        if fact is not None:
            self._open_form(fact)

    def _open_form(self, fact: Fact | None) -> None:
        self._editing = fact
        self.subject.setText(fact.subject if fact else "")
        self.subject.setEnabled(fact is None)
        self.category.setCurrentIndex(CATEGORIES.index(fact.category) if fact else 0)
        self.category.setEnabled(fact is None)
        self.text.setPlainText(fact.text if fact else "")
        self.note.setText(
            f"At most {MAX_FACT_CHARS:,} characters. A fact on a subject Koroku already "
            "knows replaces what it knew; the older one stays in the history."
        )
        self.form.setVisible(True)
        (self.text if fact else self.subject).setFocus()
        QTimer.singleShot(0, self, self._form_into_view)  # not after the editor is gone

    def _form_into_view(self) -> None:
        """Scroll the open form, its buttons and note into view where the editor sits in a
        scroll area (Settings, a short viewer): opened below the fold, it looked like nothing
        happened. Runs once the layout has made room for the form."""
        area = self.parentWidget()
        while area is not None and not isinstance(area, QScrollArea):
            area = area.parentWidget()
        if area is not None and self.form.isVisible():
            area.ensureWidgetVisible(self.note, 0, 0)  # the note under the form, then its top
            area.ensureWidgetVisible(self.form, 0, 0)

    def close_form(self) -> None:
        """Leave the form without saving."""
        self._editing = None
        self.form.setVisible(False)
        self.note.setText("")

    def save(self) -> asyncio.Future[bool]:
        """Store the form's fact (a new one, or the edit of the selected one)."""
        text = self.text.toPlainText()
        fact = self._editing
        if fact is not None:
            write: Callable[[], object] = lambda: self.keeper.edit(fact.event_id, text)  # noqa: E731
            done = f"Saved: {fact.subject}."
        else:
            subject, category = self.subject.text(), self.category.currentData()
            conversation = self.conversation_id
            write = lambda: self.keeper.remember(conversation, subject, text, category)  # noqa: E731
            done = "Saved. Koroku sends what it knows with every request."
        self.writing = self._tasks.start(self._run(write, done, closes_form=True))
        return self.writing

    def forget_selected(self) -> asyncio.Future[bool] | None:
        """Forget the selected fact (an event; the history keeps the fact)."""
        fact = self.selected()
        if fact is None:
            return None
        done = f"Forgotten: {fact.subject}. It stays in the history."
        self.writing = self._tasks.start(self._run(lambda: self.keeper.forget(fact.event_id), done))
        return self.writing

    async def _run(
        self, work: Callable[[], object], done: str | None, *, closes_form: bool = False
    ) -> bool:
        """Do `work` off the loop, then show the facts as they now stand; a failure is
        shown in the note and changes nothing on screen (the form keeps its text)."""
        try:
            await asyncio.to_thread(work)
            await asyncio.to_thread(self.keeper.refresh)
        except KorokuError as exc:  # refused (too long, empty, gone): said beside the form
            self.note.setText(f"Not saved: {exc}")
            return False
        except Exception as exc:  # the database failed: shown, and the form keeps its text
            log.warning("a fact could not be written", exc_info=True)
            self.note.setText(f"Not saved: {exc}")
            return False
        self.show_facts(self.keeper.facts)
        if done is not None:
            if closes_form:
                self.close_form()
            self.note.setText(done)
            self.changed.emit()
        return True
