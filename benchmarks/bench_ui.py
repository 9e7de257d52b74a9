"""Desktop UI benchmarks: cold start on a big log, a 10,000-message view, stalls while streaming.

Run by hand (not by pytest):  uv run python benchmarks/bench_ui.py [--events N] [--repeat N]
Prints a table and writes benchmarks/results/bench_ui.json.

1. Cold start: a fresh subprocess starts the app on a log of `--events` events (100,000 by
   default) until the chat window is exposed (and until its history is in); google.genai
   must not be imported by then. Baseline: a fresh subprocess showing an empty QMainWindow.
2. Opening a 10,000-message conversation: `ChatWindow.set_history` + layout + first paint.
   Baseline: the same for 100 messages. The newest 500 events get rows at once; then every
   older page is given rows as scrolling up would, and the longest page is reported.
3. The longest event-loop stall while the fake Gemini server streams a long answer quickly
   (a 5 ms probe timer), and while a 3-second shell tool call runs. Baseline: the same probe
   on the idle app for as long.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable
from pathlib import Path
from typing import Any, TypeVar

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
sys.path.insert(0, str(ROOT))

from benchmarks.chat_log import make_log  # noqa: E402  (after the path)

BASELINE_CHILD = """
import sys, time
from PySide6.QtWidgets import QApplication, QMainWindow
from PySide6.QtCore import QTimer
app = QApplication(sys.argv[:1])
w = QMainWindow(); w.resize(900, 760); w.show()
def done():
    print("SHOWN", time.time(), flush=True); app.quit()
QTimer.singleShot(0, done)
app.exec()
"""

KOROKU_CHILD = """
import asyncio, sys, time
from PySide6.QtWidgets import QApplication
import qasync
from koroku_desktop.app.config import default_paths
from koroku_desktop.ui.app import Desktop, open_desktop
app = QApplication(sys.argv[:1])
loop = qasync.QEventLoop(app)
asyncio.set_event_loop(loop)
desk = open_desktop(app, default_paths(), use_tray=False)
async def main():
    desk.window.show()
    await asyncio.sleep(0)
    shown = time.time()
    genai_at_shown = "google.genai" in sys.modules
    desk.server.listen()
    desk.window.set_history(await desk.bridge.load_history(None, 400))
    loaded = time.time()
    await desk.conversations.live_loads.start(desk.runtime.agent)
    live = time.time()
    print("SHOWN", shown, loaded, int(genai_at_shown), desk.window.model.rowCount(), live,
          flush=True)
    if desk.warm_up is not None:
        desk.warm_up.cancel()
    await desk.quit()
with loop:
    loop.run_until_complete(main())
