"""What the actions of `koroku conversations` and `koroku tasks` share: several actions that
act on one thing a reference names (`pin ID`, `pause NAME|ID`), `--json` on each one, and
the list they print (as JSON, or as text with a hint when there is nothing yet)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")


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


def print_list(
    items: Sequence[T],
    as_json: bool,
    to_json: Callable[[T], dict[str, Any]],
    to_text: Callable[[T], str],
    empty: str,
) -> int:
    """Print `items` as one JSON array, or each as `to_text` says (`empty` when there are
    none); exit code 0."""
    if as_json:
        print(json.dumps([to_json(item) for item in items], ensure_ascii=False, indent=2))
    elif not items:
        print(empty)
    else:
        for item in items:
            print(to_text(item))
    return 0
