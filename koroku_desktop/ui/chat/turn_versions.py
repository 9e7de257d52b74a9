"""TurnVersions: the answers a regenerate or an edit replaced, kept for ‹ 1/2 › on the turn
that replaced them (the log keeps every turn; the chat shows one version at a time).

A `superseded` event is appended in the new turn and names the old one, so the chain of
versions is walked back from the newest turn through `replaced_by`.
"""

from __future__ import annotations

from koroku_desktop.domain.events import ClearedEvent, LogEntry, StoredEvent, SupersededEvent
from koroku_desktop.ui.chat.items import ChatItem, ToolCardIndex, build_items
from koroku_desktop.ui.chat.tool_runs import regroup


class TurnVersions:
    """The rows of replaced turns and which version of each chain is shown."""

    def __init__(self) -> None:
        self.replaced: dict[str, str] = {}
        """New turn id -> the turn it replaced."""
        self.rows: dict[str, list[ChatItem]] = {}
        """A replaced turn's rows, as they were shown."""
        self.shown: dict[str, str] = {}
        """Newest turn of a chain -> the turn of it on screen (absent: the newest)."""

    def clear(self) -> None:
        """Forget everything (a new page of the conversation is loaded)."""
        self.replaced.clear()
        self.rows.clear()
        self.shown.clear()

    def load(self, entries: list[LogEntry], gone: set[str]) -> None:
        """Learn the replacements among `entries` and the rows of the replaced turns."""
        self.clear()
        by_turn: dict[str, list[LogEntry]] = {}
        for entry in entries:
            if not isinstance(entry, StoredEvent):
                continue
            if isinstance(entry.event, SupersededEvent) and entry.event.superseded_turn_id:
                self.replaced[entry.turn_id] = entry.event.superseded_turn_id
            elif entry.turn_id in gone:
                by_turn.setdefault(entry.turn_id, []).append(entry)
        for turn_id, turn_entries in by_turn.items():
            items = build_items(turn_entries, ToolCardIndex())
            regroup(items)
            self.rows[turn_id] = items

    def keep(self, new_turn: str, old_turn: str, rows: list[ChatItem]) -> None:
        """`new_turn` replaced `old_turn`, whose rows were these."""
        if new_turn and old_turn:
            self.replaced[new_turn] = old_turn
            self.rows[old_turn] = [i for i in rows if i.kind != "turn_notice" or i.turn_id]

    def chain(self, newest: str) -> list[str]:
        """The versions ending in `newest`, oldest first (only those whose rows are known)."""
        out = [newest]
        seen = {newest}
        while (older := self.replaced.get(out[0])) is not None and older not in seen:
            if older not in self.rows:
                break
            out.insert(0, older)
            seen.add(older)
        return out

    def newest_of(self, turn_id: str) -> str:
        """The newest turn of the chain `turn_id` is in."""
        newer = {old: new for new, old in self.replaced.items()}
        seen = {turn_id}
        while (nxt := newer.get(turn_id)) is not None and nxt not in seen:
            turn_id = nxt
            seen.add(nxt)
        return turn_id

    def label(self, items: list[ChatItem]) -> list[ChatItem]:
        """Put `‹ i/n ›` on the last answer of each shown version among `items` (and take it
        off others); the items whose label changed."""
        changed: list[ChatItem] = []
        last_answer: dict[str, ChatItem] = {}
        for item in items:
            if item.turn_id and item.kind == "model":
                last_answer[item.turn_id] = item
        for turn_id, item in last_answer.items():
            newest = self.newest_of(turn_id)
            chain = self.chain(newest)
            shown = len(chain) > 1 and turn_id in chain
            label = (chain.index(turn_id) + 1, len(chain), newest) if shown else None
            if item.args.get("versions") != label:
                if label is None:
                    item.args.pop("versions", None)
                else:
                    item.args["versions"] = label
                item.touch()
                changed.append(item)
        return changed


def superseded_turns(entries: list[LogEntry]) -> set[str]:
    """The turn ids a `superseded` event among `entries` names."""
    return {
        e.event.superseded_turn_id
        for e in entries
        if isinstance(e, StoredEvent) and isinstance(e.event, SupersededEvent)
    } - {""}


def since_last_clear(entries: list[LogEntry]) -> tuple[list[LogEntry], bool]:
    """The entries after the last `cleared` event, and whether there was one: a cleared
    conversation starts afresh in the chat (its example prompts showing)."""
    for i in range(len(entries) - 1, -1, -1):
        entry = entries[i]
        if isinstance(entry, StoredEvent) and isinstance(entry.event, ClearedEvent):
            return entries[i + 1 :], True
    return entries, False
