"""The fold for everything that is not a message: each event kind as one `Marker`.

This is the only place that knows what a compaction, a clear or a dismissal says: every
surface (chat, viewer, terminal, Markdown export, search, embeddings) formats the marker by
its style. A new event kind is one more case here; the `match` ends in `assert_never`, so
an event kind without a case is a type error.
"""

from __future__ import annotations

from typing import assert_never

from koroku_desktop.domain.conversations import origin_name
from koroku_desktop.domain.events import (
    ClearedEvent,
    CompactionEvent,
    ConversationEvent,
    DamagedEvent,
    Event,
    FactEvent,
    MemoryEditEvent,
    MessageEvent,
    RejectedEvent,
    RememberedDismissedEvent,
    SupersededEvent,
    TaskEvent,
)
from koroku_desktop.render.blocks import Marker, Reference


def token_change(event: CompactionEvent) -> str:
    """`120,000 → 8,000 tokens` (or what is known of it)."""
    before = f"{event.tokens_before:,}" if event.tokens_before is not None else "?"
    after = f"{event.tokens_after:,}" if event.tokens_after is not None else "?"
    return f"{before} → {after} tokens"


def memory_edit_words(op: str, source: str | None) -> str:
    """What a memory-file change was, in a few words."""
    if op == "append":
        return "a summary added" if source == "compaction" else "text added"
    return {
        "person": "edited",
        "import": "taken into the log",
        "outside": "changed outside Koroku, taken in",
    }.get(source or "", "rewritten")


def _compaction(e: CompactionEvent) -> Marker:
    if e.covered_ids is None:  # an old compaction: it covered the seqs up to covers_up_to_seq
        title = f"Summary of #{e.covers_up_to_seq} and before"
        about = f"the live context keeps #{e.kept_from_seq} onward; {token_change(e)}"
    else:
        title = f"Summary of the conversation so far ({len(e.covered_ids)} more messages folded in)"
        about = (
            f"the messages it folded in show *summarised* in the Context column; {token_change(e)}"
        )
    tokens = ""
    if e.tokens_before and e.tokens_after:
        tokens = f" · {e.tokens_before:,} → {e.tokens_after:,} tokens"
    return Marker(
        "compaction",
        title,
        e.summary,
        (Reference("covers_up_to", e.covers_up_to_seq), Reference("kept_from", e.kept_from_seq)),
        style="summary",
        by="summary",
        explanation=about,
        chat=f"Earlier conversation summarised{tokens}",
        search_text=e.summary,
        embed_text=e.summary,
    )


def _superseded(e: SupersededEvent) -> Marker:
    how = "edited and sent again" if e.reason == "edit" else "regenerated"
    title = f"The turn above was {how}: it stays in the log, out of the live context"
    return Marker(
        "superseded",
        title,
        references=(Reference("replaced_turn", turn_id=e.superseded_turn_id),),
        by="Koroku",
        explanation=(
            f"{title}.\n\nThe replaced turn (`{e.superseded_turn_id}`) is shown above as it "
            "was; it can still be searched and recalled."
        ),
    )


def _dismissed(e: RememberedDismissedEvent) -> Marker:
    passage, surfaced = e.passage_seq, e.surfaced_seq
    return Marker(
        "remembered_dismissed",
        f"Remembered #{passage} dismissed (surfaced with #{surfaced}): not relevant",
        references=(Reference("dismissed", passage), Reference("surfaced_with", surfaced)),
        style="aside",
        by="you",
        explanation=(
            f"You dismissed remembered passage #{passage} (surfaced with message "
            f"#{surfaced}) as not relevant. That message still carries it as sent; "
            "Koroku does not surface it again in this conversation."
        ),
    )


def _fact(e: FactEvent) -> Marker:
    by = {"person": "you", "model": "Koroku", "compaction": "summary"}[e.source]
    sources = tuple(Reference("learnt_from", seq) for seq in e.from_seqs)
    where = ", ".join(f"#{seq}" for seq in e.from_seqs)
    came = f" It came from {where}." if where else ""
    if e.op == "forget":
        return Marker(
            "fact",
            f"Forgotten: {e.subject}",
            references=sources,
            style="aside",
            by=by,
            explanation=(
                f"Koroku no longer knows anything under “{e.subject}”. The fact stays in the "
                "log and in search; it is no longer sent with requests."
            ),
        )
    return Marker(
        "fact",
        f"Remembered about you — {e.subject}: {e.text}",
        e.text,
        sources,
        style="aside",
        by=by,
        explanation=(
            f"A fact Koroku knows about you, under “{e.subject}”.{came} It goes with every "
            "request until a newer fact on the same subject replaces it; see and edit the "
            "facts in the Memory tab or in Settings, or with `koroku memory`."
        ),
        # No chat line: the `remember` call's card says it (a notice row reads as a warning).
        search_text=f"{e.subject}: {e.text}",
        embed_text=f"{e.subject}: {e.text}",
    )


