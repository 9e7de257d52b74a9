"""New facts about the user from each compaction: the summariser lists them after its summary.

The ask rides in the summariser's user content (its system instruction stays the same), with
the facts already known, so only new or changed ones come back, one JSON object a line in a
`<facts>` block. What comes back is read leniently (a line that is not a fact is skipped,
never fatal), checked against the messages summarised (a fact names only seqs among them),
cut to `MAX_FACT_CHARS`, and appended with the compaction as `fact` events.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable, Sequence
from typing import Any

from koroku_desktop.domain.events import FactCategory, FactEvent, StoredEvent
from koroku_desktop.domain.facts import (
    CATEGORIES,
    MAX_SUBJECT_CHARS,
    Fact,
    clipped_fact,
    sorted_facts,
    subject_key,
)

log = logging.getLogger(__name__)

KNOWN_CHARS = 8_000
"""The most of the known facts the summariser is shown (its request keeps room for them:
`summarizer._RESERVED_CHARS`)."""
_BLOCK = re.compile(r"<facts>(.*?)(?:</facts>|\Z)", re.S | re.I)


def facts_ask(known: Iterable[Fact]) -> str:
    """What the summariser is asked, after the transcript, about facts (with those known)."""
    lines: list[str] = []
    facts = sorted_facts(known)
    for fact in facts:
        line = f"- {fact.subject}: {' '.join(fact.text.split())}"
        if sum(len(x) + 1 for x in lines) + len(line) > KNOWN_CHARS:
            lines.append(f"(and {len(facts) - len(lines)} more)")
            break
        lines.append(line)
    listing = "\n".join(lines) if lines else "(none yet)"
    return (
        "\n\nAfter the summary, list the lasting facts about the user that this part of the "
        "conversation states and that the known facts below do not already say: who they "
        "are, their preferences, the people in their life, their projects. Not passing "
        "details, and never secrets or passwords. Put them after the summary in one block, "
        "one JSON object a line:\n<facts>\n"
        '{"subject": "home city", "category": "about_you", "fact": "Lives in Oslo.", '
        '"from": [12]}\n</facts>\n'
        "`category` is about_you, preference, person or project; `from` lists the #numbers "
        "of the transcript entries that say it. A fact that changes a known one uses its "
        "subject. Leave the block out when there is nothing new.\n\n"
        f"Known facts:\n{listing}"
    )


def split_facts(reply: str) -> tuple[str, list[dict[str, Any]]]:
    """The summary without its `<facts>` block, and the block's objects (bad lines skipped)."""
    found: list[dict[str, Any]] = []
    for block in _BLOCK.findall(reply):
        for line in block.splitlines():
            line = line.strip().rstrip(",")
            if not line:
                continue
            try:
                item = json.loads(line)
            except ValueError:
                log.info("the summariser listed a fact that is not JSON: %.80s", line)
                continue
            if isinstance(item, dict):
                found.append(item)
    return _BLOCK.sub("", reply).strip(), found


def fact_events(
    listed: Sequence[dict[str, Any]], summarised: Sequence[StoredEvent], known: Sequence[Fact]
) -> list[FactEvent]:
    """The `fact` events for what the summariser listed: one per subject (the last said
    wins), none that only repeats a known fact, each naming the summarised messages it
    cites (by seq and id)."""
    ids = {m.seq: m.event_id for m in summarised}
    current = {f.key: f for f in known}
    chosen: dict[str, FactEvent] = {}
    for item in listed:
        text = clipped_fact(str(item.get("fact") or ""))
        subject = " ".join(str(item.get("subject") or "").split())[:MAX_SUBJECT_CHARS].strip()
        if not text or not subject:
            continue
        key = subject_key(subject)
        old = current.get(key)
        if old is not None and " ".join(old.text.split()) == " ".join(text.split()):
            continue
        raw = item.get("category")
        category: FactCategory = raw if raw in CATEGORIES else "about_you"
        cited = item.get("from")
        if not isinstance(cited, list):
            cited = []
        seqs = sorted({s for s in cited if isinstance(s, int) and s in ids})
        chosen[key] = FactEvent(
            subject=subject,
            text=text,
            category=category,
            source="compaction",
            from_seqs=seqs,
            from_ids=[ids[s] for s in seqs if ids[s]],
            replaces_id=old.event_id if old is not None else None,
        )
    return list(chosen.values())
