"""Regenerate and edit-and-resend: the last turn is superseded, then a new turn runs.

Nothing is deleted. A `superseded` event names the replaced turn; the live context leaves
that turn out from then on, while the history, search, recall and export keep it. Only the
last turn of the live context can be replaced (not one already compacted), and only by the
process holding the turn lease: the check, the `superseded` event and the new turn all run
under it, so a turn another front end appended meanwhile is never replaced by mistake.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from koroku_desktop.agent.turn import Journal
from koroku_desktop.domain.context import ContextView
from koroku_desktop.domain.errors import RefusedError
from koroku_desktop.domain.events import MessageEvent, StoredEvent, SupersededEvent
from koroku_desktop.domain.parts import AttachmentPart
from koroku_desktop.domain.remembered import said_text

Reason = Literal["regenerate", "edit"]


class SupersedeError(RefusedError, ValueError):
    """The turn asked for cannot be replaced (no longer the last one, compacted, running)."""


@dataclass(frozen=True, slots=True)
class LastTurn:
    """The turn a regenerate or an edit would replace: its id, its message, the message's seq,
    every turn id after that message (a retry of a failed turn runs under a new id), and the
    files attached to the message (sent again with the new turn, regenerated or edited)."""

    turn_id: str
    text: str
    user_seq: int
    turn_ids: tuple[str, ...]
    attachments: tuple[AttachmentPart, ...] = ()


def last_turn(view: ContextView) -> LastTurn | None:
    """The last person's turn of the live context, if it can be replaced.

    None when there is none, when it was compacted away, or when it has no turn id (an
    imported or very old event: leaving out "no id" would leave out every such event).
    """
    user: StoredEvent | None = None
    for stored in reversed(view.messages):
        event = stored.event
        if isinstance(event, MessageEvent) and event.is_user_turn:
            user = stored
            break
    if user is None or not user.turn_id or not isinstance(user.event, MessageEvent):
        return None
    if user.event.origin not in ("person", None):
        return None
    ids = dict.fromkeys(m.turn_id for m in view.messages if m.seq >= user.seq and m.turn_id)
    files = tuple(p for p in user.event.parts if isinstance(p, AttachmentPart))
    return LastTurn(user.turn_id, said_text(user.event.parts), user.seq, tuple(ids), files)


def supersede_events(
    view: ContextView, turn_id: str, reason: Reason
) -> tuple[list[SupersededEvent], LastTurn]:
    """The events that replace turn `turn_id` (one per turn id from its message on), and the
    turn they replace.

    Raises `SupersedeError` when `turn_id` is not the last replaceable turn of `view` (the
    caller holds the lease and has caught up, so `view` is the log as it stands).
    """
    last = last_turn(view)
    if last is None:
        raise SupersedeError("there is no turn to replace in the live conversation")
    if last.turn_id != turn_id:
        raise SupersedeError(
            "the conversation moved on (another turn came after it): only the last turn "
            "can be regenerated or edited"
        )
    events = [SupersededEvent(superseded_turn_id=t, reason=reason) for t in last.turn_ids]
    return events, last


async def supersede(
    journal: Journal, turn_id: str, text: str | None
) -> tuple[str, tuple[AttachmentPart, ...]]:
    """Replace turn `turn_id` in the live context; the text and the files the new turn sends.

    Call it holding the turn lease, caught up (`Agent.run_turn` does). `text` None
    regenerates (the same message again), else it is the edited message; either way the
    message's attachments go with it again.
    """
    reason: Reason = "regenerate" if text is None else "edit"
    events, original = supersede_events(journal.view, turn_id, reason)
    files = original.attachments
    if text is not None and not text.strip() and not files:
        raise SupersedeError("the edited message is empty")
    if text is None and not original.text.strip() and not files:
        raise SupersedeError("the message of that turn has no text to send again")
    await journal.append(events)
    return (original.text if text is None else text), files
