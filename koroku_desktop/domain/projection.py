"""The request contents built from the log always satisfy Gemini's history rules.

Whatever the log holds (a crash between a call and its response, an import with a response
removed, an empty model reply, a user content with a call in it), `project` returns contents
the service accepts, and a `Fix` per change naming the seq it concerns. The log itself is never
changed: the fixes are made again, identically, every time the contents are built.

Rules enforced (see DESIGN.md, "Gemini rules"):
- no text part is empty unless it carries a thought signature; no content is empty, nor made
  only of empty text parts;
- function calls only in model contents, function responses only in user contents;
- a model content with calls is followed at once by one user content holding exactly one
  response per call, in call order, with the call's name and id (missing ones are answered
  with a synthetic error, extra ones dropped);
- a response that follows no call is dropped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from koroku_desktop.domain.events import ClearedEvent, CompactionEvent, MessageEvent, StoredEvent
from koroku_desktop.domain.parts import FunctionCallPart, FunctionResponsePart, Part

NO_RESPONSE = {"error": "no response was recorded for this call"}


@dataclass(frozen=True, slots=True)
class Fix:
    """One change the projection made to what the log holds: the seq and what was done."""

    seq: int
    action: str


Numbered = tuple[int, MessageEvent]
"""A message with its seq (0 for one that is not in the log, like the summary)."""


def _usable(part: Part) -> bool:
    return not (part.is_empty() and part.thought_signature is None)


def _has_substance(parts: Sequence[Part]) -> bool:
    """Whether a content says anything: not only empty text parts (signed or not)."""
    return any(not p.is_empty() for p in parts)


def is_usable_reply(message: MessageEvent) -> bool:
    """Whether a model reply has anything to send back (not only empty text parts)."""
    return _has_substance(message.parts)


def fits_after(previous: MessageEvent | None, message: MessageEvent) -> bool:
    """Whether `message` may follow `previous` as is (a cheap check made on every append).

    False means `project` has something to fix. Unanswered calls at the very end are not
    checked here (the caller knows whether a content follows).
    """
    if not all(_usable(p) for p in message.parts) or not _has_substance(message.parts):
        return False
    open_calls = (
        previous.function_calls if previous is not None and previous.role == "model" else []
    )
    if message.role == "model":
        return not open_calls and not message.function_responses
    if message.function_calls:
        return False
    responses = message.function_responses
    if not open_calls:
        return not responses
    if len(responses) != len(open_calls):
        return False
    return all(
        r.name == c.name and (not c.id or r.id == c.id)
        for r, c in zip(responses, open_calls, strict=True)
    )


def log_fixes(events: Sequence[tuple[int, object]]) -> list[Fix]:
    """The fixes requests built from these (seq, event) pairs of one conversation would need.

    Used after an import to say what the projection will repair in every request; a
    `cleared` or `compaction` event starts the count afresh, as it starts the live context.
    """
    fixes: list[Fix] = []
    run: list[Numbered] = []
    for seq, event in [*events, (0, None)]:
        if isinstance(event, MessageEvent):
            run.append((seq, event))
            continue
        if event is not None and not isinstance(event, CompactionEvent | ClearedEvent):
            continue  # e.g. a `rejected` marker: not a boundary
        if run:
            fixes.extend(project(run, close_trailing=False)[1])
        run = []
    return fixes


def largest_in_turn(messages: Sequence[StoredEvent]) -> StoredEvent | None:
    """The biggest user content of the last turn (the person's message or a tool result).

    When a request is refused as too large, this is the message set aside: usually a pasted
    document or a huge tool output.
    """
    best: StoredEvent | None = None
    best_size = -1
    for stored in reversed(messages):
        event = stored.event
        if not isinstance(event, MessageEvent) or event.role != "user":
            continue
        size = sum(len(p.model_dump_json()) for p in event.parts)
        if size > best_size:
            best, best_size = stored, size
        if event.is_user_turn:
            break
    return best


def _clean_parts(seq: int, message: MessageEvent, fixes: list[Fix]) -> MessageEvent | None:
    """Parts that may stand in this content; None when nothing usable is left."""
    wrong = FunctionResponsePart if message.role == "model" else FunctionCallPart
    parts = [p for p in message.parts if _usable(p) and not isinstance(p, wrong)]
    if len(parts) != len(message.parts):
        fixes.append(Fix(seq, "dropped empty text parts or misplaced calls/responses"))
    if not _has_substance(parts):
        fixes.append(Fix(seq, "left out a content with nothing to send"))
        return None
    if len(parts) == len(message.parts):
        return message
    return message.model_copy(update={"parts": parts})


def _answer(
    calls: list[FunctionCallPart], following: Numbered | None, seq: int, fixes: list[Fix]
) -> tuple[MessageEvent, bool]:
    """The user content answering `calls`, built from `following` when it holds responses.

    Returns the content and whether `following` was consumed by it.
    """
    offered: list[FunctionResponsePart] = []
    rest: list[Part] = []
    consumed = False
    if following is not None and following[1].role == "user" and following[1].function_responses:
        consumed = True
        for part in following[1].parts:
            if isinstance(part, FunctionResponsePart):
                offered.append(part)
            else:
                rest.append(part)
    at = following[0] if consumed and following is not None else seq
    used: set[int] = set()
    answers: list[FunctionResponsePart] = []
    for call in calls:
        match = None
        for i, response in enumerate(offered):
            same = response.id == call.id if call.id else response.name == call.name
            if i not in used and same and response.name == call.name:
                match = i
                break
        if match is None:
            fixes.append(Fix(at, f"answered call {call.name!r} that had no response"))
            answers.append(
                FunctionResponsePart(
                    name=call.name, id=call.id, response=dict(NO_RESPONSE), call_args=call.args
                )
            )
        else:
            used.add(match)
            answers.append(offered[match])
    if len(used) != len(offered):
        fixes.append(Fix(at, "dropped responses that answer no call of the step before"))
    parts: list[Part] = [*answers, *rest]
    if consumed and following is not None and parts == following[1].parts:
        return following[1], True
    if consumed:
        fixes.append(Fix(at, "rebuilt the responses to match the calls, in call order"))
    origin = following[1].origin if consumed and following is not None else "repair"
    return MessageEvent(role="user", origin=origin, parts=parts), consumed


def project(
    messages: Sequence[Numbered], *, close_trailing: bool = True
) -> tuple[list[MessageEvent], list[Fix]]:
    """The contents to send for `messages` (in log order), and the fixes that needed.

    With `close_trailing=False`, calls of the last content are left unanswered: the live
    context keeps them for the agent's repair, which appends real responses to the log.
    """
    fixes: list[Fix] = []
    cleaned: list[Numbered] = []
    for seq, message in messages:
        kept = _clean_parts(seq, message, fixes)
        if kept is not None:
            cleaned.append((seq, kept))
    out: list[MessageEvent] = []
    i = 0
    while i < len(cleaned):
        seq, message = cleaned[i]
        calls = message.function_calls if message.role == "model" else []
        if calls and (close_trailing or i + 1 < len(cleaned)):
            following = cleaned[i + 1] if i + 1 < len(cleaned) else None
            answer, consumed = _answer(calls, following, seq, fixes)
            out.extend((message, answer))
            i += 2 if consumed else 1
            continue
        if message.role == "user" and message.function_responses:
            fixes.append(Fix(seq, "dropped responses that follow no call"))
            rest = [p for p in message.parts if not isinstance(p, FunctionResponsePart)]
            if _has_substance(rest):
                out.append(message.model_copy(update={"parts": rest}))
            i += 1
            continue
        out.append(message)
        i += 1
    return out, fixes
