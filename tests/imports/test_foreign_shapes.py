"""Reading another assistant's export is total: every field of the sample chats swapped, one
at a time, for a value of another JSON type (or a lone surrogate) either still reads as a
chat whose events can be built, or is refused as `ForeignFormatError` — never anything else.
(The samples are written from public descriptions of both formats: see samples.py.)"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from koroku_desktop.maintenance.chatgpt_export import chatgpt_chat
from koroku_desktop.maintenance.claude_export import claude_chat
from koroku_desktop.maintenance.foreign_import import (
    ForeignChat,
    ForeignFormatError,
    chat_events,
)
from tests.imports.samples import chatgpt_branching, claude_export

ODD_VALUES: list[Any] = [None, 0, -1.5, 1e308, True, "", "\ud800", [], {}, ["x"], {"a": 1}]


def _paths(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*path, key))
    elif isinstance(value, list):
        for n, item in enumerate(value):
            yield from _paths(item, (*path, n))


def _swapped(data: Any, path: tuple[Any, ...], odd: Any) -> Any:
    changed = copy.deepcopy(data)
    holder = changed
    for step in path[:-1]:
        holder = holder[step]
    holder[path[-1]] = odd
    return changed


def _check(read: Callable[[dict[str, Any], int], ForeignChat], raw: dict[str, Any]) -> int:
    tried = 0
    for path in _paths(raw):
        if not path:
            continue
        for odd in ODD_VALUES:
            tried += 1
            try:
                chat = read(_swapped(raw, path, odd), 0)
            except ForeignFormatError:
                continue
            events = chat_events(chat, 1.0)
            assert events, path
            for stored in events:
                stored.event.model_dump_json()  # what the store writes: no surrogate survives
    return tried


def test_chatgpt_chats_read_or_are_refused() -> None:
    assert _check(chatgpt_chat, chatgpt_branching()) > 1000


@pytest.mark.parametrize("index", [0, 1])
def test_claude_chats_read_or_are_refused(index: int) -> None:
    assert _check(claude_chat, claude_export()[index]) > 100
