"""TasksPanel: the Scheduled tasks section of Settings — every task with its schedule in
words, its next run and its last outcome; New/Edit, Pause/Resume, Run now, Delete.

In Settings rather than the History viewer: Settings scrolls and works at 400 px (the
viewer's timeline needs about 1,500 px for its row of kind filters), and it is where the
person already manages what acts on their behalf (tool approvals, facts, MCP servers). Like
those sections, each button acts at once (Save and Cancel are about the form above): a task
is events in the log, and the list is read back from the log (off the event loop) after each
change and whenever the app sees the log change, so what `koroku tasks` or another app does
shows up here too. Narrow, the table keeps its first two columns; the details say the rest.
"""

from __future__ import annotations

import asyncio
import html
import logging
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from datetime import datetime
from typing import Any, Protocol

from PySide6.QtCore import Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QGridLayout,
    QGroupBox,
    QHeaderView,
    QLabel,
    QMessageBox,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from koroku_desktop.domain.schedules import zone
from koroku_desktop.domain.task_words import describe
from koroku_desktop.domain.tasks import Task, TaskSpec
from koroku_desktop.ui.tasks.editor import TaskEditor
from koroku_desktop.ui.widgets.controls import place_buttons
from koroku_desktop.ui.widgets.tasks import TaskSet

log = logging.getLogger(__name__)

COLUMNS = ("Task", "Schedule", "Next run", "Last run")
NARROW = 620
"""Below this width the table keeps Task and Schedule; the details say the rest."""


class TaskDesk(Protocol):
    """What the panel does to tasks (blocking calls run in a worker thread)."""

    def list_tasks(self) -> list[Task]: ...

    def save(self, draft: TaskSpec, task_id: str | None) -> None: ...

    def pause(self, task_id: str) -> None: ...

    def resume(self, task_id: str) -> None: ...

    def remove(self, task_id: str) -> None: ...

    def run_now(self, task: Task) -> Awaitable[object]: ...


EMPTY = (
    "No tasks yet. <b>New…</b> makes one, or ask Koroku: “every weekday at 8:00 "
    "summarise my inbox”."
)
CHOOSE = "Choose a task to see what it does and when it last ran."
"""What the details line says with no task selected (none at all; some listed)."""


def when(moment: datetime | None, tz: str, now: datetime) -> str:
    """A time for the list: today's and tomorrow's by the hour, others with the date."""
    if moment is None:
        return "—"
    where = zone(tz)
    local, today = moment.astimezone(where), now.astimezone(where).date()
    days = (local.date() - today).days
    day = {0: "today", 1: "tomorrow", -1: "yesterday"}.get(days, local.strftime("%a %d %b"))
    return f"{day} {local:%H:%M}"


def outcome_words(task: Task, now: datetime) -> str:
    """The last run in a few words: `ok, today 08:00 (late)`."""
    run = task.last_run
    if run is None:
        return "not run yet"
    words = run.outcome.replace("_", " ")
    late = " (late)" if run.late else ""
    return f"{words}, {when(run.started_at, task.schedule.tz, now)}{late}"


def tasks_group(panel: TasksPanel) -> QGroupBox:
    """The panel as Settings' "Scheduled tasks" group, read from the log now."""
    group = QGroupBox("Scheduled tasks")
    col = QVBoxLayout(group)
    note = QLabel(
        "Reminders and prompts that run on their own, even with the window closed. "
        "These buttons act at once."
    )
    note.setObjectName("Muted")
    note.setWordWrap(True)
    col.addWidget(note)
    col.addWidget(panel)
    panel.refresh()
    return group


