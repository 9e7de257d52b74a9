"""How long the first turn after importing a long uncompacted history waits before it starts.

Builds a Koroku JSON export of N events (user/model text turns), imports it into a fresh
data dir, then runs one turn with an in-process model and measures, from `run_turn` until
the model is called: load (read + fold the live context) and building the request. Run:

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
from koroku_desktop.agent.loop import Agent, AgentOptions
from koroku_desktop.agent.ports import ApprovalDecision, ApprovalRequest
from koroku_desktop.domain.events import MessageEvent
from koroku_desktop.domain.model_io import ModelRequest
from koroku_desktop.domain.parts import TextPart
from koroku_desktop.store.event_log import SqliteEventLog
from koroku_desktop.store.portable import import_export
from koroku_desktop.tools.approval import ApprovalPolicy
from koroku_desktop.tools.registry import ToolRegistry


class _Yes:
    async def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        return ApprovalDecision(allowed=True)


class _Model:
    """Notes when the request arrives and how many contents it carries; answers at once."""

    def __init__(self) -> None:
        self.called_at: float | None = None
        self.contents = 0

    async def generate(self, request: ModelRequest, on_text_delta: object = None) -> MessageEvent:
        if self.called_at is None:  # the turn's request (later ones are the summarizer's)
            self.called_at = time.perf_counter()
            self.contents = len(request.contents)
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


async def _first_turn(home: Path) -> tuple[float, int, float, int]:
    log = SqliteEventLog(home / "koroku.db")
    model = _Model()
    options = AgentOptions("bench", 10, home, home, compact_at_tokens=100_000)
    agent = Agent(log, model, ToolRegistry(None), ApprovalPolicy(), _Yes(), options)
    compactor = Compactor()
    compactor.attach(agent)
    chunks: list[int] = []
    compactor.progress.append(lambda done, total: chunks.append(total))
    started = time.perf_counter()
    await agent.run_turn("hello after the import")
    ended = time.perf_counter()
    log.close()
    assert model.called_at is not None
    return model.called_at - started, model.contents, ended - started, max(chunks, default=0)


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        export = home / "export.json"
        t0 = time.perf_counter()
        _write_export(export, n)
        t1 = time.perf_counter()
        with SqliteEventLog(home / "koroku.db") as log:
            import_export(log, export)
        t2 = time.perf_counter()
        wait, contents, whole, chunks = asyncio.run(_first_turn(home))
        print(f"events: {n:,}")
        print(f"write export: {t1 - t0:.2f} s, import: {t2 - t1:.2f} s")
        print(f"first turn: request sent after {wait:.2f} s with {contents:,} contents")
        print(
            f"turn + compaction after it (in-process model, {chunks} summarizer requests): "
            f"{whole:.2f} s"
        )


if __name__ == "__main__":
    main()