def _conversation(e: ConversationEvent) -> Marker:
    title = {
        "created": f"Conversation started{f': {e.title}' if e.title else ''}",
        "titled": f"Conversation named “{e.title or ''}”",
        "renamed": f"Conversation renamed “{e.title or ''}”",
        "archived": "Conversation archived",
        "deleted": "Conversation deleted (kept in the log; `koroku conversations restore`)",
        "restored": "Conversation restored",
        "imported": f"Imported from {origin_name(e.origin or '')}"
        f"{f': {e.title}' if e.title else ''} (read-only until you continue it)",
    }[e.action]
    return Marker(
        "conversation",
        title,
        style="record",
        by="Koroku" if e.action in ("titled", "imported") else "you",
        explanation=(
            "A change to the conversation itself. It stays in the log like every event: a "
            "deleted conversation is hidden, not removed, and can be restored."
        ),
        search_text=e.title or "",
    )


def _task(e: TaskEvent) -> Marker:
    name = f"“{e.title}”" if e.title else f"task {e.task_id[:8]}"
    outcome = f": {e.outcome}" if e.outcome else ""
    late = " (late)" if e.late else ""
    title = {
        "created": f"Task {name} scheduled",
        "changed": f"Task {name} changed",
        "paused": f"Task {name} paused",
        "resumed": f"Task {name} resumed",
        "run_started": f"Task {name} started{late}",
        "run_finished": f"Task {name} ran{late}{outcome}",
        "removed": f"Task {name} removed (kept in the log)",
    }[e.action]
    detail = e.detail or e.prompt or ""
    return Marker(
        "task",
        title,
        detail,
        references=(Reference("task_turn", turn_id=e.run_turn_id),) if e.run_turn_id else (),
        style="record",
        by="Koroku" if e.action.startswith("run_") else "you",
        explanation=(
            "A scheduled task: its changes and each of its runs are events in the log like "
            "any other. `koroku tasks list` shows its schedule, next run and last outcome."
        ),
        chat=title if e.action == "run_finished" else None,
        search_text=" ".join(t for t in (e.title, e.prompt, e.detail) if t),
    )


def event_marker(event: Event) -> Marker | None:
    """The marker an event other than a message stands for (None for a message)."""
    match event:
        case MessageEvent():
            return None
        case CompactionEvent():
            return _compaction(event)
        case ClearedEvent():
            return Marker(
                "cleared",
                "Conversation cleared — a fresh start (nothing was deleted)",
                style="divider",
                by="you",
                explanation=(
                    "The conversation was cleared here. Koroku stopped seeing everything "
                    "before this point; nothing was deleted and it can still be recalled."
                ),
                chat="Conversation cleared",
                fresh_start=True,
            )
        case RejectedEvent(rejected_seq=rejected, reason=reason):
            return Marker(
                "rejected",
                f"Message #{rejected} set aside: {reason}",
                references=(Reference("set_aside", rejected),),
                by="Koroku",
                explanation=(
                    f"Message #{rejected} was set aside: it stays in the log but is no longer "
                    f"sent to the model.\n\nReason: {reason}"
                ),
                chat=f"Message #{rejected} was set aside: {reason}",
            )
        case SupersededEvent():
            return _superseded(event)
        case RememberedDismissedEvent():
            return _dismissed(event)
        case MemoryEditEvent(day=day, op=op, text=text, source=source):
            return Marker(
                "memory_edit",
                f"Memory file {day}.md: {memory_edit_words(op, source)}",
                text,
                style="record",
                by={"compaction": "summary", "person": "you"}.get(source or "", "memory"),
                # a compaction's summary is indexed with the compaction
                search_text="" if source == "compaction" else text,
            )
        case FactEvent():
            return _fact(event)
        case ConversationEvent():
            return _conversation(event)
        case TaskEvent():
            return _task(event)
        case _:
            assert_never(event)


def damaged_marker(entry: DamagedEvent) -> Marker:
    """A row that cannot be read, as a marker: kept, shown, never fatal."""
    return Marker(
        "damaged",
        f"⚠ damaged {entry.kind} row, cannot be read: {entry.error}",
        explanation=(
            "**This row is damaged** and cannot be read by this version of Koroku. "
            "It is kept in the log untouched and skipped by the model.\n\n"
            f"Reason: `{entry.error}`\n\nSee the raw JSON for what the row holds."
        ),
        chat=f"Damaged event #{entry.seq} ({entry.error})",
    )
