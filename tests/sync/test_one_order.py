"""Every listing of the log is in the one order on every device: `history --all` (text and
JSONL), `export --format json` (all and live) and the live context list the same events in
the same order on two devices syncing through a real hub, SIGKILLs included."""

from __future__ import annotations

import json
import re

import pytest

from tests.sync.conftest import Device
from tests.sync.test_sync_crash import hub_ids, kill_sync_at, write_turns
from tests.sync.test_two_devices import live_ids


def history_ids(device: Device) -> list[str]:
    done = device.run("history", "--all", "--jsonl")
    assert done.returncode == 0, done.stderr
    return [json.loads(line)["event_id"] for line in done.stdout.splitlines()]


def export_ids(device: Device, *extra: str) -> list[str]:
    done = device.run("export", "--format", "json", *extra)
    assert done.returncode == 0, done.stderr
    return [e["event_id"] for e in json.loads(done.stdout)["events"]]


def history_text(device: Device) -> str:
    """`history --all` as text, without the local seq numbers (`#12`), which differ."""
    done = device.run("history", "--all")
    assert done.returncode == 0, done.stderr
    return re.sub(r"(?m)^#\d+ ", "", done.stdout)


def assert_one_order(a: Device, b: Device, hub: list[str]) -> None:
    assert history_ids(a) == history_ids(b) == hub
    assert export_ids(a) == export_ids(b) == hub
    assert export_ids(a, "--live") == export_ids(b, "--live") == live_ids(a) == live_ids(b)
    assert history_text(a) == history_text(b)


@pytest.mark.timeout(300)
def test_offline_turns_on_both_devices_are_listed_in_the_hub_order_on_both(
    devices: tuple[Device, Device], hub_url: str
) -> None:
    a, b = devices
    mine_a = write_turns(a, 4, "A")
    mine_b = write_turns(b, 3, "B")
    b.sync()  # B's turns reach the hub first, so they come first there and everywhere
    a.sync()
    b.sync()
    hub = hub_ids(hub_url)
    assert hub == mine_b + mine_a
    # A wrote its turns first: in seq order A would list them first; the one order does not.
    assert [r[0] for r in a.sql("SELECT event_id FROM events ORDER BY seq")] == mine_a + mine_b
    assert_one_order(a, b, hub)


@pytest.mark.timeout(300)
def test_unpushed_turns_come_last_and_take_their_place_once_pushed(
    devices: tuple[Device, Device], hub_url: str
) -> None:
    a, b = devices
    write_turns(a, 2, "A")
    a.sync()
    b.sync()
    later_b = write_turns(b, 1, "B")
    later_a = write_turns(a, 1, "A2")
    a.sync()  # A's later turn is on the hub; B's is still only on B
    b_before = history_ids(b)
    assert b_before[-2:] == later_b and later_a[0] not in b_before
    b.sync()
    assert history_ids(b)[-4:] == later_a + later_b  # pulled before B's own, pushed after
    a.sync()
    assert_one_order(a, b, hub_ids(hub_url))


@pytest.mark.timeout(300)
def test_after_sigkills_during_push_and_pull_both_devices_list_one_order(
    devices: tuple[Device, Device], hub_url: str
) -> None:
    a, b = devices
    write_turns(a, 5, "A")
    write_turns(b, 3, "B")
    kill_sync_at(a, "push")
    kill_sync_at(b, "pull")
    kill_sync_at(a, "pull")
    b.sync()
    a.sync()
    b.sync()
    hub = hub_ids(hub_url)
    assert len(hub) == len(set(hub)) == 16
    assert_one_order(a, b, hub)
