"""The conversation the real-window tests open: every kind of row a day of use shows."""

from __future__ import annotations

from koroku_desktop.agent.ports import EventLog
from koroku_desktop.domain.events import MessageEvent
from koroku_desktop.domain.parts import FunctionCallPart, FunctionResponsePart, TextPart

USER_MARKDOWN = (
    "Why does `git rebase -i` fail here? See https://git-scm.com/docs/git-rebase and this:\n\n"
    "```\nerror: cannot rebase: You have unstaged changes. "
    "Please commit or stash them before you try again, or use --autostash.\n```"
)

ANSWER = """Here is a small script that lists the largest files in a folder:

```python
from pathlib import Path

files = sorted(Path(".").rglob("*"), key=lambda p: p.stat().st_size, reverse=True)
for path in files[:5]:
    print(f"{path.stat().st_size:>10}  {path}")
```

It walks the tree once, sorts by size and prints the **top five**. Use `--help` for options;
[the docs](https://docs.python.org/3/library/pathlib.html) say more about `rglob`."""


def downloads_turn() -> list[MessageEvent]:
    """A question, a thought and a bash call with its result, and the answer."""
    call = FunctionCallPart(name="bash", args={"command": "du -sh ~/Downloads"}, id="c1")
    result = FunctionResponsePart(
        name="bash",
        id="c1",
        response={"exit_code": 0, "stdout": "4.2G\t/home/me/Downloads"},
        call_args=call.args,
    )
    thought = TextPart(text="The user wants a size; I'll use du.", thought=True)
    return [
        MessageEvent(
            role="user", origin="person", parts=[TextPart(text="How big is my Downloads?")]
        ),
        MessageEvent(role="model", parts=[thought, call]),
        MessageEvent(role="user", origin="tools", parts=[result]),
        MessageEvent(
            role="model", parts=[TextPart(text="Your **Downloads** folder uses **4.2 GB**.")]
        ),
    ]


def seed_conversation(log: EventLog, conversation_id: str) -> None:
    """Append a short day's conversation (user Markdown, thoughts, a tool call, code)."""
    turns: list[list[MessageEvent]] = [
        downloads_turn(),
        [
            MessageEvent(role="user", origin="person", parts=[TextPart(text=USER_MARKDOWN)]),
            MessageEvent(
                role="model", parts=[TextPart(text="Stash first: `git stash`, then rebase.")]
            ),
        ],
        [
            MessageEvent(
                role="user",
                origin="person",
                parts=[TextPart(text="Write me a script that finds the largest files.")],
            ),
            MessageEvent(role="model", parts=[TextPart(text=ANSWER)]),
        ],
    ]
    for turn in turns:
        log.append(conversation_id, turn)
