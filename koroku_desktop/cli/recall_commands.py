"""`koroku compact`, `koroku search` and `koroku export`: compaction and total recall.

Also the Koroku-export branch of `koroku import` (`import_koroku_export`), which reads a JSON
export back into an empty data dir event for event.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sys
import time
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any, TextIO

from koroku_desktop.cli.session import CliExit, open_runtime
from koroku_desktop.cli.terminal import FAIL_MARK, OK_MARK, TerminalApprover, response_ok
from koroku_desktop.domain.events import (
    ClearedEvent,
    CompactionEvent,
    DamagedEvent,
    LogEntry,
    MessageEvent,
)
from koroku_desktop.domain.parts import (
    CodeExecutionResultPart,
    ExecutableCodePart,
    FunctionCallPart,
    FunctionResponsePart,
    Part,
    TextPart,
)
from koroku_desktop.domain.queries import SearchHit
from koroku_desktop.store.portable import (
    ExportFormatError,
    LogNotEmptyError,
    exported_entries,
    import_export,
    write_export,
)

MARK_ON, MARK_OFF = "\x1b[1;33m", "\x1b[0m"
MD_TOOL_CHARS = 4_000
"""Tool results longer than this are cut in the Markdown export (the JSON keeps them whole)."""


def register(sub: Any) -> None:
    """Add the compaction and recall commands."""
    compact = sub.add_parser("compact", help="fold older turns into a summary now")
    compact.set_defaults(handler=cmd_compact)

    search = sub.add_parser(
        "search", help="search everything ever said, newest first (exit 1: no match)"
    )
    search.add_argument("query", nargs="+", help="words that must all appear; `word*` = prefix")
    search.add_argument("--json", action="store_true", help="the matches as a JSON list")
    search.add_argument("-n", "--limit", type=int, default=20, help="most matches (default 20)")
    search.set_defaults(handler=cmd_search)

    export = sub.add_parser("export", help="write the log as Markdown or as JSON")
    export.add_argument("--format", choices=("md", "json"), default="md")
    export.add_argument("-o", "--output", type=Path, help="file to write (default: stdout)")
    export.add_argument("--live", action="store_true", help="only what the model sees now")
    export.set_defaults(handler=cmd_export)


def _when(ts: float, fmt: str = "%Y-%m-%d %H:%M") -> str:
    return datetime.fromtimestamp(ts).strftime(fmt)


# -- compact --------------------------------------------------------------------------------


def cmd_compact(args: argparse.Namespace) -> int:
    """Compact the live context now; print the token counts before and after."""
    try:
        with open_runtime(TerminalApprover(), need_key=True) as runtime:
            compactor = runtime.compactor
            event = asyncio.run(compactor.compact_now(runtime.agent))
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
    """Print the matches: seq, date, role and a highlighted snippet, newest first."""
    query = " ".join(args.query)
    try:
        with open_runtime(TerminalApprover(), need_key=False) as runtime:
            hits = runtime.log.search(query, max(1, args.limit))
    except CliExit as exc:
        return exc.code
    if args.json:
        print(json.dumps([hit_json(h) for h in hits], ensure_ascii=False, indent=2))
        return 0 if hits else 1
    if not hits:
        print(f"no match for {query!r}", file=sys.stderr)
        return 1
    color = sys.stdout.isatty() and "NO_COLOR" not in os.environ
    for hit in hits:
        print(
            f"#{hit.seq:<6} {_when(hit.created_at)}  {_who(hit):<7}  "
            f"{highlight(hit.snippet, color)}"
        )
    return 0


# -- export ---------------------------------------------------------------------------------


def _fence(text: str, lang: str = "") -> str:
    """`text` in a code fence longer than any backtick run inside it."""
    runs = [len(r) for r in re.findall(r"`+", text)]
    ticks = "`" * max(3, max(runs, default=0) + 1)
    return f"{ticks}{lang}\n{text}\n{ticks}"


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n… ({len(text) - limit} more characters; see the JSON export)"


def _md_part(part: Part) -> str:
    if isinstance(part, TextPart):
        if part.thought:
            return "\n".join(f"> *{line}*" if line else ">" for line in part.text.splitlines())
        return part.text
    if isinstance(part, FunctionCallPart):
        args = json.dumps(part.args, ensure_ascii=False)
        return f"→ **{part.name}** `{_clip(args, 300)}`"
    if isinstance(part, FunctionResponsePart):
        mark = OK_MARK if response_ok(part) else FAIL_MARK
        body = _clip(json.dumps(part.response, ensure_ascii=False, indent=2), MD_TOOL_CHARS)
        return f"{mark} **{part.name}**\n\n{_fence(body, 'json')}"
    if isinstance(part, ExecutableCodePart):
        return _fence(part.code, (part.language or "").lower())
    if isinstance(part, CodeExecutionResultPart):
        return _fence(part.output or "")
    return f"*[{part.kind} part]*"


def _md_message(seq: int, ts: float, event: MessageEvent) -> str:
    who = "Koroku" if event.role == "model" else ("You" if event.is_user_turn else "Tool results")
    body = "\n\n".join(t for t in (_md_part(p) for p in event.parts) if t)
    return f"**{who}** · {_when(ts, '%H:%M')} · #{seq}\n\n{body}"


def markdown_entry(entry: LogEntry) -> str:
    """One log entry as Markdown."""
    if isinstance(entry, DamagedEvent):
        return f"*#{entry.seq} · damaged {entry.kind} event, not shown: {entry.error}*"
    event = entry.event
    if isinstance(event, ClearedEvent):
        return f"---\n\n*#{entry.seq} · {_when(entry.created_at)} · cleared: a fresh start*\n\n---"
    if isinstance(event, CompactionEvent):
        quoted = "\n".join(f"> {line}" if line else ">" for line in event.summary.splitlines())
        head = (
            f"> **Summary** of #{event.covers_up_to_seq} and before "
            f"(compacted at {_when(entry.created_at, '%H:%M')} · #{entry.seq})"
        )
        return f"{head}\n>\n{quoted}"
    return _md_message(entry.seq, entry.created_at, event)


def write_markdown(out: TextIO, entries: Iterable[LogEntry], *, live: bool) -> int:
    """Write the entries as a Markdown document a person can read; return how many."""
    scope = "the live context" if live else "the whole log"
    out.write(f"# Koroku conversation\n\n*Exported {_when(time.time())}: {scope}.*\n")
    day = ""
    count = 0
    for entry in entries:
        entry_day = _when(entry.created_at, "%A %d %B %Y")
        if entry_day != day:
            day = entry_day
            out.write(f"\n## {day}\n")
        out.write(f"\n{markdown_entry(entry)}\n")
        count += 1
    return count


def cmd_export(args: argparse.Namespace) -> int:
    """Write the whole log (or the live context) as Markdown or as importable JSON."""
    try:
        with open_runtime(TerminalApprover(), need_key=False) as runtime:
            conversation = runtime.agent.conversation_id if args.live else None
            entries = exported_entries(runtime.log, conversation, live=args.live)
            out: TextIO = args.output.open("w", encoding="utf-8") if args.output else sys.stdout
            try:
                if args.format == "json":
                    count = write_export(
                        out, entries, scope="live" if args.live else "all", exported_at=time.time()
                    )
                else:
                    count = write_markdown(out, entries, live=args.live)
            finally:
                if args.output:
                    out.close()
    except CliExit as exc:
        return exc.code
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
            report = import_export(runtime.log, path)
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
    return 0
