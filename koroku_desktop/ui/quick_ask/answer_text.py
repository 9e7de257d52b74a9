"""What the quick-ask popup shows of an exchange: the answer's text and the passages Koroku
remembered for the question, through the presentation fold."""

from __future__ import annotations

from koroku_desktop.render import blocks as b
from koroku_desktop.render.markdown import block_markdown
from koroku_desktop.render.text import one_line


def answer_markdown(blocks: tuple[b.Block, ...]) -> str:
    """What the popup shows of a model content: its text (with citation marks), where it
    came from (the sources of a grounded answer) and why it stopped early, through the
    presentation fold; thoughts and tool calls stay in the chat."""
    shown = [x for x in blocks if isinstance(x, b.TextBlock | b.SourcesBlock | b.NoticeBlock)]
    return "\n\n".join(t for t in (block_markdown(x) for x in shown) if t)


def remembered_line(blocks: tuple[b.Block, ...]) -> str:
    """One muted line naming the past passages Koroku brought to this question (the chat
    shows them as chips), or ""."""
    passages = [p for x in blocks if isinstance(x, b.RememberedBlock) for p in x.passages]
    if not passages:
        return ""
    named = "; ".join(f"#{p.seq} ({p.when}): {one_line(p.text, 60)}" for p in passages[:3])
    more = f" and {len(passages) - 3} more" if len(passages) > 3 else ""
    return f"*Remembered: {named}{more}*"
