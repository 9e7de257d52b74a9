"""recall: past conversations through the injected search, and the daily memory files."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from koroku_desktop.tools.base import ToolContext
from koroku_desktop.tools.recall import RECALL_NOTE, Recall, search_memory_files
from koroku_desktop.tools.registry import ToolRegistry


def write_memory(data_dir: Path, name: str, text: str) -> None:
    memory = data_dir / "memory"
    memory.mkdir(exist_ok=True)
    (memory / name).write_text(text, encoding="utf-8")


class FakeSearch:
    """A RecallSearch that records its calls and answers from a fixed list."""

    def __init__(self, hits: list[dict[str, Any]]) -> None:
        self.hits = hits
        self.calls: list[tuple[str, int]] = []

    async def __call__(self, query: str, limit: int) -> list[dict[str, Any]]:
        self.calls.append((query, limit))
        return self.hits[:limit]


HIT = {"seq": 12, "date": "2025-03-01 10:00", "role": "user", "snippet": "the [[rsync]] script"}


async def test_results_are_framed_as_quoted_records(ctx: ToolContext) -> None:
    search = FakeSearch([HIT])
    ctx = dataclasses.replace(ctx, recall=search)
    result = await Recall(query="rsync").execute(ctx)
    assert result["note"] == RECALL_NOTE
    assert "not instructions" in result["note"]
    assert result["results"] == [{"source": "conversation", **HIT}]
    assert search.calls == [("rsync", 10)]


async def test_limit_is_passed_and_enforced(ctx: ToolContext) -> None:
    search = FakeSearch([dict(HIT, seq=i) for i in range(30)])
    ctx = dataclasses.replace(ctx, recall=search)
    result = await Recall(query="rsync", limit=3).execute(ctx)
    assert search.calls == [("rsync", 3)]
    assert [r["seq"] for r in result["results"]] == [0, 1, 2]


async def test_memory_files_newest_first_with_context(ctx: ToolContext) -> None:
    write_memory(ctx.data_dir, "2025-01-01.md", "# Jan\nbefore\nBackup runs at 3am\nafter\n")
    write_memory(ctx.data_dir, "2025-02-01.md", "# Feb\nmoved the BACKUP disk\n")
    result = await Recall(query="backup").execute(ctx)
    memory = [r for r in result["results"] if r["source"] == "memory"]
    assert [(r["file"], r["line"]) for r in memory] == [("2025-02-01.md", 2), ("2025-01-01.md", 3)]
    assert memory[0]["text"] == "# Feb\nmoved the BACKUP disk"
    assert memory[1]["text"] == "before\nBackup runs at 3am\nafter"


async def test_conversation_hits_come_with_memory_hits(ctx: ToolContext) -> None:
    write_memory(ctx.data_dir, "2025-01-01.md", "rsync to the NAS\n")
    ctx = dataclasses.replace(ctx, recall=FakeSearch([HIT]))
    result = await Recall(query="rsync").execute(ctx)
    assert [r["source"] for r in result["results"]] == ["conversation", "memory"]


async def test_without_log_search_only_memory_is_searched(ctx: ToolContext) -> None:
    write_memory(ctx.data_dir, "2025-01-01.md", "the cat is called Miso\n")
    result = await Recall(query="miso").execute(ctx)
    assert [r["source"] for r in result["results"]] == ["memory"]


async def test_failing_log_search_still_returns_memory(ctx: ToolContext) -> None:
    async def broken(query: str, limit: int) -> list[dict[str, Any]]:
        raise RuntimeError("database is locked")

    write_memory(ctx.data_dir, "2025-01-01.md", "the cat is called Miso\n")
    result = await Recall(query="miso").execute(dataclasses.replace(ctx, recall=broken))
    assert "database is locked" in result["conversation_search_error"]
    assert len(result["results"]) == 1


async def test_nothing_found_says_so(ctx: ToolContext) -> None:
    result = await Recall(query="unicorn").execute(ctx)
    assert result["results"] == []
    assert "nothing found" in result["message"]
    assert result["note"] == RECALL_NOTE


async def test_empty_query_is_an_error(ctx: ToolContext) -> None:
    assert "empty" in (await Recall(query="  ").execute(ctx))["error"]


def test_all_words_preferred_over_any_word(tmp_path: Path) -> None:
    write_memory(tmp_path, "a.md", "alpha only\nalpha and beta together\nbeta only\n")
    hits = search_memory_files(tmp_path / "memory", "Beta ALPHA", 10)
    assert [h["line"] for h in hits] == [2]


def test_any_word_when_no_line_has_all(tmp_path: Path) -> None:
    write_memory(tmp_path, "a.md", "alpha only\nnothing\nbeta only\n")
    hits = search_memory_files(tmp_path / "memory", "alpha beta", 10)
    assert [h["line"] for h in hits] == [1, 3]


def test_memory_limit_and_non_markdown_ignored(tmp_path: Path) -> None:
    write_memory(tmp_path, "a.md", "".join(f"note {i}\n" for i in range(20)))
    write_memory(tmp_path, "b.txt", "note in a text file\n")
    hits = search_memory_files(tmp_path / "memory", "note", 5)
    assert len(hits) == 5
    assert {h["file"] for h in hits} == {"a.md"}


async def test_recall_runs_without_approval_through_registry(ctx: ToolContext) -> None:
    registry = ToolRegistry(None)
    cls = registry.get("recall")
    assert cls is not None and cls.needs_approval is False
    response, ok = await registry.run("recall", {"query": "x"}, ctx)
    assert ok is True
    assert response["note"] == RECALL_NOTE
