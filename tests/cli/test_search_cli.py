"""`koroku search` for people and scripts, and its bad input: real subprocesses, the fake
Gemini server, a real SQLite file."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from tests.cli.test_recall_commands import Koroku, koroku
from tests.fakes.fixtures import fake_gemini
from tests.fakes.gemini_server import FakeGemini

__all__ = ["fake_gemini", "koroku"]

pytestmark = pytest.mark.slow


def vectors(home: Path) -> int:
    with sqlite3.connect(home / "koroku.db") as conn:
        return int(conn.execute("SELECT COUNT(*) FROM event_vectors").fetchone()[0])


def test_queries_json_keyword_ranking_limit_and_bad_queries(koroku: Koroku) -> None:
    koroku.ok("ask", "my car is painted crimson")
    koroku.ok("ask", "I was painting the fence all weekend")
    long_query = " ".join(["crimson"] + ["word"] * 10_000)
    lines = ["automobile colour", "", "the of and is", long_query, "nothing-like-this-zq"]
    done = koroku.ok("search", "--queries", "-", stdin="\n".join(lines) + "\n")
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(answers) == len(lines)  # one JSON line per query line, in order
    first = answers[0]
    assert first["mode"] == "hybrid" and first["note"] is None
    top = first["hits"][0]
    assert top["text"] == "my car is painted crimson"
    assert top["conversation_id"] == "default" and top["turn_id"] and top["event_id"]
    assert top["score"] > 0 and top["similarity"] > 0.5 and top["role"] == "user"
    assert answers[1] == {"query": "", "hits": [], "error": "empty query"}
    assert answers[2]["error"] if "error" in answers[2] else isinstance(answers[2]["hits"], list)
    assert "cut to its first" in answers[3]["note"]
    assert any("crimson" in h["text"] for h in answers[3]["hits"])
    assert answers[4]["hits"] == [] or answers[4]["hits"][0]["keyword_rank"] is None

    # --keyword: BM25 over any word, stemmed ("painted" finds "painting"), no embedding.
    ranked = json.loads(koroku.ok("search", "--keyword", "painted", "xylophone", "--json").stdout)
    assert {h["text"] for h in ranked} >= {
        "my car is painted crimson",
        "I was painting the fence all weekend",
    }
    assert all(h["similarity"] is None and h["keyword_rank"] for h in ranked)
    # --all-words keeps the strict filter.
    assert koroku.run("search", "--all-words", "painted", "xylophone").returncode == 1

    # --limit only cuts the ranking.
    five = json.loads(koroku.ok("search", "painted", "fence", "--json", "-n", "5").stdout)
    one = json.loads(koroku.ok("search", "painted", "fence", "--json", "-n", "1").stdout)
    assert [h["seq"] for h in one] == [h["seq"] for h in five[:1]]
    assert koroku.run("search", "").returncode == 2


def test_vectors_of_the_wrong_size_are_refused_and_nothing_is_lost(
    koroku: Koroku, fake_gemini: FakeGemini
) -> None:
    fake_gemini.wrong_dimensions = 100
    koroku.ok("ask", "my car is painted crimson")
    assert vectors(koroku.home) == 0  # nothing of the wrong answer was stored
    found = koroku.ok("search", "crimson")
    assert "crimson" in found.stdout
    assert "100 dimensions, not 768" in found.stderr
    fake_gemini.wrong_dimensions = None
    hits = json.loads(koroku.ok("search", "automobile", "colour", "--json").stdout)
    assert hits[0]["text"] == "my car is painted crimson" and hits[0]["similarity"]


def test_a_vector_index_left_by_another_model_is_rebuilt(koroku: Koroku, tmp_path: Path) -> None:
    other = Koroku(tmp_path / "other-home", koroku.workspace)
    other.home.mkdir()
    (other.home / "settings.json").write_text('{"embedding_model": "other-embedding"}')
    other.ok("ask", "the weather was awful and grey")
    other.ok("search", "weather")  # writes its vector-index/ for that model
    koroku.ok("ask", "my car is painted crimson")
    koroku.ok("search", "crimson")
    shutil.rmtree(koroku.home / "vector-index")
    shutil.copytree(other.home / "vector-index", koroku.home / "vector-index")
    hits = json.loads(koroku.ok("search", "automobile", "colour", "--json").stdout)
    assert hits[0]["text"] == "my car is painted crimson" and hits[0]["similarity"]
