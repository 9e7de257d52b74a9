"""TaskEditor: the New/Edit task form — when (once, recurring, cron) with the next runs in
words as you type, what (a prompt for the model or a plain reminder), which tools it may use
unattended, its tool budget and the conversation its results go to.

Nothing is written until Save; a schedule the core refuses shows its reason under the form
and Save stays off. The form hands a `TaskSpec` to the panel, which writes the events.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta

from PySide6.QtCore import QDate, QDateTime, Qt, QTime
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDateTimeEdit,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QSizePolicy,
    QSpinBox,
    QStackedWidget,
    QTimeEdit,
    QVBoxLayout,
    QWidget,
)

from koroku_desktop.app.task_wiring import local_zone
from koroku_desktop.domain.schedules import Schedule, ScheduleError, check, occurrences, zone
from koroku_desktop.domain.task_words import describe
from koroku_desktop.domain.tasks import Task, TaskSpec

KINDS = (("once", "Once"), ("rrule", "Recurring"), ("cron", "Cron expression"))
REPEATS = (
    ("FREQ=DAILY", "Every day"),
    ("FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR", "Every Monday–Friday"),
    ("FREQ=WEEKLY", "Every week (on the start's weekday)"),
    ("FREQ=MONTHLY", "Every month (on the start's day)"),
    ("FREQ=HOURLY", "Every hour"),
)
PREVIEW_RUNS = 3
CHECKED = Qt.CheckState.Checked
OWN_CONVERSATION = ""


def to_qt(moment: datetime) -> QDateTime:
    """A naive local date-time as Qt's, to the minute."""
    return QDateTime(
        QDate(moment.year, moment.month, moment.day), QTime(moment.hour, moment.minute)
    )


def from_qt(moment: QDateTime) -> datetime:
    """Qt's date-time as a naive local one, to the minute."""
    d, t = moment.date(), moment.time()
    return datetime(d.year(), d.month(), d.day(), t.hour(), t.minute())


