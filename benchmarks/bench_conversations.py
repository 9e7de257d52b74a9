"""Conversation benchmarks: switching between two long conversations, and opening the
sidebar on 1,000 conversations — in the real desktop app, offscreen.

Run by hand (not by pytest):  uv run python benchmarks/bench_conversations.py [--repeat N]
Prints a table and writes benchmarks/results/bench_conversations.json.

1. Switching between two conversations of `--messages` messages each (10,000 by default):
   `ConversationSwitcher.switch` as the person sees it — the registry read, the agent of the
   other conversation, its newest page of history shown in the chat window, the
   conversation list refreshed — then the rows laid out and painted. Both ways (A -> B,
   B -> A), median of `--repeat` rounds. Baseline: the same between two conversations of
   100 messages, in the same app and run. Also measured while a turn runs in the
   conversation left (it goes on there). Target < 100 ms. The first visit to each (its
   agent built, its live context read) is reported apart, twice: as the person sees it
   (its page and title shown, the composer accepting input; the live context is read
   after, ui/live_loads.py) and until its agent is ready (`ConversationSwitcher.live`
   done: the meter shown, a message sent then starts at once).
2. Opening the sidebar with `--conversations` conversations (1,000 by default): the
   registry read off the loop and shown in the sidebar, laid out and painted
   (`ConversationSwitcher.load` + a repaint). Baseline: 10 conversations, in the same run.
   Target < 200 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
sys.path.insert(0, str(ROOT))


def make_home(home: Path, messages: int, small: int, conversations: int) -> dict[str, str]:
    """Two long conversations, two short ones, and `conversations` more with a message each;
    their ids by name."""
    from benchmarks.chat_log import fill
    from koroku_desktop.agent.conversations import ConversationBook
    from koroku_desktop.store import SqliteEventLog

    home.mkdir(parents=True, exist_ok=True)
    log = SqliteEventLog(home / "koroku.db")
    book = ConversationBook(log)
    ids = {}
    for name, size in (("long A", messages), ("long B", messages), ("short A", small)):
        ids[name] = book.create(name).id
        fill(log, ids[name], size)
    for i in range(conversations):
        made = book.create(f"Conversation {i}")
        fill(log, made.id, 2)
    ids["short B"] = book.create("short B").id  # the most recent: the app opens it
    fill(log, ids["short B"], small)
    log.close()
    return ids


def paint(desk: Any) -> None:
    """Lay out every row and paint what shows, synchronously (what a shown view must do)."""
    desk.window.view.doItemsLayout()
    desk.window.view.viewport().repaint()
    desk.window.sidebar.list.doItemsLayout()
    desk.window.sidebar.list.viewport().repaint()


async def switch_ms(desk: Any, conversation_id: str) -> float:
    """One switch as the person sees it, in ms: its page and title shown, laid out and
    painted, the composer accepting input (the live context may still be read)."""
    t = time.perf_counter()
    assert await desk.conversations.switch(conversation_id)
    paint(desk)
    return (time.perf_counter() - t) * 1000


async def first_visit_ms(desk: Any, conversation_id: str) -> tuple[float, float]:
    """A first visit, in ms: as the person sees it (`switch_ms`), and until its agent is
    ready (its live context read, the meter shown: a message sent now starts at once)."""
    t = time.perf_counter()
    seen = await switch_ms(desk, conversation_id)
    live = desk.conversations.live
    assert live is not None
    await live
    return seen, (time.perf_counter() - t) * 1000


async def bench_switch(
    desk: Any, ids: dict[str, str], repeat: int, gate: asyncio.Event
) -> dict[str, Any]:
    """Long A <-> long B against short A <-> short B, idle and with a turn running."""

    first: list[tuple[float, float]] = []

    async def rounds(a: str, b: str) -> list[float]:
        # The first visits build each conversation's agent and read its live context.
        first.extend([await first_visit_ms(desk, a), await first_visit_ms(desk, b)])
        times = []
        for _ in range(repeat):
            times.append(await switch_ms(desk, a))
            times.append(await switch_ms(desk, b))
        return times

    long_times = await rounds(ids["long A"], ids["long B"])
    long_first = max(seen for seen, _ready in first)
    long_ready = max(ready for _seen, ready in first)
    short_times = await rounds(ids["short A"], ids["short B"])
    # A turn runs in long A (its model waits) while the person switches away and back.
    await desk.conversations.switch(ids["long A"])
    gate.clear()
    task = desk.bridge.send("slow: think about it")
    assert desk.bridge.busy  # booked at once; its model waits for the gate
    running = []
    for _ in range(repeat):
        running.append(await switch_ms(desk, ids["long B"]))
        running.append(await switch_ms(desk, ids["long A"]))
    gate.set()
    await task
    long_ms, short_ms = statistics.median(long_times), statistics.median(short_times)
    return {
        "switch_10000_ms": long_ms,
        "switch_10000_max_ms": max(long_times),
        "first_visit_10000_ms": long_first,
        "first_visit_10000_agent_ready_ms": long_ready,
        "switch_100_ms": short_ms,
        "ratio_10000_vs_100": long_ms / short_ms,
        "switch_with_a_turn_running_ms": statistics.median(running),
        "rows_shown": desk.window.model.rowCount(),
    }


async def bench_sidebar(desk: Any, conversations: int, repeat: int) -> dict[str, Any]:
    """The registry read and shown in the sidebar (laid out, painted): all conversations
    against the newest 10 of them (the baseline, in the same run)."""
    switcher = desk.conversations

    async def opened(keep: int | None) -> float:
        listed = switcher._listed

        def read() -> list[Any]:
            found = listed()
            return found if keep is None else found[:keep]

        switcher._listed = read
        try:
            t = time.perf_counter()
            await switcher.load()
            paint(desk)
            return (time.perf_counter() - t) * 1000
        finally:
            switcher._listed = listed

    full = statistics.median([await opened(None) for _ in range(repeat)])
    shown = len(switcher.conversations)
    small = statistics.median([await opened(10) for _ in range(repeat)])
    await switcher.load()  # the list as the app holds it: every conversation
    return {
        "conversations": shown,
        "sidebar_all_ms": full,
        "sidebar_10_ms": small,
        "ratio_all_vs_10": full / small,
    }


def run(work: Path, messages: int, conversations: int, repeat: int) -> dict[str, Any]:
    home = work / "home"
    t = time.perf_counter()
    ids = make_home(home, messages, 100, conversations)
    print(f"  (wrote the log in {time.perf_counter() - t:.1f} s)")
    os.environ.update(
        {
            "KOROKU_HOME": str(home),
            "QT_QPA_PLATFORM": "offscreen",
            "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
        }
    )
    import qasync
    from PySide6.QtWidgets import QApplication

    from koroku_desktop.app.config import default_paths
    from koroku_desktop.ui.app import open_desktop
    from tests.fakes.chat_model import FakeChatModel

    gate = asyncio.Event()

    async def reply(_request: Any) -> str:
        await gate.wait()
        return "Thought about it."

    app = QApplication(sys.argv[:1])
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    desk = open_desktop(app, default_paths(), use_tray=False, model=FakeChatModel(reply))

    async def main() -> dict[str, Any]:
        await desk.start()
        if desk.welcome is not None:
            desk.welcome.ok_button.click()
        await asyncio.sleep(0.2)
        if desk.warm_up is not None:  # the SDK's import (a thread) would take the GIL meanwhile
            await desk.warm_up
        out = await bench_sidebar(desk, conversations, repeat)
        out.update(await bench_switch(desk, ids, repeat, gate))
        await desk.quit()
        return out

    with loop:
        return loop.run_until_complete(main())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--conversations", type=int, default=1_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--dir", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        out = run(Path(tmp), args.messages, args.conversations, args.repeat)
    print(f"{'measure':<34} {'value':>12}")
    for key, value in out.items():
        shown = f"{value:,.1f}" if isinstance(value, float) else f"{value:,}"
        print(f"{key:<34} {shown:>12}")
    print("targets: switch_10000_ms and first_visit_10000_ms < 100, sidebar_all_ms < 200")
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "bench_conversations.json").write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
