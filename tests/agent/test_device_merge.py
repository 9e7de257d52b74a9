"""Two devices, two data dirs (real SQLite files), synced both ways through a hub's order
(tests/agent/list_hub.py; tests/sync does the same over a real PostgreSQL): one live
context, whole turns, compactions covering by id, memory files rebuilt from the log; the
strict fake Gemini accepts the next request on both."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from koroku_desktop.agent.compaction import Compactor
from koroku_desktop.agent.loop import Agent, AgentOptions
from koroku_desktop.agent.memory_events import (
    CONFLICT_NOTE,
    memory_texts,
    record_edit,
    sync_memory_files,
)
from koroku_desktop.domain import ids
from koroku_desktop.domain.context import SUMMARY_PREFIX, ContextView
from koroku_desktop.domain.events import (
    CompactionEvent,
    MemoryEditEvent,
    MessageEvent,
    StoredEvent,
)
from koroku_desktop.domain.ids import legacy_id
from koroku_desktop.domain.parts import TextPart
from koroku_desktop.llm.gemini import GeminiChatModel
from koroku_desktop.store import SqliteEventLog
from koroku_desktop.tools.approval import ApprovalPolicy
from koroku_desktop.tools.registry import ToolRegistry
from tests.agent.conftest import MODEL, Brain, YesApprover
from tests.agent.list_hub import ListHub
from tests.fakes.fixtures import TEST_API_KEY
from tests.fakes.gemini_server import FakeGemini

LONG = "lorem ipsum dolor sit amet " * 40


@dataclass
class Device:
    """One device: its own data dir, log file, agent and compactor."""

    name: str
    home: Path
    log: SqliteEventLog
    agent: Agent
    compactor: Compactor
    model: GeminiChatModel
    hub: ListHub

    async def turn(self, text: str) -> None:
        result = await self.agent.run_turn(text)
        assert result.ok, result.error

    async def contents(self) -> list[dict[str, object]]:
        """The contents the next request would carry, after catching up with the log."""
        await self.agent.catch_up()
        return [c.model_dump(mode="json") for c in self.agent.view.contents()]

    def fresh_contents(self) -> list[dict[str, object]]:
        """The same, built from the log file from scratch (another process would see this)."""
        live = self.log.load_live("default")
        view = ContextView.from_tail(live.boundary, live.events, live.unloaded)
        return [c.model_dump(mode="json") for c in view.contents()]


def everything(log: SqliteEventLog) -> list[StoredEvent]:
    """Every event of a log in its entries order."""
    return [e for e in log.entries(limit=1_000_000) if isinstance(e, StoredEvent)]


def merge_both_ways(a: Device, b: Device) -> None:
    """What a sync does in the end: both logs hold every event, in the hub's order."""
    a.hub.both_ways(a.log, b.log)


def said(contents: list[dict[str, object]]) -> list[str]:
    """Every text said in the contents (the summary included), time notes left out."""
    out = []
    for content in contents:
        for part in content["parts"]:  # type: ignore[attr-defined]
            text = part.get("text")
            if text and not text.startswith("[") and not part.get("thought"):
                out.append(text)
    return out


@pytest.fixture
async def devices(
    fake_gemini: FakeGemini, tmp_path: Path
) -> AsyncIterator[Callable[[str], Device]]:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("the notes\n", encoding="utf-8")
    fake_gemini.set_fallback(Brain(read_files=False))
    built: list[Device] = []
    hub = ListHub()

    def build(name: str) -> Device:
        home = tmp_path / name
        home.mkdir()
        log = SqliteEventLog(home / "koroku.db", writer=f"test@{name}")
        model = GeminiChatModel(TEST_API_KEY, timeout_s=10, retry_attempts=1)
        options = AgentOptions(
            model=MODEL,
            max_tool_calls=10,
            workspace=workspace,
            data_dir=home,
            compact_at_tokens=1_000_000,
        )
        agent = Agent(log, model, ToolRegistry(None), ApprovalPolicy(), YesApprover(), options)
        compactor = Compactor(keep_fraction=0.0001)
        device = Device(name, home, log, agent, compactor, model, hub)
        built.append(device)
        return device

    yield build
    for device in built:
        await device.model.aclose()
        device.log.close()


def summary_of(contents: list[dict[str, object]]) -> str:
    first = contents[0]["parts"][0]["text"]  # type: ignore[index]
    assert isinstance(first, str) and first.startswith(SUMMARY_PREFIX)
    return first


