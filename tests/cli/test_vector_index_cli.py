"""`koroku search` (a read-only process) maps the persisted vector index that a writing
process (here `koroku search --backfill`) keeps up to date, instead of reading every vector."""

from __future__ import annotations

import json
import sqlite3

import pytest

from koroku_desktop.store.vectors.store import INDEX_FOLDER
from tests.cli.test_recall_commands import Koroku, koroku

__all__ = ["koroku"]

pytestmark = pytest.mark.slow


def test_search_by_meaning_reads_the_persisted_index(koroku: Koroku) -> None:
    koroku.ok("ask", "my car is painted crimson")
    koroku.ok("ask", "buy oat milk and bread")
    koroku.ok("search", "--backfill")
    db = koroku.home / "koroku.db"
    conn = sqlite3.connect(db)
    (vectors,) = conn.execute("SELECT COUNT(*) FROM event_vectors").fetchone()
    (folder,) = (koroku.home / INDEX_FOLDER).iterdir()
    assert json.loads((folder / "meta.json").read_text())["rows"] == vectors

    # Blank the table's vectors in place (same rows): only the files still know the meaning.
    conn.execute("UPDATE event_vectors SET vector = zeroblob(length(vector))")
    conn.commit()
    conn.close()
    found = json.loads(koroku.ok("search", "automobile", "colour", "--json").stdout)
    assert found and "crimson" in found[0]["snippet"]

    # Without the files the same search reads the (blanked) table and finds nothing by meaning.
    for file in folder.iterdir():
        file.unlink()
    folder.rmdir()
    assert koroku.run("search", "automobile", "colour", "--json").returncode == 1


def test_search_finds_memory_files_by_meaning(koroku: Koroku) -> None:
    folder = koroku.home / "memory"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "30-11-2026.md").write_text("[10:00]: The user's car is painted crimson.\n\n")
    koroku.ok("ask", "buy oat milk and bread")
    koroku.ok("search", "--backfill")
    found = json.loads(koroku.ok("search", "automobile", "colour", "--json").stdout)
    memory = [f for f in found if f.get("source") == "memory"]
    assert memory and memory[0]["file"] == "memory/30-11-2026.md"
    assert "crimson" in memory[0]["snippet"]
    text = koroku.ok("search", "automobile", "colour").stdout
    assert "memory/30-11-2026.md  [10:00]: The user's car is painted crimson." in text
