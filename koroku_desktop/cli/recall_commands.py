"""`koroku compact`, `koroku search` and `koroku export`: compaction and total recall.

Also the Koroku-export branch of `koroku import` (`import_koroku_export`), which reads a JSON
export back into an empty data dir event for event.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from koroku_desktop.app.exports import write_log_export
from koroku_desktop.app.runtime import Runtime
from koroku_desktop.blobs.blob_store import BlobStore
from koroku_desktop.cli.session import CliExit, open_runtime
from koroku_desktop.cli.terminal import TerminalApprover
from koroku_desktop.cli.text_input import argument_text
from koroku_desktop.domain.events import CompactionEvent
from koroku_desktop.domain.projection import Fix
from koroku_desktop.domain.queries import SearchHit
from koroku_desktop.domain.recall import MemoryMatch
from koroku_desktop.maintenance.portable import (
    ExportFormatError,
    LogNotEmptyError,
    import_export,
)
from koroku_desktop.render.text import when

MARK_ON, MARK_OFF = "\x1b[1;33m", "\x1b[0m"


def register(sub: Any) -> None:
    """Add the compaction and recall commands."""
    compact = sub.add_parser("compact", help="fold older turns into a summary now")
    compact.set_defaults(handler=cmd_compact)

    search = sub.add_parser(
        "search",
        help="search everything ever said, by keywords and meaning, best first (exit 1: no match)",
    )
    search.add_argument("query", nargs="*", help="what to look for (words, or a question)")
    search.add_argument("--json", action="store_true", help="the matches as a JSON list")
    search.add_argument("-n", "--limit", type=int, default=20, help="most matches (default 20)")
    search.add_argument(
        "--keyword",
        action="store_true",
        help="keywords only: every word must appear (`word*` = prefix), newest first",
    )
    search.add_argument(
        "--status", action="store_true", help="how much of the log is embedded for search"
    )
    search.add_argument(
        "--backfill", action="store_true", help="embed what is not embedded yet, now"
    )
    search.set_defaults(handler=cmd_search)

    export = sub.add_parser("export", help="write the log as Markdown or as JSON")
    export.add_argument("--format", choices=("md", "json"), default="md")
    export.add_argument("-o", "--output", type=Path, help="file to write (default: stdout)")
    export.add_argument("--live", action="store_true", help="only what the model sees now")
    export.set_defaults(handler=cmd_export)


async def _compact_held(runtime: Runtime) -> CompactionEvent | None:
    """Compact under the turn lease (waits for a running turn), after catching up, with
    the memory files brought up to date first (even when there is nothing to compact)."""
    await runtime.sync_memory()
    async with runtime.agent.hold_turn():
        return await runtime.compactor.compact_now(runtime.agent)


def cmd_compact(args: argparse.Namespace) -> int:
    """Compact the live context now; print the token counts before and after."""
    try:
        with open_runtime(TerminalApprover(), need_key=True, front_end="compact") as runtime:
            compactor = runtime.compactor
            event = asyncio.run(_compact_held(runtime))
            problem = compactor.last_problem
    except CliExit as exc:
        return exc.code
    if event is None:
        print(f"koroku compact: {problem or 'nothing was compacted'}", file=sys.stderr)
        return 0 if problem and problem.startswith("nothing to compact") else 1
    print(
        f"compacted: {event.tokens_before or 0:,} → {event.tokens_after or 0:,} tokens "
        f"(summary of #{event.covers_up_to_seq} and before; kept from #{event.kept_from_seq})"
    )
    return 0


# -- search ---------------------------------------------------------------------------------


def highlight(snippet: str, color: bool) -> str:
    """The snippet on one line, `[[match]]` in bold yellow on a terminal (markers otherwise)."""
    line = " ".join(snippet.split())
    if not color:
        return line
    return line.replace("[[", MARK_ON).replace("]]", MARK_OFF)


def _who(hit: SearchHit) -> str:
    if hit.kind == "compaction":
        return "summary"
    return hit.role or hit.kind


def hit_json(hit: SearchHit) -> dict[str, Any]:
    """A search hit as JSON (the snippet keeps its `[[`/`]]` markers)."""
    return {
        "seq": hit.seq,
        "date": datetime.fromtimestamp(hit.created_at).isoformat(timespec="seconds"),
        "conversation_id": hit.conversation_id,
        "kind": hit.kind,
        "role": hit.role,
        "snippet": hit.snippet,
    }


def cmd_search(args: argparse.Namespace) -> int:
    """Print the matches: seq, date, role and a highlighted snippet, best first.

    By keywords and meaning when a key is set and the embedding service answers; otherwise
    (and with `--keyword`) by keywords only, newest first, saying so on stderr. Only
    `--backfill` writes (vectors); everything else opens the log read-only.
    """
    query = argument_text(args.query)
    if not query and not (args.status or args.backfill):
        print("koroku search: say what to look for (or use --status)", file=sys.stderr)
        return 2
    try:
        with open_runtime(
            TerminalApprover(), need_key=False, read_only=not args.backfill
        ) as runtime:
            if args.status or args.backfill:
                return embedding_status(runtime, backfill=args.backfill)
            hits, memory = find(runtime, query, max(1, args.limit), keyword=args.keyword)
    except CliExit as exc:
        return exc.code
    if args.json:
        found = [hit_json(h) for h in hits] + [memory_json(m) for m in memory]
        print(json.dumps(found, ensure_ascii=False, indent=2))
        return 0 if found else 1
    if not hits and not memory:
        print(f"no match for {query!r}", file=sys.stderr)
        return 1
    color = sys.stdout.isatty() and "NO_COLOR" not in os.environ
    for hit in hits:
        print(
            f"#{hit.seq:<6} {when(hit.created_at)}  {_who(hit):<7}  {highlight(hit.snippet, color)}"
        )
    for match in memory:
        print(f"memory/{match.file}  {highlight(match.text, False)}")
    return 0


def find(
    runtime: Runtime, query: str, limit: int, *, keyword: bool
) -> tuple[list[SearchHit], list[MemoryMatch]]:
    """The hybrid search's hits, or (keyword-only) the full-text matches, newest first; and
    the pieces of memory files close in meaning (none by keywords)."""
    memory: list[MemoryMatch] = []
    if not keyword and runtime.search is not None:
        result = asyncio.run(runtime.search.search(query, limit))
        memory = result.memory
        if result.mode == "hybrid" and result.hits:
            return [h.hit for h in result.hits], memory
        if result.note:
            print(f"koroku search: {result.note}", file=sys.stderr)
    # Nothing by meaning (or keywords only): every word, newest first; this search also
    # reads rows a read-only file has not folded into the index yet.
    return runtime.log.search(query, limit), memory


def memory_json(match: MemoryMatch) -> dict[str, Any]:
    """A memory-file piece as JSON (`source: memory`; event hits have a `seq` instead)."""
    return {
        "source": "memory",
        "file": f"memory/{match.file}",
        "snippet": match.text,
        "similarity": round(match.similarity, 4),
    }


def embedding_status(runtime: Runtime, *, backfill: bool) -> int:
    """Print how much of the log is embedded; with `backfill`, embed the rest first."""
    worker = runtime.background_embedder
    if worker is None:
        return 1
    model, dims = worker.embedder.model, worker.embedder.dimensions
    if backfill:
        total = asyncio.run(_backfill(runtime))
        print(f"embedded {total:,} events", file=sys.stderr)
    status = runtime.log.vectors.status(model, dims)
    done = status.last_seq and status.done_seq
    print(
        f"{model} ({dims} dimensions): embedded up to event #{done:,} of #{status.last_seq:,};"
        f" {status.pending_events:,} events waiting; {status.vectors:,} vectors stored"
    )
    if worker.last_error:
        print(f"embedding paused: {worker.last_error}", file=sys.stderr)
        return 1
    return 0


async def _backfill(runtime: Runtime) -> int:
    worker = runtime.background_embedder
    assert worker is not None
    await runtime.sync_memory()  # a writing front end takes in hand-edited files first
    total = 0
    while True:
        done = await worker.catch_up(max_batches=16)
        total += done
        if done == 0 or worker.last_error:
            await worker.stop()
            if runtime.search is not None:
                await runtime.search.warm()  # brings the persisted vector index up to date
            return total
        print(f"… {total:,} events embedded", file=sys.stderr)


# -- export ---------------------------------------------------------------------------------


def cmd_export(args: argparse.Namespace) -> int:
    """Write the whole log (or the live context) as Markdown or as importable JSON."""
    try:
        with open_runtime(TerminalApprover(), need_key=False, read_only=True) as runtime:
            if args.output:
                count = runtime.export_to_file(args.format, args.live, args.output)
            else:
                count = write_log_export(
                    runtime.log,
                    runtime.agent.conversation_id,
                    args.format,
                    args.live,
                    sys.stdout,
                    runtime.attachments,
                )
    except CliExit as exc:
        return exc.code
    except BrokenPipeError:
        raise  # the reader went away: `cli.main` ends quietly
    except OSError as exc:
        print(f"koroku export: {exc}", file=sys.stderr)
        return 1
    if args.output:
        print(f"exported {count} event(s) to {args.output}", file=sys.stderr)
    return 0


# -- import ---------------------------------------------------------------------------------


def import_koroku_export(path: Path) -> int:
    """`koroku import` of a Koroku JSON export: into an empty data dir, event for event."""
    try:
        with open_runtime(TerminalApprover(), need_key=False) as runtime:
            report = import_export(runtime.log, path, BlobStore(runtime.paths.blobs))
    except CliExit as exc:
        return exc.code
    except ExportFormatError as exc:
        print(f"koroku import: {exc}", file=sys.stderr)
        return 2
    except LogNotEmptyError as exc:
        print(f"koroku import: {exc}", file=sys.stderr)
        return 1
    print(
        f"imported {report.imported} event(s) from a Koroku export "
        f"(#{report.first_seq}–#{report.last_seq})"
    )
    print_repairs(report.repairs)
    try:
        compact_long_history()
    except CliExit as exc:
        return exc.code
    return 0


def compact_long_history() -> None:
    """After an import: compact a live context over the threshold now, showing progress.

    Like the compaction after a turn it runs outside the turn lease (turns elsewhere go on
    on the recent part) and takes the turn lease only to append the summary.

    Without a key it is left for the first turn (which meanwhile sends only recent turns).
    """
    with open_runtime(TerminalApprover(), need_key=False) as runtime:
        agent = runtime.agent

        async def run() -> None:
            await runtime.sync_memory()  # the imported summaries and memory edits: in files
            await agent.load()
            long = agent.view.unloaded is not None
            if not long and agent.estimate_context_tokens() < agent.options.compact_at_tokens:
                return
            if not runtime.model.has_key:
                print(
                    "koroku: the imported history is long; it will be compacted after the "
                    "next turn (no API key now)",
                    file=sys.stderr,
                )
                return
            print(
                "koroku: the imported history is long; compacting it now (turns may run "
                "meanwhile; Ctrl-C stops it safely and the next turn starts it again)",
                file=sys.stderr,
            )
            compactor = runtime.compactor
            task = await compactor.maybe_compact(agent)
            if (task is None or await compactor.wait() is None) and compactor.last_problem:
                print(f"koroku: not compacted: {compactor.last_problem}", file=sys.stderr)

        runtime.compactor.progress.append(compaction_progress)
        asyncio.run(run())


def compaction_progress(done: int, total: int) -> None:
    """Progress of a compaction that takes several requests, on stderr."""
    if total > 1:
        print(f"koroku: compacting a long history: part {done} of {total}", file=sys.stderr)


def print_repairs(repairs: Sequence[Fix]) -> None:
    """Say which imported events break Gemini's history rules and how requests repair them."""
    if not repairs:
        return
    print(
        f"note: {len(repairs)} problem(s) with tool calls and their responses; the log keeps "
        "them as imported, and every request to the model repairs them:",
        file=sys.stderr,
    )
    for fix in repairs[:20]:
        print(f"  #{fix.seq}: {fix.action}", file=sys.stderr)
