"""`koroku compact`, `koroku search` and `koroku export`: compaction and total recall.

Also the Koroku-export branch of `koroku import` (`import_koroku_export`), which reads a JSON
export back into an empty data dir event for event.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from koroku_desktop.app.exports import export_file, write_log_export
from koroku_desktop.app.imports import ImportRefused, WholeLogRefused, import_koroku
from koroku_desktop.app.runtime import Runtime
from koroku_desktop.blobs.blob_store import BlobStore
from koroku_desktop.cli.conversation_switch import add_conversation_option
from koroku_desktop.cli.refusal import refused
from koroku_desktop.cli.search_command import add_arguments as add_search_arguments
from koroku_desktop.cli.search_command import cmd_search
from koroku_desktop.cli.session import CliExit, open_runtime
from koroku_desktop.cli.terminal import TerminalApprover, compaction_progress
from koroku_desktop.domain.events import CompactionEvent
from koroku_desktop.domain.projection import Fix


def register(sub: Any) -> None:
    """Add the compaction and recall commands."""
    compact = sub.add_parser("compact", help="fold older turns into a summary now")
    add_conversation_option(compact)
    compact.set_defaults(handler=cmd_compact)

    search = sub.add_parser(
        "search",
        help="search everything ever said, ranked by keywords and meaning (exit 1: no match)",
    )
    add_search_arguments(search)
    search.set_defaults(handler=_search_or_status)

    export = sub.add_parser(
        "export", help="write the log (or one conversation) as Markdown or as JSON"
    )
    export.add_argument("--format", choices=("md", "json"), default="md")
    export.add_argument("-o", "--output", type=Path, help="file to write (default: stdout)")
    export.add_argument("--live", action="store_true", help="only what the model sees now")
    add_conversation_option(
        export,
        "only this conversation (an id prefix or its exact title; default: all of them, "
        "or with --live the most recent one); its JSON imports into another data dir",
    )
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
        with open_runtime(
            TerminalApprover(),
            need_key=True,
            front_end="compact",
            conversation=args.conversation,
        ) as runtime:
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


# -- search status ---------------------------------------------------------------------------


def _search_or_status(args: argparse.Namespace) -> int:
    """`koroku search`: `--status`/`--backfill` through the runtime, else the lean search."""
    return cmd_status(args) if args.status or args.backfill else cmd_search(args)


def cmd_status(args: argparse.Namespace) -> int:
    """`koroku search --status` / `--backfill`: how much of the log is embedded (and embed the
    rest now), through the full runtime (`--backfill` writes vectors and memory files)."""
    try:
        with open_runtime(
            TerminalApprover(), need_key=False, read_only=not args.backfill
        ) as runtime:
            return embedding_status(runtime, backfill=args.backfill)
    except CliExit as exc:
        return exc.code


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
    """Write the whole log, one conversation (`-c`) or a live context as Markdown or as
    importable JSON."""
    one = args.conversation is not None
    try:
        with open_runtime(
            TerminalApprover(), need_key=False, read_only=True, conversation=args.conversation
        ) as runtime:
            chosen = runtime.agent.conversation_id
            if args.output:
                count = export_file(
                    runtime.log,
                    chosen,
                    args.format,
                    args.live,
                    args.output,
                    runtime.attachments,
                    one=one,
                )
            else:
                count = write_log_export(
                    runtime.log,
                    chosen,
                    args.format,
                    args.live,
                    sys.stdout,
                    runtime.attachments,
                    one=one,
                )
    except CliExit as exc:
        return exc.code
    except BrokenPipeError:
        raise  # the reader went away: `cli.main` ends quietly
    except OSError as exc:
        return refused("export", exc, 1)
    if args.output:
        print(f"exported {count} event(s) to {args.output}", file=sys.stderr)
    return 0


# -- import ---------------------------------------------------------------------------------


def import_koroku_export(path: Path) -> int:
    """`koroku import` of a Koroku JSON export: a whole log into an empty data dir, event for
    event; one conversation's into any (merged: importing it again adds nothing)."""
    try:
        with open_runtime(TerminalApprover(), need_key=False) as runtime:
            outcome = import_koroku(runtime.log, path, BlobStore(runtime.paths.blobs))
    except CliExit as exc:
        return exc.code
    except WholeLogRefused as exc:
        return refused("import", exc, 1)
    except ImportRefused as exc:
        return refused("import", exc)
    print(outcome.line)
    print_repairs(outcome.repairs)
    try:
        compact_long_history()
    except CliExit as exc:
        return exc.code
    return 0


async def embed_imported(runtime: Runtime) -> None:
    """After an import: embed the imported history for search by meaning now, with progress
    on stderr. Without a key, or when the service fails, it is left for later (the app, or
    the next search, picks it up) and the import still succeeds."""
    worker = runtime.background_embedder
    if worker is None or not runtime.model.has_key:
        return
    model, dims = worker.embedder.model, worker.embedder.dimensions
    total = (await asyncio.to_thread(runtime.log.vectors.status, model, dims)).pending_events
    done = 0
    while done < total:
        step = await worker.catch_up(max_batches=8)
        done += step
        if worker.last_error:
            print(
                f"koroku: embedding paused after {done:,} of {total:,} events "
                f"({worker.last_error}); the rest is embedded later",
                file=sys.stderr,
            )
            break
        print(
            f"koroku: embedding for search by meaning: {min(done, total):,} of {total:,} events",
            file=sys.stderr,
            flush=True,
        )
        if step == 0:
            break
    await worker.stop()
    if runtime.search is not None:
        await runtime.search.warm()  # the persisted vector index, up to date


def compact_long_history() -> None:
    """After an import: compact a live context over the threshold now, showing progress,
    then embed the imported history (`embed_imported`).

    Like the compaction after a turn it runs outside the turn lease (turns elsewhere go on
    on the recent part) and takes the turn lease only to append the summary.

    Without a key it is left for the first turn (which meanwhile sends only recent turns).
    """
    with open_runtime(TerminalApprover(), need_key=False) as runtime:
        agent = runtime.agent

        async def run() -> None:
            await compact(runtime)
            await embed_imported(runtime)
            if runtime.search is not None:
                await runtime.search.warm()  # the keyword leg's index too, key or not

        async def compact(runtime: Runtime) -> None:
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
