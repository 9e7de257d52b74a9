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
    """Remember a lasting fact about the user (themself, a preference, a person, a project)
    when they ask you to, or state something that will matter later. One fact per call; the
    same subject replaces what you knew. Never secrets. Returns what was stored.
    """

    name: ClassVar[str] = "remember"
    needs_approval: ClassVar[bool] = False

    subject: str = Field(
        description="What it is about, in a few words, e.g. 'home city'.",
        max_length=MAX_SUBJECT_CHARS,
    )
    fact: str = Field(description="The fact in a sentence or two.")
    category: FactCategory = Field(
        default="about_you",
        description="What kind of fact it is.",
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
