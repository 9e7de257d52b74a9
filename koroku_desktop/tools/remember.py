"""Built-in `remember`: store a lasting fact about the user (no approval: it only adds to
what Koroku knows, which the user sees and edits in Settings)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from koroku_desktop.domain.events import FactCategory
from koroku_desktop.domain.facts import MAX_FACT_CHARS, MAX_SUBJECT_CHARS
from koroku_desktop.domain.json_value import JsonObject
from koroku_desktop.tools.base import AgentTool, ToolContext, tool_error


class Remember(AgentTool):
    """Remember a lasting fact about the user: who they are, a preference, a person in their
    life, or a project. Use it when the user asks you to remember something, or states
    something about themself that will matter in later conversations. One fact per call,
    under a short subject (e.g. 'home city', 'coffee', 'sister Anna', 'project Tern'): a
    fact with the same subject replaces what you knew. Not for passing details, secrets or
    passwords. Returns what was stored and what it replaced; tell the user in a few words.
    """

    name: ClassVar[str] = "remember"
    needs_approval: ClassVar[bool] = False

    subject: str = Field(
        description="A few words naming what the fact is about, e.g. 'home city'.",
        max_length=MAX_SUBJECT_CHARS,
    )
    fact: str = Field(
        description="The fact, as one or two plain sentences, e.g. 'Lives in Oslo since 2019.'"
    )
    category: FactCategory = Field(
        default="about_you",
        description="about_you (the user themself), preference, person, or project.",
    )

    async def execute(self, ctx: ToolContext) -> JsonObject:
        """Store the fact through the wired writer (refused when too long or empty)."""
        if ctx.remember is None:
            return tool_error("remembering facts is turned off in Koroku's Settings")
        if len(self.fact.strip()) > MAX_FACT_CHARS:
            return tool_error(
                f"not stored: a fact is at most {MAX_FACT_CHARS:,} characters and this one "
                f"has {len(self.fact.strip()):,}; store the gist, or split it into several facts"
            )
        return await ctx.remember(self.subject, self.fact, self.category)
