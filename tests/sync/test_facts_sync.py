"""Facts about the user travel between two devices through a real PostgreSQL hub, with real
`koroku` subprocesses: a fact added on A is listed on B and goes with B's next request; an
edit on one device and a forget made on the other without seeing it leave the edit live on
both (nothing either device stated is lost: the log keeps all three)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.fakes.gemini_server import FakeGemini
from tests.sync.conftest import Device


def facts_of(device: Device) -> list[dict[str, Any]]:
    facts: list[dict[str, Any]] = device.ok_json("memory", "list")
    return facts


def memory(device: Device, *args: str) -> str:
    return device.ok("memory", *args)


@pytest.mark.timeout(300)  # several `koroku` subprocesses: slow on a loaded machine
def test_a_fact_added_on_a_is_known_on_b_and_sent_by_b(
    devices: tuple[Device, Device], fake_gemini: FakeGemini
) -> None:
    a, b = devices
    memory(a, "add", "--subject", "home city", "Lives in Oslo.")
    assert "pushed 1 events" in a.sync()
    assert "pulled 1 events" in b.sync()
    (fact,) = facts_of(b)
    assert (fact["subject"], fact["text"]) == ("home city", "Lives in Oslo.")
    assert fact["event_id"] == facts_of(a)[0]["event_id"]
    fake_gemini.reply_text("Hello from Oslo.")
    b.ask("hi")
    assert fake_gemini.generate_requests()[-1].system_text.endswith(
        "- (about you) home city: Lives in Oslo."
    )


@pytest.mark.timeout(300)
def test_a_forget_that_did_not_see_an_edit_made_elsewhere_leaves_the_edit_live(
    devices: tuple[Device, Device],
) -> None:
    a, b = devices
    memory(a, "add", "--category", "preference", "--subject", "coffee", "Black.")
    a.sync()
    b.sync()
    (on_b,) = facts_of(b)
    (on_a,) = facts_of(a)
    # Offline: A edits the fact; B forgets the fact as B knew it.
    memory(a, "edit", str(on_a["id"]), "Oat flat white.")
    memory(b, "forget", str(on_b["id"]))
    assert facts_of(b) == []
    a.sync()
    b.sync()  # B pushes its forget after A's edit, and pulls the edit
    a.sync()
    for device in (a, b):
        assert [(f["subject"], f["text"]) for f in facts_of(device)] == [
            ("coffee", "Oat flat white.")
        ]
        assert device.sql("SELECT count(*) FROM events WHERE kind = 'fact'") == [(3,)]