"""


def timed_child(code: str, env: dict[str, str]) -> list[str]:
    """Run `code` in a fresh interpreter; (start, the SHOWN line's fields)."""
    started = time.time()
    out = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    line = next(x for x in out.splitlines() if x.startswith("SHOWN"))
    return [str(started), *line.split()[1:]]


def bench_cold_start(events: int, repeat: int, work: Path) -> dict[str, Any]:
    """Fresh-process start to the chat window shown, on a big log, vs an empty window."""
    home = work / "home"
    t = time.perf_counter()
    make_log(home, events)
    print(f"  (wrote a {events:,}-event log in {time.perf_counter() - t:.1f} s)")
    env = {
        **os.environ,
        "KOROKU_HOME": str(home),
        "QT_QPA_PLATFORM": "offscreen",
        "GEMINI_API_KEY": "bench-key",
        "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
    }
    base, shown, loaded, genai, live, rows = [], [], [], [], [], 0
    for _ in range(repeat):
        b = timed_child(BASELINE_CHILD, env)
        base.append(float(b[1]) - float(b[0]))
        k = timed_child(KOROKU_CHILD, env)
        shown.append(float(k[1]) - float(k[0]))
        loaded.append(float(k[2]) - float(k[0]))
        genai.append(k[3] == "1")
        rows = int(k[4])
        live.append(float(k[5]) - float(k[0]))
    return {
        "events": events,
        "empty_window_s": statistics.median(base),
        "chat_window_shown_s": statistics.median(shown),
        "history_loaded_s": statistics.median(loaded),
        "live_context_loaded_s": statistics.median(live),
        "ratio_shown_vs_empty": statistics.median(shown) / statistics.median(base),
        "genai_imported_before_shown": any(genai),
        "rows_shown": rows,
    }


def _conversation(n: int) -> list[Any]:
    from koroku_desktop.domain.events import MessageEvent, StoredEvent
    from koroku_desktop.domain.parts import TextPart

    out = []
    for i in range(n):
        role = "user" if i % 2 == 0 else "model"
        text = (
            f"Question {i}?"
            if role == "user"
            else f"Answer **{i}**:\n\n- one\n- two\n\n```python\nprint({i})\n```\n\nDone."
        )
        out.append(
            StoredEvent(i + 1, "default", 0.0, MessageEvent(role=role, parts=[TextPart(text=text)]))
        )
    return out


def bench_open(desk: Any, app: Any, repeat: int) -> dict[str, Any]:
    """set_history + layout + first paint for 10,000 and for 100 messages."""
    window = desk.window

    def once(n: int) -> float:
        entries = _conversation(n)
        window.set_history([])
        window.view.doItemsLayout()
        t = time.perf_counter()
        window.set_history(entries)
        window.view.doItemsLayout()  # lay out every row (what a shown view must do)
        window.view.scrollToBottom()
        window.view.viewport().repaint()  # paint the visible rows, synchronously
        return time.perf_counter() - t

    def scroll_all() -> tuple[float, float, int]:
        """After opening 10,000: every held page given rows as scrolling up would (prepend,
        lay out, paint): the longest page, the total, the rows."""
        pages = []
        while window.model.held:
            t = time.perf_counter()
            window.view.show_held()
            window.view.doItemsLayout()
            window.view.viewport().repaint()
            pages.append(time.perf_counter() - t)
        return max(pages, default=0.0), sum(pages), window.model.rowCount()

    big = statistics.median(once(10_000) for _ in range(repeat))
    small = statistics.median(once(100) for _ in range(repeat))
    once(10_000)
    page, total, rows = scroll_all()
    return {
        "open_10000_s": big,
        "open_100_s": small,
        "ratio_10000_vs_100": big / small,
        "older_page_max_s": page,
        "older_pages_total_s": total,
        "rows_after_scrolling_up": rows,
    }


T = TypeVar("T")


async def longest_stalls(
    work: Awaitable[T], idle_s: float | None = None
) -> tuple[T, float, float, float]:
    """Await `work` while a 5 ms timer records the loop's longest gap, then do the same on the
    idle loop for as long (or `idle_s`): (result, duration, longest while working, idle)."""
    from PySide6.QtCore import QTimer

    gaps: list[float] = []
    last = [time.perf_counter()]

    def tick() -> None:
        now = time.perf_counter()
        gaps.append(now - last[0])
        last[0] = now

    timer = QTimer()
    timer.setInterval(5)
    timer.timeout.connect(tick)
    last[0] = time.perf_counter()
    timer.start()
    t = time.perf_counter()
    result = await work
    duration = time.perf_counter() - t
    timer.stop()
    busy = max(gaps)
    gaps.clear()
    last[0] = time.perf_counter()
    timer.start()
    await asyncio.sleep(duration if idle_s is None else idle_s)
    timer.stop()
    return result, duration, busy, max(gaps)


async def bench_stream(desk: Any, fake: Any, chars: int) -> dict[str, Any]:
    """Longest loop stall while a long answer streams in many quick chunks, vs idle."""
    paragraph = (
        "Koroku streams this answer in small pieces, with **bold** words, `code` and "
        "lists.\n\n- first item\n- second item\n\n"
    )
    text = (paragraph * (chars // len(paragraph) + 1))[:chars]
    fake.reply_text(text, chunks=max(50, chars // 40))
    if desk.warm_up is not None:
        await desk.warm_up
    result, duration, stream_max, idle_max = await longest_stalls(
        desk.bridge.send("write something long")
    )
    return {
        "answer_chars": len(result.text) if result else 0,
        "stream_s": duration,
        "max_stall_streaming_ms": stream_max * 1000,
        "max_stall_idle_ms": idle_max * 1000,
        "ratio_streaming_vs_idle": stream_max / idle_max,
    }


async def bench_tool_call(desk: Any, fake: Any, seconds: float) -> dict[str, Any]:
    """Longest loop stall while a shell tool call runs for `seconds`, vs the idle loop."""
    desk.runtime.policy.grant("bash", "session")
    fake.reply_calls(("bash", {"command": f"sleep {seconds}; echo slept"}))
    fake.reply_text("Slept well.")
    _, _, tool_max, idle_max = await longest_stalls(desk.bridge.send("take a nap"), seconds)
    return {
        "tool_call_s": seconds,
        "max_stall_tool_call_ms": tool_max * 1000,
        "max_stall_idle_tool_ms": idle_max * 1000,
        "ratio_tool_call_vs_idle": tool_max / idle_max,
    }


def in_process(work: Path, repeat: int, chars: int) -> dict[str, Any]:
    """Benchmarks 2 and 3 in this process, on a real app wired to the fake server."""
    home = work / "home2"
    os.environ.update(
        {
            "KOROKU_HOME": str(home),
            "QT_QPA_PLATFORM": "offscreen",
            "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
        }
    )
    from tests.fakes.gemini_server import FakeGemini

    fake = FakeGemini().start()
    os.environ["GOOGLE_GEMINI_BASE_URL"] = fake.base_url
    os.environ["GEMINI_API_KEY"] = "bench-key"
    import qasync
    from PySide6.QtWidgets import QApplication

    from koroku_desktop.app.config import default_paths
    from koroku_desktop.ui.app import open_desktop

    app = QApplication(sys.argv[:1])
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    desk = open_desktop(app, default_paths(), use_tray=False)

    async def main() -> dict[str, Any]:
        await desk.start()
        if desk.warm_up is not None:
            await desk.warm_up
        await asyncio.sleep(0.2)
        out = bench_open(desk, app, repeat)
        desk.window.set_history([])
        out.update(await bench_stream(desk, fake, chars))
        out.update(await bench_tool_call(desk, fake, 3.0))
        await desk.quit()
        return out

    try:
        with loop:
            return loop.run_until_complete(main())
    finally:
        fake.stop()


def main() -> None:
    """Run the three benchmarks and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--chars", type=int, default=40_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="koroku-bench-ui-") as tmp:
        work = Path(tmp)
        print("1. cold start")
        cold = bench_cold_start(args.events, args.repeat, work)
        print("2+3. open 10,000 messages; stream a long answer")
        rest = in_process(work, args.repeat, args.chars)
    figures = {**cold, **rest}
    rows = [
        ("cold start: empty QMainWindow (baseline)", f"{cold['empty_window_s'] * 1000:.0f} ms", ""),
        (
            f"cold start: chat window shown ({args.events:,} events)",
            f"{cold['chat_window_shown_s'] * 1000:.0f} ms",
            f"x{cold['ratio_shown_vs_empty']:.2f} of baseline; target < 1000 ms",
        ),
        (
            "cold start: history in the window",
            f"{cold['history_loaded_s'] * 1000:.0f} ms",
            f"{cold['rows_shown']} rows",
        ),
        (
            "cold start: live context folded (no compaction)",
            f"{cold['live_context_loaded_s'] * 1000:.0f} ms",
            "agent.load(), off the loop, after the window is filled",
        ),
        (
            "google.genai imported before the window",
            str(cold["genai_imported_before_shown"]),
            "must be False",
        ),
        ("open 100 messages (baseline)", f"{rest['open_100_s'] * 1000:.1f} ms", ""),
        (
            "open 10,000 messages",
            f"{rest['open_10000_s'] * 1000:.1f} ms",
            f"x{rest['ratio_10000_vs_100']:.1f} of 100; target < 300 ms",
        ),
        (
            "scrolling up through the rest: longest page",
            f"{rest['older_page_max_s'] * 1000:.1f} ms",
            f"{rest['older_pages_total_s'] * 1000:.0f} ms for all "
            f"{rest['rows_after_scrolling_up']:,} rows",
        ),
        ("max stall, idle (baseline)", f"{rest['max_stall_idle_ms']:.1f} ms", ""),
        (
            f"max stall, streaming {rest['answer_chars']:,} chars in {rest['stream_s']:.1f} s",
            f"{rest['max_stall_streaming_ms']:.1f} ms",
            f"x{rest['ratio_streaming_vs_idle']:.1f} of idle; target < 50 ms",
        ),
        (
            f"max stall, a {rest['tool_call_s']:.0f} s shell tool call",
            f"{rest['max_stall_tool_call_ms']:.1f} ms",
            f"x{rest['ratio_tool_call_vs_idle']:.1f} of idle; target < 100 ms",
        ),
    ]
    width = max(len(r[0]) for r in rows)
    print()
    for name, value, note in rows:
        print(f"{name:<{width}}  {value:>10}  {note}")
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "bench_ui.json").write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
