"""`koroku ask`'s one-shot loop (cli/one_shot.py): what the core hands to `asyncio.to_thread`
runs on the loop's own thread, as the same calls with the same results and errors; name
resolution and a call given its own executor still run in a thread. And `ask` without an
mcp.json loads none of the MCP modules, while one with servers still starts them."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from koroku_desktop.agent.memory_events import MEMORY_KEY
from koroku_desktop.cli import one_shot
from koroku_desktop.may_block import may_block
from koroku_desktop.store import SqliteEventLog
from koroku_desktop.store.local_lease import SqliteTurnLock
from tests.fakes.gemini_server import FakeGemini
from tests.support.processes import ROOT, Koroku
from tests.support.waits import wait_until


def test_to_thread_runs_on_the_loops_thread_with_its_result_and_errors() -> None:
    seen: list[threading.Thread] = []

    def work(x: int) -> int:
        seen.append(threading.current_thread())
        if x < 0:
            raise ValueError("negative")
        return x * 2

    async def main() -> tuple[int, str, threading.Thread]:
        doubled = await asyncio.to_thread(work, 21)
        try:
            await asyncio.to_thread(work, -1)
        except ValueError as exc:
            failed = str(exc)
        return doubled, failed, threading.current_thread()

    doubled, failed, loop_thread = one_shot.run(main())
    assert (doubled, failed) == (42, "negative")
    assert seen == [loop_thread, loop_thread]


def test_name_lookups_and_own_executors_still_run_in_threads() -> None:
    async def main() -> tuple[str, str, list[object]]:
        loop = asyncio.get_running_loop()
        with ThreadPoolExecutor(1, thread_name_prefix="own") as own:
            in_own = await loop.run_in_executor(own, lambda: threading.current_thread().name)
        found = await loop.getaddrinfo("127.0.0.1", 80)
        return in_own, threading.current_thread().name, found

    in_own, loop_thread, found = one_shot.run(main())
    assert in_own.startswith("own") and in_own != loop_thread
    assert found  # resolved through the default executor's thread


def test_a_call_marked_may_block_runs_in_a_thread_with_the_callers_context() -> None:
    """The core's marker for a call that may wait for long: never on `ask`'s loop thread."""
    asked: contextvars.ContextVar[str] = contextvars.ContextVar("asked")

    async def main() -> tuple[tuple[str, str], str]:
        asked.set("the caller's")
        marked = await may_block(lambda: (threading.current_thread().name, asked.get()))
        return marked, threading.current_thread().name

    (thread, context), loop_thread = one_shot.run(main())
    assert thread.startswith("koroku-may-block") and thread != loop_thread
    assert context == "the caller's"


def test_name_lookups_run_in_a_thread_in_debug_mode_too(monkeypatch: pytest.MonkeyPatch) -> None:
    """In asyncio's debug mode (`-X dev`, PYTHONASYNCIODEBUG) the loop hands the default
    executor a logging wrapper of `socket.getaddrinfo`: a lookup that hangs must not hang
    the loop there either."""
    seen: list[threading.Thread] = []
    real = socket.getaddrinfo

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append(threading.current_thread())
        return real(*args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", spy)

    async def main() -> threading.Thread:
        loop = asyncio.get_running_loop()
        loop.set_debug(True)
        await loop.getaddrinfo("127.0.0.1", 80)
        return threading.current_thread()

    loop_thread = one_shot.run(main())
    assert seen and loop_thread not in seen


def test_a_cancelled_main_is_reported_like_asyncio_run() -> None:
    async def main() -> None:
        raise asyncio.CancelledError

    with pytest.raises(asyncio.CancelledError):
        one_shot.run(main())


PROBE = (
    "import sys\n"
    "from koroku_desktop.launcher import main\n"
    "code = main(['ask', 'hello?'])\n"
    "print(code, sorted(m for m in sys.modules if m.startswith('koroku_desktop.mcp')))\n"
)


def test_ask_without_mcp_json_loads_no_mcp_module(koroku: Koroku, fake_gemini: FakeGemini) -> None:
    fake_gemini.reply_text("hi there")
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        env=koroku.env(KOROKU_HOME=str(koroku.home)),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.stdout.splitlines() == ["hi there", "0 []"], done.stderr


def test_ask_with_an_mcp_server_still_starts_it(koroku: Koroku, fake_gemini: FakeGemini) -> None:
    koroku.home.mkdir(parents=True, exist_ok=True)
    broken = {"mcpServers": {"gone": {"command": str(koroku.home / "no-such-server")}}}
    (koroku.home / "mcp.json").write_text(json.dumps(broken))
    fake_gemini.reply_text("still answered")
    result = koroku.run("ask", "hello?", KOROKU_HOME=str(koroku.home))
    assert result.returncode == 0, result.stderr
    assert result.stdout == "still answered\n"
    assert "gone" in result.stderr  # it was started (and its failure told)


def _held_by_ask(koroku: Koroku) -> bool:
    return any(row[0] == "ask" for row in koroku.sql("SELECT front_end FROM turn_leases"))


@contextlib.contextmanager
def _ask_waiting_for_another_processs_memory_sync(
    koroku: Koroku,
) -> Iterator[tuple[SqliteTurnLock, subprocess.Popen[str]]]:
    """`koroku ask hello?` started while another process (the app) holds the memory files'
    lease, handed over once the ask holds its turn (in the sync, waiting); killed if it still
    runs at the end, and the app's lease let go."""
    path = koroku.home / "koroku.db"
    koroku.home.mkdir(parents=True, exist_ok=True)
    SqliteEventLog(path).close()
    app = SqliteTurnLock(path, "app")
    try:
        assert app.try_acquire(MEMORY_KEY, "syncing") is None
        ask = koroku.popen("ask", "hello?")
        try:
            wait_until(lambda: _held_by_ask(koroku), timeout=60)
            yield app, ask
        finally:
            if ask.poll() is None:
                ask.kill()
                ask.communicate()
    finally:
        app.close()


