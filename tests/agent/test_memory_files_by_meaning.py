"""The memory files embedded by file and content hash: found by meaning, re-embedded when a
file changes (whoever changed it), dropped when removed, left alone when unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from koroku_desktop.agent.embedding import BackgroundEmbedder
from koroku_desktop.agent.recall import HybridSearch
from koroku_desktop.app.recall_wiring import memory_record, recall_tool_search
from koroku_desktop.store.vectors.embed_text import CHUNK_CHARS
from koroku_desktop.store.vectors.memory import MemoryVectors, memory_chunks
from koroku_desktop.store.vectors.store import INDEX_FOLDER
from tests.agent.test_recall_by_meaning import Setup, setup
from tests.fakes.gemini_server import FakeGemini

__all__ = ["setup"]

DAY = "30-11-2026.md"


@pytest.fixture
def mem(setup: Setup, koroku_home: Path) -> tuple[Setup, MemoryVectors, Path]:
    folder = koroku_home / "memory"
    folder.mkdir(exist_ok=True)
    memory = MemoryVectors(folder, koroku_home / INDEX_FOLDER)
    setup.search = HybridSearch(setup.log.vectors, setup.embedder, memory=memory)
    setup.background = BackgroundEmbedder(
        setup.log.vectors, setup.embedder, batch_events=2, retry_after_s=3600, memory=memory
    )
    return setup, memory, folder


async def _memory_found(s: Setup, query: str) -> list[str]:
    result = await s.search.search(query, 5)
    return [f"{m.file}: {m.text}" for m in result.memory]


async def test_a_memory_file_is_found_by_meaning(
    mem: tuple[Setup, MemoryVectors, Path], fake_gemini: FakeGemini
) -> None:
    s, _memory, folder = mem
    (folder / DAY).write_text("[10:00]: The user's car is painted crimson.\n\n")
    (folder / "29-11-2026.md").write_text("[09:00]: Bought oat milk and bread.\n\n")
    await s.background.catch_up()
    found = await _memory_found(s, "automobile colour")
    assert found == [f"{DAY}: [10:00]: The user's car is painted crimson."]
    result = await s.search.search("automobile colour", 5)
    assert memory_record(result.memory[0]) == {
        "source": "memory",
        "file": DAY,
        "text": "[10:00]: The user's car is painted crimson.",
        "found_by": ["meaning"],
    }
    assert (await s.search.search("automobile colour", 5, keyword_only=True)).memory == []


async def test_edited_files_are_embedded_again_unchanged_ones_are_not(
    mem: tuple[Setup, MemoryVectors, Path], fake_gemini: FakeGemini
) -> None:
    s, _memory, folder = mem
    (folder / DAY).write_text("[10:00]: The user's car is painted crimson.\n\n")
    (folder / "29-11-2026.md").write_text("[09:00]: The dog needs a walk.\n\n")
    await s.background.catch_up()
    sent = len(fake_gemini.embed_requests())
    await s.background.catch_up()
    assert len(fake_gemini.embed_requests()) == sent  # nothing changed: nothing embedded

    (folder / DAY).write_text("[10:00]: The dentist appointment moved to friday.\n\n")  # by hand
    assert await _memory_found(s, "automobile colour") != []  # old vectors until re-embedded
    await s.background.catch_up()
    texts = [
        part["text"]
        for r in fake_gemini.embed_requests()[sent:]
        for item in r.body["requests"]
        for part in item["content"]["parts"]
        if item.get("taskType") == "RETRIEVAL_DOCUMENT"
    ]
    assert texts == ["[10:00]: The dentist appointment moved to friday."]  # only that file
    assert await _memory_found(s, "automobile colour") == []
    assert await _memory_found(s, "physician appointment moved friday") == [
        f"{DAY}: [10:00]: The dentist appointment moved to friday."
    ]


async def test_removed_files_drop_their_vectors(
    mem: tuple[Setup, MemoryVectors, Path], koroku_home: Path, fake_gemini: FakeGemini
) -> None:
    s, _memory, folder = mem
    (folder / DAY).write_text("[10:00]: The user's car is painted crimson.\n\n")
    await s.background.catch_up()
    (folder / DAY).unlink()
    assert await _memory_found(s, "automobile colour") == []  # at once
    await s.background.catch_up()
    (cache,) = (koroku_home / INDEX_FOLDER).glob("memory-*.json")
    assert json.loads(cache.read_text())["entries"] == []
    assert oct(cache.stat().st_mode & 0o777) == "0o600"


async def test_an_outage_leaves_them_for_later_and_a_damaged_cache_is_rebuilt(
    mem: tuple[Setup, MemoryVectors, Path], koroku_home: Path, fake_gemini: FakeGemini
) -> None:
    s, _memory, folder = mem
    (folder / DAY).write_text("[10:00]: The user's car is painted crimson.\n\n")
    fake_gemini.embedding_outage = 503
    await s.background.catch_up()
    assert s.background.last_error is not None
    fake_gemini.embedding_outage = None
    await s.background.catch_up()
    assert await _memory_found(s, "automobile colour") != []
    (cache,) = (koroku_home / INDEX_FOLDER).glob("memory-*.json")
    cache.write_text("{damaged")
    assert await _memory_found(s, "automobile colour") == []  # unreadable: nothing, no crash
    await s.background.catch_up()
    assert await _memory_found(s, "automobile colour") != []


def test_memory_files_are_chunked_by_entries() -> None:
    entries = [f"[{n:02d}:00]: " + "word " * 150 for n in range(10)]
    pieces = memory_chunks(DAY, "h", "\n\n".join(entries) + "\n\n")
    assert all(len(p.text) <= CHUNK_CHARS for p in pieces) and len(pieces) > 1
    assert "\n\n".join(p.text for p in pieces) == "\n\n".join(e.strip() for e in entries)
    long = memory_chunks(DAY, "h", "x " * 3000)
    assert len(long) >= 2 and all(len(p.text) <= CHUNK_CHARS for p in long)


async def test_the_recall_tool_returns_memory_files_found_by_meaning(
    mem: tuple[Setup, MemoryVectors, Path], fake_gemini: FakeGemini
) -> None:
    s, _memory, folder = mem
    (folder / DAY).write_text("[10:00]: The user's car is painted crimson.\n\n")
    await s.background.catch_up()
    await s.agent.load()
    records = await recall_tool_search(s.search, s.agent)("automobile colour", 5)
    assert {"source": "memory", "file": DAY}.items() <= records[-1].items()
    assert "crimson" in records[-1]["text"]