class TaskEditor(QDialog):
    """The form for one task (new when `task` is None)."""

    def __init__(
        self,
        clock: Callable[[], datetime],
        tools: Sequence[str],
        conversations: Sequence[tuple[str, str]],
        task: Task | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Edit task" if task else "New task")
        self.setMinimumWidth(360)
        self._clock = clock
        self.task = task
        col = QVBoxLayout(self)
        form = QFormLayout()
        form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
        col.addLayout(form)
        self.title = QLineEdit(task.title if task else "")
        self.title.setPlaceholderText("e.g. Call the garage")
        form.addRow("&Title", self.title)

        self.kind = QComboBox()
        for key, label in KINDS:
            self.kind.addItem(label, key)
        form.addRow("&When", self.kind)
        self.pages = QStackedWidget()
        now = clock().astimezone()
        self.once_at = QDateTimeEdit(to_qt(now.replace(tzinfo=None) + timedelta(hours=1)))
        self.once_at.setDisplayFormat("yyyy-MM-dd HH:mm")
        self.once_at.setCalendarPopup(True)
        self.pages.addWidget(self.once_at)
        repeat = QWidget()
        row = QFormLayout(repeat)
        row.setContentsMargins(0, 0, 0, 0)
        self.repeat = QComboBox()
        for rule, label in REPEATS:
            self.repeat.addItem(label, rule)
        self.repeat.addItem("Custom RFC 5545 rule…", "")
        self.rule = QLineEdit()
        self.rule.setPlaceholderText("FREQ=WEEKLY;BYDAY=MO;BYHOUR=9")
        self.at_time = QTimeEdit(QTime(8, 0))
        self.at_time.setDisplayFormat("HH:mm")
        row.addRow(self.repeat)
        row.addRow("at", self.at_time)
        row.addRow(self.rule)
        self.pages.addWidget(repeat)
        self.cron = QLineEdit("0 8 * * 1-5")
        self.cron.setPlaceholderText("minute hour day month weekday")
        self.pages.addWidget(self.cron)
        form.addRow(self.pages)
        self._page_widgets: list[QWidget] = [self.once_at, repeat, self.cron]
        for page in self._page_widgets[1:]:
            page.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Ignored)
        self.tz = QComboBox()
        self.tz.setEditable(True)
        self.tz.addItems(sorted({local_zone(), "UTC"}))
        self.tz.setCurrentText(local_zone())
        form.addRow("Time &zone", self.tz)
        self.preview = QLabel()
        self.preview.setObjectName("Muted")
        self.preview.setWordWrap(True)
        form.addRow(self.preview)

        self.reminder = QCheckBox("Just remind me (a notification, no model call)")
        form.addRow(self.reminder)
        self.prompt = QPlainTextEdit(task.prompt if task else "")
        self.prompt.setPlaceholderText("What Koroku should do, e.g. summarise ~/notes/inbox.md")
        self.prompt.setMinimumHeight(70)
        form.addRow("&Prompt", self.prompt)
        self.tools = QListWidget()
        self.tools.setMaximumHeight(110)
        granted = set(task.allowed_tools) if task else set()
        for name in tools:
            item = QListWidgetItem(name)
            item.setCheckState(CHECKED if name in granted else Qt.CheckState.Unchecked)
            self.tools.addItem(item)
        form.addRow("Tools it may use\nunattended", self.tools)
        self.budget = QSpinBox()
        self.budget.setRange(0, 100)
        self.budget.setValue(task.tool_budget if task else 10)
        self.budget.setSuffix(" tool calls a run")
        form.addRow("&Budget", self.budget)
        self.conversation = QComboBox()
        self.conversation.addItem("Its own conversation", OWN_CONVERSATION)
        for cid, title in conversations:
            self.conversation.addItem(title, cid)
        form.addRow("&Results in", self.conversation)
        if task is not None:
            self._show(task)
            self.conversation.setEnabled(False)  # the runs so far are there
        self.error = QLabel()
        self.error.setObjectName("DangerNote")
        self.error.setWordWrap(True)
        col.addWidget(self.error)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        col.addWidget(self.buttons)
        for signal in (
            self.kind.currentIndexChanged,
            self.repeat.currentIndexChanged,
            self.once_at.dateTimeChanged,
            self.at_time.timeChanged,
            self.rule.textChanged,
            self.cron.textChanged,
            self.tz.currentTextChanged,
            self.reminder.toggled,
            self.prompt.textChanged,
        ):
            signal.connect(self.update_preview)
        self.update_preview()

    def _show(self, task: Task) -> None:
        """Fill the form from a task."""
        s = task.schedule
        self.kind.setCurrentIndex([k for k, _ in KINDS].index(s.kind))
        self.tz.setCurrentText(s.tz)
        self.reminder.setChecked(task.reminder)
        if s.kind == "once":
            self.once_at.setDateTime(to_qt(datetime.fromisoformat(s.rule).replace(tzinfo=None)))
        elif s.kind == "cron":
            self.cron.setText(s.rule)
        else:
            local = s.start.astimezone(zone(s.tz))
            self.at_time.setTime(QTime(local.hour, local.minute))
            rules = [r for r, _ in REPEATS]
            self.repeat.setCurrentIndex(rules.index(s.rule) if s.rule in rules else len(rules))
            if s.rule not in rules:
                self.rule.setText(s.rule)
        cid = self.conversation.findData(task.conversation_id)
        if cid < 0:
            self.conversation.addItem("Its conversation", task.conversation_id)
            cid = self.conversation.count() - 1
        self.conversation.setCurrentIndex(cid)

    # -- reading the form --------------------------------------------------------------

    def schedule(self) -> Schedule:
        """The schedule the form says; `ScheduleError` when it cannot be used."""
        tz = self.tz.currentText().strip()
        where = zone(tz)
        kind = self.kind.currentData()
        self._show_page([k for k, _ in KINDS].index(kind))
        now = self._clock()
        if kind == "once":
            local = from_qt(self.once_at.dateTime())
            schedule = Schedule("once", local.isoformat(timespec="minutes"), tz, now)
        elif kind == "cron":
            schedule = Schedule("cron", " ".join(self.cron.text().split()), tz, now)
        else:
            custom = self.repeat.currentData() == ""
            self.rule.setVisible(custom)
            self.at_time.setEnabled(not custom)
            rule = self.rule.text().strip() if custom else self.repeat.currentData()
            t = self.at_time.time()
            today = now.astimezone(where).replace(
                hour=t.hour(), minute=t.minute(), second=0, microsecond=0
            )
            schedule = Schedule("rrule", rule, tz, today)
        check(schedule)
        return schedule

    def _show_page(self, index: int) -> None:
        """Show the kind's fields, the stack as tall as they are (not as its tallest page)."""
        if self.pages.currentIndex() == index:
            return
        self.pages.setCurrentIndex(index)
        for i, page in enumerate(self._page_widgets):
            policy = QSizePolicy.Policy.Preferred if i == index else QSizePolicy.Policy.Ignored
            page.setSizePolicy(policy, policy)
        self.pages.adjustSize()

    def update_preview(self, *_args: object) -> None:
        """Say the schedule in words with its next runs, or why it cannot be used."""
        self.prompt.setEnabled(True)
        try:
            schedule = self.schedule()
        except (ScheduleError, ValueError) as exc:
            self.preview.setText("")
            self._refuse(str(exc))
            return
        now = self._clock()
        runs = list(itertools.islice(occurrences(schedule, now), PREVIEW_RUNS))
        words = describe(schedule, now)
        if len(runs) > 1:
            later = ", ".join(
                r.astimezone(zone(schedule.tz)).strftime("%a %d %b %H:%M") for r in runs[1:]
            )
            words += f"; then {later}"
        elif not runs:
            words += " — it will not run (the time has passed)"
        self.preview.setText(words)
        if not runs:
            self._refuse("That time has passed: pick a later one.")
        elif not self.reminder.isChecked() and not self.prompt.toPlainText().strip():
            self._refuse("Say what Koroku should do, or make it a plain reminder.")
        else:
            self._refuse("")

    def _refuse(self, why: str) -> None:
        self.error.setText(why)
        self.error.setVisible(bool(why))
        self.buttons.button(QDialogButtonBox.StandardButton.Save).setEnabled(not why)

    def draft(self) -> TaskSpec:
        """The task the form says (call after it was accepted)."""
        schedule = self.schedule()
        prompt = self.prompt.toPlainText().strip()
        title = self.title.text().strip() or (prompt.splitlines()[0][:60] if prompt else "Reminder")
        tools = tuple(
            self.tools.item(i).text()
            for i in range(self.tools.count())
            if self.tools.item(i).checkState() == CHECKED
        )
        return TaskSpec(
            title=title,
            prompt=prompt,
            reminder=self.reminder.isChecked(),
            schedule=schedule,
            allowed_tools=tools,
            tool_budget=self.budget.value(),
            conversation_id=str(self.conversation.currentData() or ""),
        )
