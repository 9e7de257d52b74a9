"""What the actions of `koroku conversations` and `koroku tasks` share: several actions that
act on one thing a reference names (`pin ID`, `pause NAME|ID`), and `--json` on each one."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable
from typing import Any


def add_ref_actions(
    actions: Any, helps: Iterable[tuple[str, str]], *, metavar: str, ref_help: str
) -> None:
    """One action for each (name, help) of `helps`, taking the `ref` of what it acts on."""
    for name, help_text in helps:
        action = actions.add_parser(name, help=help_text)
        action.add_argument("ref", metavar=metavar, help=ref_help)


def json_on_every_action(actions: Any, handler: Callable[[argparse.Namespace], int]) -> None:
    """`--json` on each action of `actions`, and `handler` to run it. Without `--json` the
    namespace keeps the command's own value (its default, or its own `--json` before the
    action)."""
    for parser in actions.choices.values():
        parser.add_argument(
            "--json", action="store_true", default=argparse.SUPPRESS, help="say it as JSON"
        )
        parser.set_defaults(handler=handler)
