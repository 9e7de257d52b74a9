"""`koroku search`: everything ever said, ranked, for people and for scripts.

Ranked by default (keywords and meaning fused); `--keyword` ranks by BM25 over the words
only (no embedding call); `--all-words` is the strict filter (every word, newest first).
`--json` gives each hit's full text, ids and scores; `--queries FILE` (or `-`) answers one
query per line, one JSON line each, in one process.

A search opens only what it needs — settings, the log, the search — not the whole runtime
(no agent, tools, MCP or sync), and imports google.genai only when a query is embedded,
so a cold start stays short; `--status` and `--backfill` open the full runtime.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from koroku_desktop.agent.recall import POOL
from koroku_desktop.app.search_session import (
    DB_ERRORS,
    Searcher,
    SearchUnavailable,
    open_searcher,
)
from koroku_desktop.cli.db_failure import database_failed

MARK_ON, MARK_OFF = "\x1b[1;33m", "\x1b[0m"


def add_arguments(search: argparse.ArgumentParser) -> None:
    """The options of `koroku search` (also parsed by the fast path in cli/__init__.py)."""
    search.add_argument("query", nargs="*", help="what to look for (words, or a question)")
    search.add_argument(
        "--json", action="store_true", help="the matches as JSON, with full text and scores"
    )
    search.add_argument(
        "-n", "--limit", type=int, default=20, help=f"most matches (default 20, at most {POOL})"
    )
    mode = search.add_mutually_exclusive_group()
    mode.add_argument(
        "--keyword", action="store_true", help="rank by keywords only (BM25), no embedding"
    )
    mode.add_argument(
        "--all-words",
        action="store_true",
        help="every word must appear (`word*` = prefix), newest first",
    )
    search.add_argument(
        "--queries",
        metavar="FILE",
        help="one query per line (`-`: stdin); one JSON line of results each",
    )
    search.add_argument(
        "--status", action="store_true", help="how much of the log is embedded for search"
    )
    search.add_argument(
        "--backfill", action="store_true", help="embed what is not embedded yet, now"
    )


def mode_of(args: argparse.Namespace) -> str:
    """`hybrid`, `keyword` or `all-words`."""
    return "keyword" if args.keyword else "all-words" if args.all_words else "hybrid"


def cmd_search(args: argparse.Namespace) -> int:
    """Print the matches best first (exit 1: none, 2: usage); see the module docstring."""
    from koroku_desktop.cli.text_input import argument_text

    query = argument_text(args.query)
    if args.queries is None and not query.strip():
        print("koroku search: say what to look for (or use --status)", file=sys.stderr)
        return 2
    if args.limit < 1:
        print("koroku search: --limit must be at least 1", file=sys.stderr)
        return 2
    try:
        lines = None if args.queries is None else read_queries(args.queries)
    except OSError as exc:
        print(f"koroku search: cannot read {args.queries}: {exc}", file=sys.stderr)
        return 2
    try:
        with open_searcher() as searcher:
            try:
                if lines is not None:
                    return asyncio.run(answer_lines(searcher, lines, args, sys.stdout))
                return asyncio.run(answer_one(searcher, query, args))
            except DB_ERRORS as exc:
                return database_failed(exc, searcher.log.path)
    except SearchUnavailable as exc:
        print(f"koroku: {exc}", file=sys.stderr)
        return exc.code


def read_queries(source: str) -> list[str]:
    """The lines of FILE (or stdin for `-`), invalid UTF-8 replaced."""
    if source == "-":
        return sys.stdin.buffer.read().decode("utf-8", "replace").splitlines()
    return Path(source).read_bytes().decode("utf-8", "replace").splitlines()


async def answer_lines(
    searcher: Searcher, lines: list[str], args: argparse.Namespace, out: IO[str]
) -> int:
    """One JSON line per query line (an empty line answers `error`); exit 0 when any hit."""
    found = False
    mode = mode_of(args)
    for line in lines:
        query = line.strip()
        if not query:
            record: dict[str, Any] = {"query": line, "hits": [], "error": "empty query"}
        else:
            hits, result = await searcher.run(query, args.limit, mode)
            record = {"query": query, "mode": mode if mode != "hybrid" else result.mode}
            record["note"] = result.note
            record["hits"] = hits
            found = found or bool(hits)
        out.write(json.dumps(record, ensure_ascii=False) + "\n")
        out.flush()
    return 0 if found else 1


async def answer_one(searcher: Searcher, query: str, args: argparse.Namespace) -> int:
    """Print one query's matches, as text or as a JSON list."""
    mode = mode_of(args)
    records, result = await searcher.run(query, args.limit, mode)
    if (result.note and mode == "hybrid") or (result.note and "cut" in result.note):
        print(f"koroku search: {result.note}", file=sys.stderr)
    if args.json:
        print(json.dumps(records, ensure_ascii=False, indent=2))
        return 0 if records else 1
    if not records:
        print(f"no match for {query!r}", file=sys.stderr)
        return 1
    from koroku_desktop.render.text import when

    color = sys.stdout.isatty() and "NO_COLOR" not in os.environ
    several = len(searcher.titles()) > 0  # conversations beyond the log's first one
    for record in records:
        line = highlight(record["snippet"], color)
        if record.get("source") == "memory":
            print(f"{record['file']}  {line}")
            continue
        who = "summary" if record["kind"] == "compaction" else record["role"] or record["kind"]
        stamp = when(datetime.fromisoformat(record["date"]).timestamp())
        where = f"[{record['conversation_title']}] " if several else ""
        print(f"#{record['seq']:<6} {stamp}  {who:<7}  {where}{line}")
    return 0


def highlight(snippet: str, color: bool) -> str:
    """The snippet on one line, `[[match]]` in bold yellow on a terminal (markers otherwise)."""
    line = " ".join(snippet.split())
    if not color:
        return line
    return line.replace("[[", MARK_ON).replace("]]", MARK_OFF)
