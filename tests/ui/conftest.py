"""Qt fixtures: one qasync loop for the session (never stopped), a wired Desktop per test."""

from __future__ import annotations

import asyncio
import gc
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import qasync
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from koroku_desktop.agent.ports import ChatModel
from koroku_desktop.app.config import default_paths
from koroku_desktop.domain.events import MessageEvent
from koroku_desktop.domain.parts import TextPart
from koroku_desktop.ui.app import Desktop, open_desktop
from tests.fakes.gemini_server import FakeGemini
from tests.support.waits import settle

_LOOP: qasync.QEventLoop | None = None


@pytest.fixture
def qloop(qapp: QApplication, qtbot: QtBot) -> Iterator[qasync.QEventLoop]:
    """The qasync loop, running on Qt's event loop while qtbot waits.

    It is created once and never stopped (stopping calls QApplication.exit, which breaks
    later tests); between tests it is unset as the running loop so other suites' asyncio
    tests are unaffected.
    """
    global _LOOP
    if _LOOP is None:
        _LOOP = qasync.QEventLoop(qapp, already_running=True)
    loop = _LOOP
    asyncio.events._set_running_loop(loop)
    asyncio.set_event_loop(loop)
    # What run_forever does (an "already running" qasync loop never calls it): a dropped async
    # generator is closed by a task on this loop, not synchronously wherever GC finds it.
    hooks = sys.get_asyncgen_hooks()
    sys.set_asyncgen_hooks(
        firstiter=loop._asyncgen_firstiter_hook, finalizer=loop._asyncgen_finalizer_hook
    )
    try:
        yield loop
    finally:
        pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
        for task in pending:
            task.cancel()
        if pending:
            qtbot.waitUntil(lambda: all(t.done() for t in pending), timeout=5000)
        # An async generator the test dropped (an HTTP stream of a closed MCP connection) is
        # closed by a task its finalizer schedules: run those now, while this loop is still
        # the running one (run later, with no running loop, httpx cannot tell its async
        # library). Such a stream often hangs in a reference cycle: collect it now.
        gc.collect()
        settle()
        closing = [t for t in asyncio.all_tasks(loop) if not t.done()]
        if closing:
            qtbot.waitUntil(lambda: all(t.done() for t in closing), timeout=5000)
        sys.set_asyncgen_hooks(*hooks)
        asyncio.events._set_running_loop(None)
        asyncio.set_event_loop(None)


def run(qtbot: QtBot, coro: Any, timeout: int = 15000) -> Any:
    """Drive a coroutine on the qasync loop from the test body and return its result."""
    task = asyncio.ensure_future(coro)
    qtbot.waitUntil(task.done, timeout=timeout)
    return task.result()


def said_and_embedded(desktop: Desktop, qtbot: QtBot, text: str) -> int:
    """The person said `text` in another conversation, and it is embedded (so a question
    by meaning brings it back as a remembered passage); its seq."""
    event = MessageEvent(role="user", origin="person", parts=[TextPart(text=text)])
    (stored,) = desktop.runtime.log.append("other", [event])
    worker = desktop.runtime.background_embedder
    assert worker is not None
    run(qtbot, worker.catch_up())
    return stored.seq


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A workspace folder for the file and shell tools."""
    folder = tmp_path / "workspace"
    folder.mkdir()
    monkeypatch.setenv("KOROKU_WORKSPACE", str(folder))
    return folder


@contextmanager
def running_desktop(
    qtbot: QtBot, model: ChatModel | None = None, *, show_window: bool = True
) -> Iterator[Desktop]:
    """The whole app on this test's data dir, window shown (or only in the tray); quit and
    deleted afterwards. `model` replaces Gemini as the agent's model (a `FakeChatModel`)."""
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    desk = open_desktop(app, default_paths(), use_tray=True, model=model)
    run(qtbot, desk.start(show_window=show_window))
    if show_window:
        qtbot.waitExposed(desk.window)
    warm_up = desk.warm_up
    if warm_up is not None:
        # The first turn of a worker process would otherwise pay the SDK's import inside the
        # test's own (5 s) waits; on a loaded machine that alone can take longer.
        qtbot.waitUntil(warm_up.done, timeout=60000)
    try:
        yield desk
    finally:
        run(qtbot, desk.quit())  # waits for the SDK warm-up too
        # Delete the Qt objects on this (the GUI) thread, never from a GC run elsewhere.
        for widget in (desk.popup, desk.window):
            widget.close()
            widget.deleteLater()
        desk.deleteLater()
        settle()


@pytest.fixture
def desktop(
    qloop: qasync.QEventLoop, qtbot: QtBot, fake_gemini: FakeGemini, workspace: Path
) -> Iterator[Desktop]:
    """The whole app wired to the fake Gemini server and a real log; window shown."""
    with running_desktop(qtbot) as desk:
        yield desk


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Stop the loop's worker threads (the loop itself is never stopped or closed)."""
    executor = getattr(_LOOP, "_QEventLoop__default_executor", None)
    if executor is not None:
        executor.shutdown(wait=True)


@pytest.fixture
def ev_desktop(
    qloop: qasync.QEventLoop,
    qtbot: QtBot,
    fake_gemini: FakeGemini,
    workspace: Path,
    koroku_home: Path,
) -> Iterator[Desktop]:
    """The whole app with the reference server-everything configured as `ev`, its prompts
    and resources listed (the MCP composer and progress tests start from it)."""
    from tests.mcp.conftest import everything_entry, write_config

    write_config(koroku_home / "mcp.json", {"ev": everything_entry()})
    with running_desktop(qtbot) as desk:
        manager = desk.runtime.mcp
        assert manager is not None
        qtbot.waitUntil(lambda: bool(manager.prompts() and manager.resources()), timeout=60000)
        yield desk