async def test_a_compaction_on_a_while_b_adds_turns_keeps_b_turns_live_on_both(
    devices: Callable[[str], Device], fake_gemini: FakeGemini
) -> None:
    a, b = devices("A"), devices("B")
    for n in range(3):
        await a.turn(f"common {n} {LONG}")
    merge_both_ways(a, b)  # B starts as a copy of A
    await b.turn("B offline 1")
    await b.turn("B offline 2")
    compaction = await a.compactor.compact_now(a.agent)
    assert compaction is not None and compaction.covered_ids
    await a.turn("A after compacting")

    merge_both_ways(a, b)

    on_a, on_b = await a.contents(), await b.contents()
    assert on_a == on_b == a.fresh_contents() == b.fresh_contents()
    summary_of(on_a)
    texts = said(on_a)
    for text in ("B offline 1", "B offline 2", "A after compacting"):
        assert text in texts, f"{text!r} is not in the live context"
    assert not any(t.startswith("common 0") for t in texts), "the covered turn stays covered"
    # The next request goes out, accepted by the strict fake, on both devices.
    await a.turn("next on A")
    await b.turn("next on B")
    assert fake_gemini.generate_requests()[-1].last_text() == "next on B"
    # The memory file A's compaction wrote arrives on B, written from the log.
    merge_both_ways(a, b)
    sync_memory_files(a.log, "default", a.home)
    sync_memory_files(b.log, "default", b.home)
    files_a = {p.name: p.read_text() for p in (a.home / "memory").glob("*.md")}
    files_b = {p.name: p.read_text() for p in (b.home / "memory").glob("*.md")}
    assert files_a == files_b and len(files_a) == 1
    assert "SUMMARY" in next(iter(files_a.values()))


async def test_offline_turns_merge_as_whole_turns_in_one_order(
    devices: Callable[[str], Device], fake_gemini: FakeGemini
) -> None:
    a, b = devices("A"), devices("B")
    fake_gemini.set_fallback(Brain(read_files=True))  # every turn: call, response, answer
    await a.turn("common")
    merge_both_ways(a, b)
    for n in range(3):
        await a.turn(f"A{n}")
        await b.turn(f"B{n}")

    merge_both_ways(a, b)

    on_a, on_b = await a.contents(), await b.contents()
    assert on_a == on_b == a.fresh_contents()
    # Whole turns: a person's message, the call, the response, the answer, never mixed.
    for log in (a.log, b.log):
        live = log.load_live("default").events
        turns = [e.turn_id for e in live]
        blocks = [t for i, t in enumerate(turns) if i == 0 or turns[i - 1] != t]
        assert len(blocks) == len(set(blocks)) == 7, "a turn was interleaved with another"
        assert all(len([t for t in turns if t == turn]) == 4 for turn in blocks)
    await a.turn("after the merge on A")
    await b.turn("after the merge on B")


async def test_two_compactions_made_apart_the_later_wins_and_nothing_is_lost(
    devices: Callable[[str], Device],
) -> None:
    a, b = devices("A"), devices("B")
    for n in range(2):
        await a.turn(f"common {n} {LONG}")
    merge_both_ways(a, b)
    await a.turn(f"only A {LONG}")
    await b.turn(f"only B {LONG}")
    first = await a.compactor.compact_now(a.agent)
    second = await b.compactor.compact_now(b.agent)
    assert first is not None and second is not None
    assert first.base_id is None and second.base_id is None

    merge_both_ways(a, b)

    on_a, on_b = await a.contents(), await b.contents()
    assert on_a == on_b == b.fresh_contents()
    # B's compaction came later: its summary leads; what only A's covered is back verbatim.
    assert second.summary in summary_of(on_a)
    texts = said(on_a)
    assert any(t.startswith("only A") for t in texts)
    # Every person's message is either in the winner's coverage or in the context.
    people = [
        e for e in everything(a.log) if isinstance(e.event, MessageEvent) and e.event.is_user_turn
    ]
    live_ids = {m.event_id for m in a.agent.view.messages}
    for message in people:
        assert message.event_id in set(second.covered_ids or ()) | live_ids
    await a.turn("next")
    # The next compaction extends the winner and folds the returned turns in again.
    head = a.log.load_live("default").boundary
    assert head is not None and head.event == second
    third = await a.compactor.compact_now(a.agent)
    assert third is not None and third.base_id == head.event_id
    only_a = next(
        m
        for m in people
        if said([m.event.model_dump(mode="json")])
        and said([m.event.model_dump(mode="json")])[0].startswith("only A")
    )
    assert only_a.event_id in (third.covered_ids or ())
    assert not any(t.startswith("only A") for t in said(await a.contents()))


