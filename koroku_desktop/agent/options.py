"""AgentOptions: the settings the agent reads on every turn (so changes apply at once)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass
class AgentOptions:
    """Settings the agent reads on every turn, so changes apply without a restart."""

    model: str
    max_tool_calls: int
    workspace: Path
    data_dir: Path
    compact_at_tokens: int = 100_000
    thinking_level: str = ""
    """Gemini's thinking level for turns ("" = the model's default)."""
    quick_thinking_level: str = "low"
    """The thinking level of quick-ask turns (`run_turn(..., quick=True)`)."""
    surface_memories: bool = True
    """Attach related past passages to each new user turn (needs `Agent.memories`)."""
    remember_facts: bool = True
    """Keep facts about the user: send them with requests, offer `remember`, and have each
    compaction list new ones (needs `Agent.facts`)."""
    web_tools: tuple[str, ...] = ()
    """Gemini's built-in web tools offered with every step (`google_search`, `url_context`)."""