def test_ctrl_c_ends_an_ask_waiting_for_another_processs_memory_sync(
    koroku: Koroku, fake_gemini: FakeGemini
) -> None:
    """The memory files' lease held elsewhere (the app syncing them): the ask waits for it
    with its loop free, so one Ctrl-C ends it, and its turn lease is given back."""
    with _ask_waiting_for_another_processs_memory_sync(koroku) as (_app, ask):
        ask.send_signal(signal.SIGINT)
        ask.communicate(timeout=15)
        assert ask.returncode != 0
        assert not _held_by_ask(koroku)


def test_an_ask_waiting_for_another_processs_memory_sync_answers_once_it_ends(
    koroku: Koroku, fake_gemini: FakeGemini
) -> None:
    fake_gemini.reply_text("after the sync")
    with _ask_waiting_for_another_processs_memory_sync(koroku) as (app, ask):
        app.release(MEMORY_KEY)
        out, err = ask.communicate(timeout=60)
        assert (ask.returncode, out) == (0, "after the sync\n"), err


def test_ask_answers_while_an_mcp_servers_keyring_waits_to_be_unlocked(
    koroku: Koroku, fake_gemini: FakeGemini
) -> None:
    """An HTTP server's OAuth tokens are read from the keyring, which may wait for a person
    (an unlock dialog): the ask waits for its MCP servers only so long, then answers."""
    koroku.home.mkdir(parents=True, exist_ok=True)
    server = {"mcpServers": {"remote": {"url": "http://127.0.0.1:9/mcp"}}}
    (koroku.home / "mcp.json").write_text(json.dumps(server))
    keyring = koroku.home.parent / "keyring.json"
    fake_gemini.reply_text("answered meanwhile")
    ask = koroku.popen(
        "ask",
        "hello?",
        KOROKU_MCP_WAIT="1",
        PYTHON_KEYRING_BACKEND="tests.support.keyring_file.LockedKeyring",
        KOROKU_TEST_KEYRING=str(keyring),
    )
    try:
        wait_until(keyring.with_suffix(".asked").exists, timeout=60)
        wait_until(lambda: fake_gemini.requests, timeout=30)  # the turn went on meanwhile
    finally:
        keyring.with_suffix(".unlocked").touch()
        try:
            out, err = ask.communicate(timeout=60)
        finally:
            if ask.poll() is None:
                ask.kill()
                ask.communicate()
    assert (ask.returncode, out) == (0, "answered meanwhile\n"), err
