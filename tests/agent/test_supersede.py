"""Regenerate and edit-and-resend over a real SQLite log, the lease and the strict fake Gemini.

The replaced turn stays in the log; the next request leaves it out, and the strict fake
accepts it (calls answered, signatures byte-for-byte). A writer that appends a turn meanwhile
makes the supersede fail cleanly, with nothing appended.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from koroku_desktop.agent.loop import Agent, AgentOptions
from koroku_desktop.agent.supersede import SupersedeError, last_turn
from koroku_desktop.blobs.attachments import AttachmentStore
from koroku_desktop.blobs.blob_store import BlobStore
from koroku_desktop.domain.attachment import PendingAttachment
from koroku_desktop.domain.events import MessageEvent, SupersededEvent
from koroku_desktop.domain.lease import LockHolder
from koroku_desktop.domain.parts import TextPart
from koroku_desktop.llm.gemini import GeminiChatModel
from koroku_desktop.store import SqliteEventLog
from koroku_desktop.store.local_lease import SqliteTurnLock
from koroku_desktop.tools.approval import ApprovalPolicy
from koroku_desktop.tools.registry import ToolRegistry
from tests.agent.conftest import MODEL, Brain, YesApprover
from tests.e2e.conftest import Koroku
from tests.fakes.fixtures import TEST_API_KEY
from tests.fakes.gemini_replies import (
    ReceivedRequest,
    Reply,
    TextReply,
    decode_b64,
    said_text,
)
from tests.fakes.gemini_server import FakeGemini
from tests.support.waits import async_wait_until

Build = Callable[[str], Agent]


@pytest.fixture
async def agents(
    fake_gemini: FakeGemini, koroku_home: Path, tmp_path: Path
) -> AsyncIterator[Build]:
    """Agents over one database file, each with its own log, lease and Gemini client."""
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("the notes\n", encoding="utf-8")
    fake_gemini.set_fallback(Brain())
    db = koroku_home / "koroku.db"
    closers: list[Callable[[], object]] = []
    models: list[GeminiChatModel] = []

    blobs = BlobStore(koroku_home / "blobs")

    def build(front_end: str) -> Agent:
        log, lock = SqliteEventLog(db), SqliteTurnLock(db, front_end)
        model = GeminiChatModel(TEST_API_KEY, timeout_s=10, retry_attempts=1, read_blob=blobs.read)
        closers.extend([lock.close, log.close])
        models.append(model)
        options = AgentOptions(MODEL, 10, workspace, koroku_home)
        return Agent(
            log, model, ToolRegistry(None), ApprovalPolicy(), YesApprover(), options, turn_lock=lock
        )

    yield build
    for model in models:
        await model.aclose()
    for close in closers:
        close()


def user_texts(request_contents: list[dict[str, object]]) -> list[str]:
    return [
        said_text(c["parts"])  # type: ignore[arg-type]
        for c in request_contents
        if c["role"] == "user" and not any("functionResponse" in p for p in c["parts"])  # type: ignore[union-attr, attr-defined]
    ]


async def test_regenerate_resends_the_same_message_without_the_old_turn(
    agents: Build, fake_gemini: FakeGemini
) -> None:
    agent = agents("app")
    await agent.run_turn("first question")
    await agent.run_turn("second question")  # reads notes.txt: a signed call and its response
    old = last_turn(agent.view)
    assert old is not None and old.text == "second question"
    fake_gemini.reset()
    fake_gemini.set_fallback(Brain())
    result = await agent.run_turn(None, replacing=old.turn_id)
    assert result.error is None and result.text == "I read the notes."
    first = fake_gemini.generate_requests()[0]
    assert user_texts(first.contents) == ["first question", "second question"]
    new = last_turn(agent.view)
    assert new is not None and new.turn_id != old.turn_id
    entries = agent.log.entries("default")
    marks = [e for e in entries if isinstance(getattr(e, "event", None), SupersededEvent)]
    assert [m.event.superseded_turn_id for m in marks] == [old.turn_id]  # type: ignore[union-attr]
    assert sum(1 for e in entries if getattr(e, "turn_id", "") == old.turn_id) >= 4, "kept"
    assert agent.view.pending_calls() == []


async def test_regenerate_and_edit_send_the_messages_attachment_again(
    agents: Build, fake_gemini: FakeGemini, koroku_home: Path
) -> None:
    agent = agents("app")
    png = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4
    shot = AttachmentStore(BlobStore(koroku_home / "blobs")).keep(
        PendingAttachment(png, "shot.png", "image/png")
    )
    fake_gemini.set_fallback(Brain(read_files=False))
    await agent.run_turn("what is in this picture?", attachments=[shot])
    first = last_turn(agent.view)
    assert first is not None and first.attachments == (shot,)
    for text in (None, "and its colours?"):
        turn = last_turn(agent.view)
        assert turn is not None
        fake_gemini.reset()
        fake_gemini.set_fallback(Brain(read_files=False))
        await agent.run_turn(text, replacing=turn.turn_id)
        [user] = [c for c in fake_gemini.generate_requests()[0].contents if c["role"] == "user"]
        inline = [p["inlineData"] for p in user["parts"] if "inlineData" in p]  # type: ignore[union-attr, operator, index]
        assert [decode_b64(i["data"]) for i in inline] == [png]
        assert said_text(user["parts"]) == (text or "what is in this picture?")  # type: ignore[arg-type]


async def test_edit_sends_the_edited_text_and_a_fresh_load_agrees(
    agents: Build, fake_gemini: FakeGemini
) -> None:
    agent = agents("app")
    await agent.run_turn("what is in notes?")
    turn = last_turn(agent.view)
    assert turn is not None
    fake_gemini.reset()
    fake_gemini.set_fallback(Brain(read_files=False))
    await agent.run_turn("what is in notes.txt, exactly?", replacing=turn.turn_id)
    assert user_texts(fake_gemini.generate_requests()[0].contents) == [
        "what is in notes.txt, exactly?"
    ]
    fresh = agents("other")
    await fresh.load()
    assert fresh.view.contents() == agent.view.contents()
    assert agent.log.search("notes") != []


async def test_a_turn_appended_meanwhile_makes_the_supersede_fail_cleanly(
    agents: Build, fake_gemini: FakeGemini
) -> None:
    app, terminal = agents("app"), agents("ask")
    await app.run_turn("question one")
    turn = last_turn(app.view)
    assert turn is not None
    # Another writer holds the lease and appends its turn while the app asks to regenerate.
    waited: list[LockHolder] = []
    app.hooks.on_turn_waiting.append(waited.append)
    async with terminal.hold_turn():
        regenerate = asyncio.ensure_future(app.run_turn(None, replacing=turn.turn_id))
        await async_wait_until(lambda: waited or regenerate.done())
        assert waited and not regenerate.done(), "the supersede waits for the lease"
        await terminal.append(
            [
                MessageEvent(role="user", origin="person", parts=[TextPart(text="question two")]),
                MessageEvent(role="model", origin="model", parts=[TextPart(text="answer two")]),
            ]
        )
        before = len(app.log.entries("default"))
    with pytest.raises(SupersedeError, match="moved on"):
        await regenerate
    assert len(app.log.entries("default")) == before, "nothing appended"
    assert not app.busy
    latest = last_turn(app.view)
    assert latest is not None and latest.text == "question two"
    # The newest turn can be regenerated from here.
    result = await app.run_turn(None, replacing=latest.turn_id)
    assert result.error is None
    request = fake_gemini.generate_requests()[-1]
    assert user_texts(request.contents)[-1] == "question two"
    assert user_texts(request.contents).count("question two") == 1


async def test_a_koroku_ask_process_appending_meanwhile_stops_the_supersede(
    agents: Build, fake_gemini: FakeGemini, koroku_home: Path, tmp_path: Path
) -> None:
    """A real `koroku ask` holds the lease while the app asks to regenerate: the app waits,
    then sees the other process's turn is now the last one and replaces nothing."""
    app = agents("app")
    await app.run_turn("question one")
    turn = last_turn(app.view)
    assert turn is not None
    reached, release = threading.Event(), threading.Event()

    def slow_answer(request: ReceivedRequest) -> Reply:
        reached.set()
        release.wait(30)
        return TextReply("answer two")

    fake_gemini.reply_with(slow_answer)
    other = Koroku(koroku_home, tmp_path / "workspace").popen("ask", "question two")
    try:
        assert await asyncio.to_thread(reached.wait, 60), "the ask process never asked"
        waited: list[LockHolder] = []
        app.hooks.on_turn_waiting.append(waited.append)
        regenerate = asyncio.ensure_future(app.run_turn(None, replacing=turn.turn_id))
        await async_wait_until(lambda: waited or regenerate.done())
        assert waited and not regenerate.done(), "the supersede waits for the other's lease"
        release.set()
        with pytest.raises(SupersedeError, match="moved on"):
            await regenerate
    finally:
        release.set()
        out, err = await asyncio.to_thread(other.communicate, timeout=60)
    assert other.returncode == 0, err
    assert "answer two" in out
    entries = app.log.entries("default")
    assert not any(isinstance(getattr(e, "event", None), SupersededEvent) for e in entries)
    latest = last_turn(app.view)
    assert latest is not None and latest.text == "question two"
