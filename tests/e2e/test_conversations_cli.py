"""Several conversations, one memory, as a user meets them in a terminal: `koroku
conversations`, `-c` on `ask` and `chat`, real processes on one data dir, the fake Gemini."""

from __future__ import annotations

import json
import threading
from typing import Any

from koroku_desktop.agent.titles import TITLE_INSTRUCTION
from tests.e2e.conftest import Koroku
from tests.fakes.gemini_replies import ErrorReply, ReceivedRequest, TextReply
from tests.fakes.gemini_server import FakeGemini
from tests.support.waits import wait_until


def ok(koroku: Koroku, *args: str, stdin: str = "") -> str:
    result = koroku.run(*args, stdin=stdin)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    return result.stdout


def refused(koroku: Koroku, *args: str, **env: str) -> str:
    """Exit 2 with one clear line on stderr."""
    result = koroku.run(*args, **env)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    return result.stderr


def listed(koroku: Koroku, *extra: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = json.loads(ok(koroku, "conversations", "--json", *extra))
    return found


def new(koroku: Koroku, *title: str) -> dict[str, Any]:
    made: dict[str, Any] = json.loads(ok(koroku, "conversations", "new", *title, "--json"))
    return made


def is_title_request(request: ReceivedRequest) -> bool:
    return request.system_text == TITLE_INSTRUCTION


def answering(titles: list[str | None]) -> Any:
    """Answer turns with `re: <question>`; title requests with the next of `titles` (None:
    an error, then the request fails)."""

    def reply(request: ReceivedRequest) -> Any:
        if is_title_request(request):
            title = titles.pop(0) if titles else "Spare title"
            return ErrorReply(400, "no title today") if title is None else TextReply(title)
        return TextReply(f"re: {request.last_text()}")

    return reply


def test_conversations_are_listed_renamed_archived_deleted_and_restored(koroku: Koroku) -> None:
    assert "No conversations yet" in ok(koroku, "conversations")
    taxes = new(koroku, "Taxes", "2025")
    trip = new(koroku)
    assert (taxes["title"], trip["title"]) == ("Taxes 2025", "New conversation")
    assert [c["id"] for c in listed(koroku)] == [trip["id"], taxes["id"]]  # newest first
    line = ok(koroku, "conversations").splitlines()[1]
    assert line.startswith("  Taxes 2025") and taxes["id"][:8] in line

    ok(koroku, "conversations", "rename", taxes["id"][:6], "Taxes", "for", "2025")
    ok(koroku, "conversations", "archive", "taxes for 2025")
    ok(koroku, "conversations", "delete", trip["id"])
    shown = listed(koroku)
    assert [(c["title"], c["archived"]) for c in shown] == [("Taxes for 2025", True)]
    every = {c["id"]: c for c in listed(koroku, "--all")}
    assert every[trip["id"]]["deleted"] is True
    assert "(deleted)" in ok(koroku, "conversations", "--all")
    ok(koroku, "conversations", "restore", trip["id"][:8])
    assert {c["id"] for c in listed(koroku)} == {trip["id"], taxes["id"]}
    # Nothing was updated or removed: every change is an event.
    kinds = [k for (k,) in koroku.sql("SELECT kind FROM events ORDER BY seq")]
    assert kinds == ["conversation"] * 6


def test_pins_are_events_listed_first_and_marked(koroku: Koroku) -> None:
    older, newer = new(koroku, "Older"), new(koroku, "Newer")
    assert "pinned Older" in ok(koroku, "conversations", "pin", "older")
    lines = ok(koroku, "conversations", "list").splitlines()
    assert lines[0].startswith("★ Older") and lines[1].startswith("  Newer")  # pinned first
    assert ok(koroku, "conversations", "list", "--all", "--json") == ok(
        koroku, "conversations", "--all", "--json"
    )
    assert [(c["title"], c["pinned"]) for c in listed(koroku)] == [
        ("Older", True),
        ("Newer", False),
    ]
    ok(koroku, "conversations", "pin", newer["id"][:8])
    ok(koroku, "conversations", "unpin", older["id"])
    assert [c["title"] for c in listed(koroku)] == ["Newer", "Older"]
    assert "no conversation “nope”" in refused(koroku, "conversations", "pin", "nope")
    rows = koroku.sql("SELECT payload FROM events WHERE kind = 'conversation' ORDER BY seq")
    actions = [json.loads(str(payload))["action"] for (payload,) in rows]
    assert actions == ["created", "created", "pinned", "pinned", "unpinned"]


def test_bad_names_and_titles_are_one_line_and_exit_2(koroku: Koroku) -> None:
    first, second = new(koroku, "Same"), new(koroku, "Same")
    assert "matches 2 conversations" in refused(koroku, "conversations", "rename", "Same", "x")
    assert "matches 2" in refused(koroku, "compact", "-c", "Same", GEMINI_API_KEY="k")
    assert "no conversation “nope”" in refused(koroku, "conversations", "delete", "nope")
    assert "cannot be empty" in refused(koroku, "conversations", "new", "   ")
    assert "cannot be empty" in refused(koroku, "conversations", "rename", first["id"], " ")
    long = new(koroku, "x" * 10_000)
    assert len(long["title"]) == 200
    ok(koroku, "conversations", "delete", second["id"])
    assert "is deleted" in refused(koroku, "ask", "-c", second["id"], "hi", GEMINI_API_KEY="k")
    assert "no conversation" in refused(koroku, "ask", "-c", "nope", "hi", GEMINI_API_KEY="k")


def test_each_conversation_has_its_own_context_and_search_spans_them(
    koroku: Koroku, fake_gemini: FakeGemini
) -> None:
    fake_gemini.set_fallback(answering(["Zebra facts", None, "Ocean talk"]))
    ok(koroku, "ask", "before conversations: about aardvarks")  # the log's first conversation
    zebra, ocean = new(koroku), new(koroku)
    ok(koroku, "ask", "-c", zebra["id"][:8], "tell me about zebras")
    ok(koroku, "ask", "-c", ocean["id"], "tell me about the ocean")  # its title fails
    ok(koroku, "ask", "-c", zebra["id"], "and their stripes?")
    sent = [r for r in fake_gemini.generate_requests() if not is_title_request(r)][-1]
    said = json.dumps(sent.contents)
    assert "zebras" in said and "ocean" not in said and "aardvarks" not in said

    titles = {c["id"]: c["title"] for c in listed(koroku)}
    assert titles[zebra["id"]] == "Zebra facts"
    assert titles[ocean["id"]] == "New conversation"  # the failure left it unnamed...
    ok(koroku, "ask", "-c", ocean["id"], "and its depth?")
    assert {c["id"]: c["title"] for c in listed(koroku)}[ocean["id"]] == "Ocean talk"  # ...retried
    assert sum(is_title_request(r) for r in fake_gemini.generate_requests()) == 3

    # The default is the most recently active conversation.
    ok(koroku, "ask", "what were we talking about?")
    last = [r for r in fake_gemini.generate_requests() if not is_title_request(r)][-1]
    assert "depth" in json.dumps(last.contents)
    counts = {c["title"]: c["messages"] for c in listed(koroku)}
    assert counts == {"Conversation": 2, "Zebra facts": 4, "Ocean talk": 6}

    # Search spans every conversation and says where each hit comes from.
    hits = json.loads(ok(koroku, "search", "--all-words", "--json", "zebras"))
    assert {(h["conversation_id"], h["conversation_title"]) for h in hits} == {
        (zebra["id"], "Zebra facts")
    }
    assert "[Zebra facts]" in ok(koroku, "search", "--all-words", "zebras")
    old = json.loads(ok(koroku, "search", "--all-words", "--json", "aardvarks"))
    assert {h["conversation_title"] for h in old} == {"Conversation"}


def test_two_processes_creating_at_once_get_two(koroku: Koroku) -> None:
    procs = [koroku.popen("conversations", "new", f"Made by {n}", "--json") for n in range(2)]
    made = []
    for proc in procs:
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
        made.append(json.loads(out)["id"])
    assert len(set(made)) == 2
    assert {c["title"] for c in listed(koroku)} == {"Made by 0", "Made by 1"}


def test_a_turn_in_one_conversation_never_waits_for_another(
    koroku: Koroku, fake_gemini: FakeGemini
) -> None:
    """`ask -c B` answers while a turn holds A's lease; A is deleted meanwhile: its turn
    ends and is kept, and A stays hidden until restored."""
    a, b = new(koroku, "Slow one"), new(koroku, "Quick one")
    arrived, release = threading.Event(), threading.Event()

    def reply(request: ReceivedRequest) -> Any:
        if is_title_request(request):
            return TextReply("unused")
        if "slow question" in request.last_text():
            arrived.set()
            release.wait(60)
            return TextReply("slow answer")
        return TextReply("quick answer")

    fake_gemini.set_fallback(reply)
    slow = koroku.popen("ask", "-c", a["id"], "slow question")
    try:
        wait_until(arrived.is_set, 60, message="the slow turn never reached the model")
        assert ok(koroku, "ask", "--no-wait", "-c", "Quick one", "quick question").strip() == (
            "quick answer"
        )
        assert "deleted Slow one" in ok(koroku, "conversations", "delete", a["id"])
    finally:
        release.set()
        out, err = slow.communicate(timeout=60)
    assert slow.returncode == 0, err
    assert out.strip() == "slow answer"
    assert [c["id"] for c in listed(koroku)] == [b["id"]]
    (deleted,) = [c for c in listed(koroku, "--all") if c["id"] == a["id"]]
    assert deleted["deleted"] and deleted["messages"] == 2  # the turn's events are kept


def test_chat_starts_and_switches_conversations(koroku: Koroku, fake_gemini: FakeGemini) -> None:
    fake_gemini.set_fallback(answering(["Named by model"]))
    first = new(koroku, "First")
    ok(koroku, "ask", "-c", first["id"], "remember the word pelican")
    script = "/new Groceries\nbuy oat milk\n/conversations\n/switch First\n/switch nope\n"
    out = ok(koroku, "chat", stdin=script)
    assert "(now in Groceries" in out and "(now in First" in out
    assert out.count("pelican") >= 4  # First's history, at start and again after /switch
    groceries = next(c for c in listed(koroku) if c["title"] == "Groceries")
    assert groceries["messages"] == 2
    sent = [r for r in fake_gemini.generate_requests() if not is_title_request(r)][-1]
    assert "pelican" not in json.dumps(sent.contents)  # Groceries' turn saw only its own
    # `chat -c` opens the one named; an unknown name is one line and exit 2.
    assert "oat milk" in ok(koroku, "chat", "-c", "Groceries", stdin="/exit\n")
    assert "no conversation" in refused(koroku, "chat", "-c", "nope")


def test_history_shows_one_conversation_or_every_one(
    koroku: Koroku, fake_gemini: FakeGemini
) -> None:
    fake_gemini.set_fallback(answering(["Beta"]))
    ok(koroku, "ask", "alpha words")
    beta = new(koroku)
    ok(koroku, "ask", "-c", beta["id"], "beta words")

    def texts(*args: str) -> str:
        return json.dumps(json.loads(ok(koroku, "history", "--json", *args)))

    live = texts()  # the most recent conversation's live context
    assert "beta words" in live and "alpha words" not in live
    assert "alpha words" in texts("-c", "Conversation")
    assert "beta" not in texts("-c", "conversation")  # an exact title, case aside
    every = texts("--all")
    assert "alpha words" in every and "beta words" in every
    assert "alpha" not in texts("--all", "-c", beta["id"][:8])
