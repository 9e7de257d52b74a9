"""How long turns after importing a long uncompacted history wait before they start.

Builds a Koroku JSON export of N events (user/model text turns), imports it into a fresh
data dir, then runs two turns back to back with an in-process model (a summarizer request
takes SUMMARY_S) on a real SQLite log and turn lease, and measures when each turn's request
goes out: the first after loading the live context, the second while the compaction the
first started runs in the background. For comparison the same with the compaction awaited
inside the turn lease (how it ran before). Run:

    uv run python benchmarks/bench_big_import.py [N]

Prints the phases in seconds. Not a test: timing belongs here, not in asserts.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from koroku_desktop.agent.compaction import Compactor
from koroku_desktop.agent.hooks import TurnResult
from koroku_desktop.agent.loop import Agent, AgentOptions
from koroku_desktop.agent.ports import ApprovalDecision, ApprovalRequest
from koroku_desktop.agent.summarizer import SUMMARIZER_INSTRUCTION
from koroku_desktop.domain.events import MessageEvent
from koroku_desktop.domain.model_io import ModelRequest
from koroku_desktop.domain.parts import TextPart
from koroku_desktop.maintenance.portable import import_export
from koroku_desktop.store import SqliteEventLog
from koroku_desktop.store.local_lease import SqliteTurnLock
from koroku_desktop.tools.approval import ApprovalPolicy
from koroku_desktop.tools.registry import ToolRegistry


class _Yes:
    async def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        return ApprovalDecision(allowed=True)


SUMMARY_S = 0.05
"""How long the in-process summarizer takes per request (the real service: seconds)."""


class _Model:
    """Notes when each turn's request arrives and its size; summarizes in SUMMARY_S."""

    def __init__(self) -> None:
        self.turn_requests: list[tuple[float, int]] = []
        self.summaries = 0

    async def generate(self, request: ModelRequest, on_text_delta: object = None) -> MessageEvent:
        if request.system_instruction == SUMMARIZER_INSTRUCTION:
            self.summaries += 1
            await asyncio.sleep(SUMMARY_S)
        else:
            self.turn_requests.append((time.perf_counter(), len(request.contents)))
        return MessageEvent(role="model", origin="model", parts=[TextPart(text="ok")])

    async def count_tokens(self, request: ModelRequest) -> int:
        return sum(len(p.model_dump_json()) for c in request.contents for p in c.parts) // 4


def _write_export(path: Path, n: int) -> None:
    with path.open("w", encoding="utf-8") as out:
        out.write('{"format": "koroku-export", "version": 1, "scope": "all", "exported_at": 0,\n')
        out.write('"events": [')
        for seq in range(1, n + 1):
            role = "user" if seq % 2 else "model"
            payload = {
                "kind": "message",
                "role": role,
                "parts": [{"kind": "text", "text": f"message {seq}: " + "some words " * 12}],
            }
            record = {
                "seq": seq,
                "conversation_id": "default",
                "created_at": 1.0 * seq,
                "kind": "message",
                "schema_version": 1,
                "payload": payload,
            }
            out.write(("," if seq > 1 else "") + "\n" + json.dumps(record))
        out.write("\n]}\n")


async def _two_turns(home: Path, *, inline: bool) -> dict[str, float]:
    """Two turns back to back; `inline` awaits the compaction inside the first turn's lease."""
    log = SqliteEventLog(home / "koroku.db")
    lock = SqliteTurnLock(home / "koroku.db", "bench")
    model = _Model()
    options = AgentOptions("bench", 10, home, home, compact_at_tokens=100_000)
    agent = Agent(log, model, ToolRegistry(None), ApprovalPolicy(), _Yes(), options, turn_lock=lock)
    compactor = Compactor()
    if inline:
        # How it ran before: the whole compaction inside the first turn's lease.
        async def compact_inside(agent: Agent, result: TurnResult) -> None:
            size = await compactor.prompt_tokens(agent)
            if size >= options.compact_at_tokens or agent.overflowing:
                await compactor._compact(agent, size, hold_turn=False)

        agent.after_turn.append(compact_inside)
    else:
        compactor.attach(agent)
    chunks: list[int] = []
    compactor.progress.append(lambda done, total: chunks.append(total))
    started = time.perf_counter()
    await agent.run_turn("hello after the import")
    await agent.run_turn("and a second question")
    second_done = time.perf_counter()
    await compactor.wait()
    compacted = time.perf_counter()
    lock.close()
    log.close()
    (first_at, contents), (second_at, _) = model.turn_requests[:2]
    return {
        "first": first_at - started,
        "contents": contents,
        "second": second_at - started,
        "second_done": second_done - started,
        "compacted": compacted - started,
        "summaries": model.summaries,
        "chunks": max(chunks, default=0),
    }


def _fresh_import(home: Path, export: Path) -> float:
    (home / "koroku.db").unlink(missing_ok=True)
    t = time.perf_counter()
    with SqliteEventLog(home / "koroku.db") as log:
        import_export(log, export)
    return time.perf_counter() - t


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        export = root / "export.json"
        t0 = time.perf_counter()
        _write_export(export, n)
        print(f"events: {n:,}; write export: {time.perf_counter() - t0:.2f} s")
        for inline in (False, True):
            home = root / ("inline" if inline else "background")
            home.mkdir()
            took = _fresh_import(home, export)
            r = asyncio.run(_two_turns(home, inline=inline))
            how = "compaction inside the turn lease (before)" if inline else "background"
            print(f"\n{how}: import {took:.2f} s")
            print(
                f"  first turn: request sent after {r['first']:.2f} s, {r['contents']:,} contents"
            )
            second, done = r["second"], r["second_done"]
            print(f"  second turn: request sent after {second:.2f} s, answered after {done:.2f} s")
            print(
                f"  compaction done after {r['compacted']:.2f} s "
                f"({r['summaries']} summarizer requests of {SUMMARY_S * 1000:.0f} ms)"
            )


if __name__ == "__main__":
    main()
