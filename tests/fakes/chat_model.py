"""FakeChatModel: an in-process `ChatModel` whose replies come from a function of the request.

For agent, compaction and hook tests that are not about the wire (like pydantic-ai's
FunctionModel). It still refuses what Gemini refuses: every request is mapped to the wire
format with the real SDK types and checked with the fake server's rules, so a test cannot
pass on a history the service would reject. Everything about the wire uses `FakeGemini`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from koroku_desktop.domain.events import MessageEvent, Usage
from koroku_desktop.domain.model_io import ModelError, ModelRequest
from koroku_desktop.domain.parts import FunctionCallPart, Part, TextPart
from koroku_desktop.llm.mapping import content_to_sdk
from tests.fakes.gemini_rules import check_contents

FakeReply = MessageEvent | str | list[Part] | ModelError
"""What a reply function returns: a whole model content, its text, its parts, or an error."""
ReplyFunction = Callable[[ModelRequest], FakeReply]


def wire_contents(contents: list[MessageEvent]) -> list[dict[str, Any]]:
    """The contents as the SDK sends them (service field names)."""
    return [
        content_to_sdk(c).model_dump(mode="json", by_alias=True, exclude_none=True)
        for c in contents
    ]


def call(name: str, call_id: str | None = None, **args: Any) -> FunctionCallPart:
    """A function call part for a scripted reply."""
    return FunctionCallPart(name=name, id=call_id, args=args)


@dataclass
class FakeChatModel:
    """A `ChatModel` answering with `reply(request)`; records every request it got."""

    reply: ReplyFunction
    max_input_tokens: int | None = None
    requests: list[ModelRequest] = field(default_factory=list)

    @classmethod
    def scripted(cls, *replies: FakeReply, then: FakeReply = "ok") -> FakeChatModel:
        """Answer with `replies` in order, then with `then` forever."""
        queue = list(replies)
        return cls(lambda request: queue.pop(0) if queue else then)

    def tokens(self, request: ModelRequest) -> int:
        """A rough prompt size: JSON characters / 4, like the fake server."""
        body = [wire_contents(request.contents), request.system_instruction]
        return max(1, len(json.dumps(body, ensure_ascii=False)) // 4)

    async def generate(
        self, request: ModelRequest, on_text_delta: Callable[[str], None] | None = None
    ) -> MessageEvent:
        """Check the request like the service, then answer it (text deltas included)."""
        self.requests.append(request)
        problem = check_contents({"contents": wire_contents(request.contents)}, {})
        if problem is None and self.max_input_tokens is not None:
            size = self.tokens(request)
            if size > self.max_input_tokens:
                problem = (
                    f"The input token count ({size}) exceeds the maximum number of tokens "
                    f"allowed ({self.max_input_tokens})."
                )
                raise ModelError("too_large", problem, 400)
        if problem is not None:
            raise ModelError("bad_request", f"Gemini rejected the request (HTTP 400): {problem}")
        answer = self.reply(request)
        if isinstance(answer, ModelError):
            raise answer
        if isinstance(answer, str):
            answer = [TextPart(text=answer)]
        if isinstance(answer, list):
            answer = MessageEvent(role="model", origin="model", parts=answer, finish_reason="STOP")
        if on_text_delta is not None:
            for part in answer.parts:
                if isinstance(part, TextPart) and part.text and not part.thought:
                    on_text_delta(part.text)
        usage = Usage(prompt_tokens=self.tokens(request), output_tokens=1, model=request.model)
        return answer if answer.usage else answer.model_copy(update={"usage": usage})

    async def count_tokens(self, request: ModelRequest) -> int:
        """See `ChatModel.count_tokens`."""
        return self.tokens(request)
