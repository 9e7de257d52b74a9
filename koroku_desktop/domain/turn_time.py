"""The time note: when a user turn was sent, carried in the turn itself, not the prompt.

The system instruction used to end with the current time, so it changed every minute and
no request could be served from Gemini's implicit prompt cache. Now each user turn carries
its own date and time as a separate, clearly marked text part stored with the message: the
system instruction and everything already sent stay byte-identical from turn to turn.
"""

from __future__ import annotations

from datetime import datetime

from koroku_desktop.domain.parts import Part, TextPart

TIME_NOTE_PREFIX = "[Koroku: this message was sent on "


def time_note(now: datetime) -> TextPart:
    """The text part that says when a user turn was sent (local time, to the minute)."""
    return TextPart(text=f"{TIME_NOTE_PREFIX}{now:%A, %d %B %Y} at {now:%H:%M} local time.]")


def is_time_note(part: Part) -> bool:
    """True for a part made by `time_note` (front ends do not show it as the person's text)."""
    return (
        isinstance(part, TextPart)
        and not part.thought
        and part.text.startswith(TIME_NOTE_PREFIX)
        and part.text.endswith("local time.]")
    )


def without_time_note(parts: list[Part]) -> list[Part]:
    """The parts of a user turn as the person wrote them (the time note left out)."""
    return [part for part in parts if not is_time_note(part)]
