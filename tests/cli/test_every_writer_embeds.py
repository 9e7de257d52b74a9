"""Every writer embeds: `koroku ask`, `chat` and `import` embed what they wrote, and every
search by meaning, surfacing or `recall` first catches up what other processes left; real
`koroku` subprocesses on one data dir, the fake Gemini's `:batchEmbedContents`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.test_recall_commands import Koroku, koroku
from tests.fakes.fixtures import fake_gemini
from tests.fakes.gemini_server import FakeGemini

__all__ = ["fake_gemini", "koroku"]

pytestmark = pytest.mark.slow


def waiting(koroku: Koroku) -> str:
    return koroku.ok("search", "--status").stdout


def test_asks_embed_what_they_wrote_and_search_finds_it_by_meaning(koroku: Koroku) -> None:
    koroku.ok("ask", "my car is painted crimson")
    for text in ("buy oat milk and bread", "the meeting moved to friday", "call the plumber"):
        koroku.ok("ask", text)
    assert " 0 events waiting" in waiting(koroku)
    hits = json.loads(koroku.ok("search", "what colour is my automobile", "--json").stdout)
    assert "crimson" in hits[0]["text"]


def test_chat_embeds_before_it_exits(koroku: Koroku) -> None:
    koroku.ok("chat", stdin="my dog is called Biscuit\nexit\n")
    assert " 0 events waiting" in waiting(koroku)


def test_an_outage_leaves_events_for_the_next_search_which_catches_up(
    koroku: Koroku, fake_gemini: FakeGemini
) -> None:
    fake_gemini.embedding_outage = 503
    koroku.ok("ask", "my car is painted crimson")  # the answer is not held up
    assert " 0 events waiting" not in waiting(koroku)
    fake_gemini.embedding_outage = None
    found = koroku.ok("search", "automobile", "colour", "--json")
    hits = json.loads(found.stdout)
    assert "crimson" in hits[0]["text"] and hits[0]["similarity"] is not None
    assert " 0 events waiting" in waiting(koroku)


def test_a_memory_from_before_a_clear_surfaces_after_an_outage(
    koroku: Koroku, fake_gemini: FakeGemini
) -> None:
    fake_gemini.embedding_outage = 503
    koroku.ok("ask", "my car is painted crimson")
    koroku.ok("chat", stdin="clear\nexit\n")
    fake_gemini.embedding_outage = None
    koroku.ok("ask", "what colour is my automobile?")
    last = fake_gemini.generate_requests()[-1]
    sent = json.dumps(last.contents[-1])
    assert "crimson" in sent  # remembered, though written while embedding was down


def test_import_embeds_with_progress(koroku: Koroku, tmp_path: Path) -> None:
    koroku.ok("ask", "my car is painted crimson")
    exported = tmp_path / "export.json"
    koroku.ok("export", "--format", "json", "-o", str(exported))
    fresh = Koroku(tmp_path / "fresh-home", koroku.workspace)
    done = fresh.ok("import", str(exported))
    assert "embedding for search by meaning: 2 of 2 events" in done.stderr
    assert " 0 events waiting" in waiting(fresh)


def test_import_without_a_key_leaves_embedding_for_later(koroku: Koroku, tmp_path: Path) -> None:
    koroku.ok("ask", "my car is painted crimson")
    exported = tmp_path / "export.json"
    koroku.ok("export", "--format", "json", "-o", str(exported))
    fresh = Koroku(tmp_path / "fresh-home", koroku.workspace)
    done = fresh.ok("import", str(exported), GEMINI_API_KEY="")
    assert "embedding" not in done.stderr
    assert " 2 events waiting" in fresh.ok("search", "--status").stdout