class TasksPanel(QWidget):
    """The list of tasks and what can be done to them."""

    def __init__(
        self,
        desk: TaskDesk,
        clock: Callable[[], datetime],
        tools: Sequence[str],
        conversations: Callable[[], list[tuple[str, str]]],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.desk, self._clock = desk, clock
        self._tools, self._conversations = list(tools), conversations
        self.tasks: list[Task] = []
        self._jobs = TaskSet()
        col = QVBoxLayout(self)
        col.setContentsMargins(0, 8, 0, 0)
        self.table = QTreeWidget()
        self.table.setColumnCount(len(COLUMNS))
        self.table.setHeaderLabels(list(COLUMNS))
        self.table.setRootIsDecorated(False)
        self.table.setUniformRowHeights(True)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        header = self.table.header()
        header.setStretchLastSection(False)
        for c in range(len(COLUMNS)):  # title and schedule share the room, elided
            mode = QHeaderView.ResizeMode
            header.setSectionResizeMode(c, mode.Stretch if c < 2 else mode.ResizeToContents)
        self.table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.table.setMinimumHeight(150)
        self.table.itemSelectionChanged.connect(self._selected)
        self.table.itemDoubleClicked.connect(lambda *_: self.edit())
        col.addWidget(self.table, 1)
        self.details = QLabel()
        self.details.setWordWrap(True)
        self.details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.details.setObjectName("Muted")
        col.addWidget(self.details)
        self.new_button = self._button("&New…", self.new)
        self.edit_button = self._button("&Edit…", self.edit)
        self.pause_button = self._button("&Pause", self.toggle_pause)
        self.run_button = self._button("&Run now", self.run_now)
        self.delete_button = self._button("&Delete", self.delete)
        self.delete_button.setObjectName("Danger")
        self._grid = QGridLayout()
        self._grid.setSpacing(6)
        self._columns = 0
        col.addLayout(self._grid)
        self._arrange()
        self._selected()
        self.details.clear()  # until the first read says whether there are any

    def _button(self, label: str, slot: Callable[[], object]) -> QPushButton:
        button = QPushButton(label)
        button.clicked.connect(lambda: slot())
        return button

    # -- layout ------------------------------------------------------------------------

    def resizeEvent(self, event: QResizeEvent) -> None:
        """Narrow: two columns in the table and the buttons in two rows."""
        super().resizeEvent(event)
        self._arrange()

    def _arrange(self) -> None:
        narrow = self.width() < NARROW
        for c in (2, 3):
            self.table.setColumnHidden(c, narrow)
        buttons = [
            self.new_button,
            self.edit_button,
            self.pause_button,
            self.run_button,
            self.delete_button,
        ]
        columns = 3 if narrow else 6
        if columns == self._columns:
            return
        self._columns = columns  # one row: New, Edit, Pause, Run now, (room), Delete
        place_buttons(self._grid, buttons, 3 if narrow else None)

    # -- reading -----------------------------------------------------------------------

    def refresh(self) -> asyncio.Future[None]:
        """Read the tasks from the log again (off the loop) and show them."""
        return self._keep(self._load())

    async def _load(self) -> None:
        try:
            tasks = await asyncio.to_thread(self.desk.list_tasks)
        except Exception as exc:  # a database that cannot be read now
            log.warning("could not read the tasks", exc_info=True)
            self.details.setText(f"Could not read the tasks: {html.escape(str(exc))}")
            return
        self.show_tasks([t for t in tasks if not t.removed])

    def show_tasks(self, tasks: list[Task]) -> None:
        """Fill the table, keeping the selected task selected."""
        chosen = self.current()
        now = self._clock()
        self.tasks = sorted(tasks, key=lambda t: (t.paused, t.next_due or now.max, t.title))
        self.table.clear()
        for task in self.tasks:
            schedule = describe(task.schedule, now).split("; next:")[0]
            next_run = "paused" if task.paused else when(task.next_due, task.schedule.tz, now)
            if task.problem:
                next_run = "cannot run"
            item = QTreeWidgetItem([task.title, schedule, next_run, outcome_words(task, now)])
            item.setData(0, Qt.ItemDataRole.UserRole, task.id)
            item.setToolTip(0, task.prompt or "A reminder")
            item.setToolTip(1, schedule)
            self.table.addTopLevelItem(item)
            if chosen is not None and task.id == chosen.id:
                item.setSelected(True)
        self._selected()

    def current(self) -> Task | None:
        """The selected task."""
        items = self.table.selectedItems()
        if not items:
            return None
        wanted = items[0].data(0, Qt.ItemDataRole.UserRole)
        return next((t for t in self.tasks if t.id == wanted), None)

    def _selected(self) -> None:
        task = self.current()
        for b in (self.edit_button, self.pause_button, self.run_button, self.delete_button):
            b.setEnabled(task is not None)
        self.pause_button.setText("Resu&me" if task is not None and task.paused else "&Pause")
        if task is None:
            self.details.setText(CHOOSE if self.tasks else EMPTY)
            return
        now = self._clock()
        what = "A reminder (a notification, no model call)" if task.reminder else task.prompt
        tools = ", ".join(task.allowed_tools) or "none"
        lines = [
            f"<b>{html.escape(task.title)}</b> — {html.escape(describe(task.schedule, now))}",
            html.escape(what[:300]),
            f"Tools it may use unattended: {html.escape(tools)} · "
            f"budget {task.tool_budget} calls · last run: {outcome_words(task, now)}",
        ]
        if task.last_run is not None and task.last_run.detail:
            lines.append(html.escape(task.last_run.detail[:200]))
        if task.problem:
            lines.append(f"Cannot run: {html.escape(task.problem)}")
        self.details.setText("<br>".join(lines))

    # -- acting ------------------------------------------------------------------------

    def _keep(self, coro: Coroutine[Any, Any, None]) -> asyncio.Future[None]:
        return self._jobs.start(coro)

    def new(self) -> TaskEditor:
        """Open the form for a new task."""
        return self._open_editor(None)

    def edit(self) -> TaskEditor | None:
        """Open the form on the selected task."""
        task = self.current()
        return self._open_editor(task) if task is not None else None

    def _open_editor(self, task: Task | None) -> TaskEditor:
        editor = TaskEditor(self._clock, self._tools, self._conversations(), task, self)
        editor.accepted.connect(lambda: self._act(self.desk.save, editor.draft(), task and task.id))
        editor.open()
        return editor

    def toggle_pause(self) -> None:
        """Pause the selected task, or resume it when paused."""
        task = self.current()
        if task is not None:
            self._act(self.desk.resume if task.paused else self.desk.pause, task.id)

    def run_now(self) -> None:
        """Run the selected task now (its schedule stays as it is)."""
        task = self.current()
        if task is None:
            return

        async def run() -> None:
            self.details.setText(f"Running “{html.escape(task.title)}”…")
            await self.desk.run_now(task)
            await self._load()

        self._keep(run())

    def delete(self) -> None:
        """Delete the selected task after a yes (its runs stay in the log)."""
        task = self.current()
        if task is None:
            return
        answer = QMessageBox.question(
            self,
            "Delete task",
            f"Delete “{task.title}”? It will not run again; its past runs stay in the log.",
        )
        if answer == QMessageBox.StandardButton.Yes:
            self._act(self.desk.remove, task.id)

    def _act(self, change: Callable[..., object], *args: object) -> asyncio.Future[None]:
        async def act() -> None:
            try:
                await asyncio.to_thread(change, *args)
            except Exception as exc:  # noqa: BLE001 — a refusal or a database error: say it
                self.details.setText(f"Not done: {html.escape(str(exc))}")
                return
            await self._load()

        return self._keep(act())