async def test_a_log_written_before_ids_projects_as_before_and_a_new_compaction_extends_it(
    devices: Callable[[str], Device],
) -> None:
    a = devices("A")
    for n in range(4):
        await a.turn(f"turn {n}")
    messages = [e for e in everything(a.log) if e.event.kind == "message"]
    kept = messages[4]  # the third turn's message: everything before it was summarised
    # A compaction as the code before this change wrote it: seqs only.
    old = CompactionEvent(
        summary="old summary", covers_up_to_seq=kept.seq - 1, kept_from_seq=kept.seq
    )
    a.log.append("default", [old])
    raw = a.log._rows("SELECT payload FROM events WHERE kind = 'compaction'")[0][0]
    assert "covered_ids" not in raw and "base_id" not in raw
    await a.turn("after the old compaction")

    live = a.log.load_live("default")
    assert live.boundary is not None and live.boundary.event == old
    assert [m.seq for m in live.events] == [
        m.seq for m in everything(a.log) if m.seq >= kept.seq and m.event.kind == "message"
    ]
    contents = await a.contents()
    assert contents == a.fresh_contents()
    assert said(contents)[0] == SUMMARY_PREFIX + "old summary"
    assert "turn 2" in said(contents) and "turn 1" not in said(contents)

    new = await a.compactor.compact_now(a.agent)
    assert new is not None and new.base_id == live.boundary.event_id
    assert await a.contents() == a.fresh_contents()
    assert "turn 2" not in said(await a.contents())


DAY = "03-02-2025"
TwoLogs = tuple[ListHub, Path, Path, SqliteEventLog, SqliteEventLog]


@contextmanager
def two_logs(tmp_path: Path, first: str) -> Iterator[TwoLogs]:
    """Two devices' homes and logs, both holding A's first memory edit (`first`, appended
    to one day), synced through the hub they go on syncing with."""
    a_home, b_home = tmp_path / "A", tmp_path / "B"
    a_home.mkdir()
    b_home.mkdir()
    hub = ListHub()
    with SqliteEventLog(a_home / "koroku.db") as a, SqliteEventLog(b_home / "koroku.db") as b:
        a.append("default", [MemoryEditEvent(day=DAY, op="append", text=first)])
        hub.both_ways(a, b)
        yield hub, a_home, b_home, a, b


def test_memory_edits_on_two_devices_merge_and_rebuild_identical_files(tmp_path: Path) -> None:
    day = DAY
    with two_logs(tmp_path, "[09:00]: first\n\n") as (hub, a_home, b_home, a, b):
        sync_memory_files(a, "default", a_home)
        sync_memory_files(b, "default", b_home)
        # Apart: A appends a summary, B appends one too, and the person edits the day on B.
        a.append("default", [MemoryEditEvent(day=day, op="append", text="[10:00]: from A\n\n")])
        b.append("default", [MemoryEditEvent(day=day, op="append", text="[10:05]: from B\n\n")])
        before = (b_home / "memory" / f"{day}.md").read_text()
        record_edit(b, "default", b_home, day, "[09:00]: first, corrected\n\n", before)
        hub.both_ways(a, b)
        sync_memory_files(a, "default", a_home)
        sync_memory_files(b, "default", b_home)
        text_a = (a_home / "memory" / f"{day}.md").read_text()
        text_b = (b_home / "memory" / f"{day}.md").read_text()
    assert text_a == text_b
    assert "first, corrected" in text_a and "from A" in text_a and "from B" in text_a
    assert (a_home / "memory" / f"{day}.md").stat().st_mode & 0o777 == 0o600


def test_two_edits_made_apart_keep_both_versions_visibly(tmp_path: Path) -> None:
    day = DAY
    with two_logs(tmp_path, "base\n") as (hub, a_home, b_home, a, b):
        record_edit(a, "default", a_home, day, "edited on A\n", "base\n")
        record_edit(b, "default", b_home, day, "edited on B\n", "base\n")
        hub.both_ways(a, b)
        texts_a = memory_texts(everything(a))
        texts_b = memory_texts(everything(b))
    assert texts_a == texts_b
    assert "edited on A" in texts_a[day] and "edited on B" in texts_a[day]
    assert CONFLICT_NOTE in texts_a[day]


async def test_a_turn_after_a_merge_comes_last_even_when_the_other_clock_runs_ahead(
    devices: Callable[[str], Device], fake_gemini: FakeGemini, monkeypatch: pytest.MonkeyPatch
) -> None:
    # This process's id clock moves an hour ahead here: put it back afterwards.
    monkeypatch.setattr(ids, "_last_ms", ids._last_ms)
    monkeypatch.setattr(ids, "_counter", ids._counter)
    a = devices("A")
    await a.turn("first on A")
    ahead = time.time() + 3_600  # the other device's clock is an hour ahead
    turn = legacy_id(ahead, "B's turn")
    a.log.merge(
        [
            StoredEvent(0, "default", ahead, said_by("user", "from B"), turn, turn, "ask@B"),
            StoredEvent(
                0,
                "default",
                ahead,
                said_by("model", "B's answer"),
                legacy_id(ahead + 1, "B's answer"),
                turn,
                "ask@B",
            ),
        ]
    )

    await a.turn("then on A")

    sent = fake_gemini.generate_requests()[-1]
    assert sent.last_text() == "then on A"
    texts = said(await a.contents())
    assert texts.index("from B") < texts.index("then on A")
    assert texts == said(a.fresh_contents())


def said_by(role: str, text: str) -> MessageEvent:
    return MessageEvent(role="user" if role == "user" else "model", parts=[TextPart(text=text)])
