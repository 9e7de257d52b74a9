"""The kind registry: what Koroku needs to know of each event kind besides its class.

A new event kind is four things: its event class (domain/events.py, a member of `Event`),
its case in the presentation fold (render/markers.py), its behaviour (the module that
appends it and reacts to it, e.g. agent/dismissal.py), and its entry here. Everything else
(chat, viewer, terminal, export, search, embeddings) formats the fold's `Marker` and needs no
change. A kind without an entry fails at import (and in tests/domain/test_kinds.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from koroku_desktop.domain.events import EVENT_KINDS


@dataclass(frozen=True, slots=True)
class KindSpec:
    """One event kind: `label` names its events in the viewer's filters; `liveness` says its
    events decide which entries are live (domain/liveness.py reads them)."""

    kind: str
    label: str
    liveness: bool = False


KINDS: dict[str, KindSpec] = {
    spec.kind: spec
    for spec in (
        KindSpec("message", "Messages"),
        KindSpec("compaction", "Summaries", liveness=True),
        KindSpec("cleared", "Clears", liveness=True),
        KindSpec("rejected", "Set aside", liveness=True),
        KindSpec("superseded", "Replaced", liveness=True),
        KindSpec("remembered_dismissed", "Dismissals"),
        KindSpec("memory_edit", "Memory edits"),
        KindSpec("fact", "Facts about you"),
        KindSpec("conversation", "Conversations"),
        KindSpec("task", "Tasks"),
    )
}
"""Every kind's entry, by its stable string."""

_unregistered = set(EVENT_KINDS) ^ set(KINDS)
if _unregistered:  # an event class without an entry, or an entry without a class
    raise RuntimeError(f"event kinds and the registry differ: {sorted(_unregistered)}")

LIVENESS_KINDS: tuple[str, ...] = tuple(k for k in EVENT_KINDS if KINDS[k].liveness)
"""The kinds whose events say which entries are live, in the union's order."""


def label_of(kind: str) -> str:
    """The viewer's name for events of `kind` (the kind itself when unknown)."""
    spec = KINDS.get(kind)
    return spec.label if spec is not None else kind
