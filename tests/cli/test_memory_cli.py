"""`koroku memory` as a person uses it, in real `koroku` subprocesses on one data dir, with
`koroku ask` over the fake Gemini server: a fact added by one process goes with the next
process's request, the `remember` tool travels the wire, bad input stores nothing."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest

from tests.fakes.gemini_replies import CallsReply, ReceivedRequest, Reply, TextReply
from tests.fakes.gemini_server import FakeGemini
from tests.support.processes import Koroku, koroku

__all__ = ["koroku"]

pytestmark = pytest.mark.slow


def ok(k: Koroku, *args: str) -> subprocess.CompletedProcess[str]:
    done = k.run(*args)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done


def prefix(request: ReceivedRequest) -> str:
    """What Gemini's implicit cache keys on first: the system instruction and the tools."""
    return json.dumps([request.body.get("systemInstruction"), request.body.get("tools")])


def listed(k: Koroku) -> list[dict[str, Any]]:
    facts: list[dict[str, Any]] = json.loads(ok(k, "memory", "list", "--json").stdout)
    return facts


def test_add_list_edit_forget_and_the_next_ask_carries_the_facts(
    koroku: Koroku, fake_gemini: FakeGemini
) -> None:
    assert "knows no facts about you yet" in ok(koroku, "memory").stdout
    added = ok(koroku, "memory", "add", "--subject", "home city", "I", "live", "in", "Oslo")
    assert added.stdout.startswith("Remembered #1 — home city: I live in Oslo")
    ok(koroku, "memory", "add", "--category", "preference", "--subject", "coffee", "Black.")
    (home, coffee) = listed(koroku)
    assert (home["subject"], home["text"], home["category"]) == (
        "home city",
        "I live in Oslo",
        "about_you",
    )
    text = ok(koroku, "memory", "list").stdout
    assert "About you\n  #1  home city: I live in Oslo" in text
    assert "Preferences\n  #2  coffee: Black." in text

    fake_gemini.reply_text("hello Jan")
    ok(koroku, "ask", "hi")
    fake_gemini.reply_text("hello again, Jan")
    ok(koroku, "ask", "hi again")
    request, next_request = fake_gemini.generate_requests()
    assert request.system_text.endswith(
        "- (about you) home city: I live in Oslo\n- (preferences) coffee: Black."
    )
    # Another process, the same facts: the prefix Gemini caches is byte-identical.
    assert prefix(request) == prefix(next_request)

    edited = ok(koroku, "memory", "edit", str(coffee["id"]), "Oat flat white.")
    assert "(replaces #2: Black.)" in edited.stdout
    ok(koroku, "memory", "forget", f"#{home['id']}")
    assert [(f["subject"], f["text"]) for f in listed(koroku)] == [("coffee", "Oat flat white.")]

    fake_gemini.reply_text("hello again")
    ok(koroku, "ask", "hi once more")
    again = fake_gemini.generate_requests()[-1].system_text
    assert "Oat flat white." in again and "Oslo" not in again and "Black." not in again
    # Nothing was deleted: every statement stays in the log, and in ranked search.
    assert koroku.sql("SELECT count(*) FROM events WHERE kind = 'fact'") == [(4,)]
    found = json.loads(ok(koroku, "search", "--json", "black").stdout)
    assert [(h["kind"], h["text"]) for h in found] == [("fact", "coffee: Black.")]


def test_bad_input_gets_a_clear_message_and_stores_nothing(koroku: Koroku) -> None:
    ok(koroku, "memory", "add", "--subject", "name", "Jan")
    page = "word " * 600
    too_long = koroku.run("memory", "add", page)
    assert too_long.returncode == 2
    assert "at most 1,000 characters and this one has 2,999" in too_long.stderr
    assert "nothing was stored" in too_long.stderr
    edit_long = koroku.run("memory", "edit", "1", page)
    assert edit_long.returncode == 2 and "at most 1,000 characters" in edit_long.stderr
    empty = koroku.run("memory", "add", "  ")
    assert empty.returncode == 2 and "cannot be empty" in empty.stderr
    unknown = koroku.run("memory", "forget", "42")
    assert unknown.returncode == 1 and "no fact has the id 42" in unknown.stderr
    bad_category = koroku.run("memory", "add", "--category", "pets", "a cat")
    assert bad_category.returncode == 2 and "invalid choice" in bad_category.stderr
    assert [(f["id"], f["text"]) for f in listed(koroku)] == [(1, "Jan")]


def test_the_remember_tool_over_the_wire_and_turning_facts_off(
    koroku: Koroku, fake_gemini: FakeGemini
) -> None:
    def remembers(request: ReceivedRequest) -> Reply:
        if any("functionResponse" in p for p in request.contents[-1].get("parts", [])):
            return TextReply("I'll remember that your sister is Anna.")
        assert "remember" in request.tool_names
        args = {"subject": "sister", "fact": "Anna, lives in Bergen.", "category": "person"}
        return CallsReply((("remember", args),))

    fake_gemini.reply_with(remembers, times=2)
    done = ok(koroku, "ask", "remember that my sister Anna lives in Bergen")
    assert "remember that your sister is Anna" in done.stdout
    (fact,) = listed(koroku)
    assert (fact["source"], fact["category"], fact["text"]) == (
        "model",
        "person",
        "Anna, lives in Bergen.",
    )
    said = koroku.sql("SELECT seq FROM events WHERE kind = 'message' ORDER BY seq LIMIT 1")
    assert fact["from_seqs"] == [said[0][0]]
    # The tool's answer, as the model got it, says what was stored.
    answer = fake_gemini.generate_requests()[1].contents[-1]["parts"][0]["functionResponse"]
    assert answer["response"]["stored"] == "sister: Anna, lives in Bergen."

    assert "Remembering facts is off" in ok(koroku, "memory", "off").stdout
    fake_gemini.reply_text("ok")
    ok(koroku, "ask", "who is my sister?")
    off = fake_gemini.generate_requests()[-1]
    assert "Anna" not in off.system_text and "remember" not in off.tool_names
    assert "Remembering facts is off" in koroku.run("memory", "list").stderr
    ok(koroku, "memory", "on")
