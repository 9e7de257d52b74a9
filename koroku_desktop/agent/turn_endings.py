"""How a turn that could not finish leaves the log: consistent, and the user told why.

A request too large for the model sets the turn's biggest message aside (an event, so later
requests leave it out); a cancel keeps the partial answer and answers the dangling calls.
"""

from __future__ import annotations

from koroku_desktop.agent.tool_calls import CANCELLED
from koroku_desktop.agent.turn import Journal, TurnState
from koroku_desktop.domain.events import MessageEvent, RejectedEvent
from koroku_desktop.domain.model_io import ModelError
from koroku_desktop.domain.parts import TextPart
from koroku_desktop.domain.projection import largest_in_turn


async def set_aside(journal: Journal, exc: ModelError) -> ModelError:
    """Mark the turn's biggest message rejected (kept out of later requests); say so."""
    target = largest_in_turn(journal.view.messages)
    if target is None:
        return exc
    await journal.append(
        [RejectedEvent(rejected_seq=target.seq, reason=exc.message, rejected_id=target.event_id)]
    )
    person = isinstance(target.event, MessageEvent) and target.event.is_user_turn
    what = "Your message" if person else "A tool result"
    return ModelError(
        "too_large",
        f"{exc.message} {what} (#{target.seq}) was set aside: it stays in the history but "
        "is no longer sent to the model. Attach it as a file instead, or compact the "
        "conversation (`koroku compact`), then ask again.",
        exc.status,
    )


async def after_cancel(journal: Journal, state: TurnState) -> None:
    """Leave the log consistent after a cancel: partial text kept, dangling calls answered."""
    if state.partial_text:
        text = "".join(state.partial_text)
        await journal.append(
            [
                MessageEvent(
                    role="model", origin="model", parts=[TextPart(text=text + "\n\n[stopped]")]
                )
            ]
        )
    repair = journal.view.repair(CANCELLED)
    if repair is not None:
        await journal.append([repair])
