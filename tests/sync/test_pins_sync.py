"""Pins travel between two devices through a real PostgreSQL hub, with real `koroku`
subprocesses: a pin is a `conversation` event, and when a pin and an unpin were made on two
devices without seeing each other, the one later in the hub's order wins on both."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.sync.conftest import Device


def conversations(device: Device) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = device.ok_json("conversations", "list")
    return found


def run(device: Device, *args: str) -> str:
    return device.ok("conversations", *args)


@pytest.mark.timeout(300)  # several `koroku` subprocesses: slow on a loaded machine
def test_a_pin_syncs_and_the_later_of_pin_and_unpin_in_the_hub_order_wins(
    devices: tuple[Device, Device],
) -> None:
    a, b = devices
    made = a.ok_json("conversations", "new", "Taxes")
    run(a, "pin", made["id"])
    a.sync()
    b.sync()
    assert [(c["title"], c["pinned"]) for c in conversations(b)] == [("Taxes", True)]
    assert run(b, "list").startswith("★ Taxes")

    # Offline, each without seeing the other: B unpins; A unpins and pins again. B syncs
    # first, so the hub orders B's unpin before A's two; A then pulls B's unpin, which lands
    # in A's own log after A's pin: only the hub's order gives the pin the last word.
    run(b, "unpin", "Taxes")
    run(a, "unpin", "Taxes")
    run(a, "pin", "Taxes")
    b.sync()
    a.sync()
    b.sync()
    for device in (a, b):
        assert [(c["title"], c["pinned"]) for c in conversations(device)] == [("Taxes", True)]
    rows = a.sql("SELECT seq, hub_seq, payload FROM events WHERE kind = 'conversation'")
    actions = {int(str(seq)): (hub, json.loads(str(p))["action"]) for seq, hub, p in rows}
    last_here = actions[max(actions)]
    assert last_here[1] == "unpinned"  # B's unpin is A's newest row, yet not the last word
