"""Web tools end to end with real `koroku` processes: the env switches, the sources printed by
`ask`, kept in the log across a restart (and not sent back to Gemini), exported to Markdown
and JSON, and restored by `import` into another data dir."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.conftest import Koroku
from tests.fakes.gemini_grounding import grounded_reply
from tests.fakes.gemini_server import FakeGemini

WEB = {"KOROKU_GOOGLE_SEARCH": "1", "KOROKU_URL_CONTEXT": "1"}


def test_sources_are_printed_kept_exported_and_imported(
    koroku: Koroku, fake_gemini: FakeGemini, tmp_path: Path
) -> None:
    fake_gemini.reply_with(grounded_reply())
    ask = koroku.run("ask", "Who won the euro 2024?", **WEB)
    assert ask.returncode == 0, ask.stderr
    answer, sources = ask.stdout.split("\n  Sources:\n")
    assert answer.startswith("Spain won Euro 2024")
    assert "in the final. [1] This victory" in answer  # the markers match the numbered list
    assert "    [1] aljazeera.com <https://vertexaisearch.cloud.google.com/" in sources
    body = fake_gemini.generate_requests()[-1].body
    assert {"googleSearch": {}} in body["tools"] and {"urlContext": {}} in body["tools"]
    assert body["toolConfig"] == {"includeServerSideToolInvocations": True}

    # A second process: the reply comes back from the log without its grounding metadata.
    fake_gemini.reply_text("Yes, in Berlin.")
    again = koroku.run("ask", "Was the final in Berlin?", KOROKU_GOOGLE_SEARCH="0")
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == "Yes, in Berlin."
    last = fake_gemini.generate_requests()[-1]
    assert all("googleSearch" not in t and "urlContext" not in t for t in last.body["tools"])
    model_turn = last.contents[-2]
    assert model_turn["role"] == "model"
    assert "groundingMetadata" not in json.dumps(model_turn)
    assert "Spain won Euro 2024" in json.dumps(model_turn)

    md = koroku.run("export", "--format", "md")
    assert md.returncode == 0, md.stderr
    assert "in the final. [1] This victory" in md.stdout
    assert "**Sources**" in md.stdout and "- [2] [uefa.com](<https://vertexaisearch." in md.stdout

    exported = koroku.run("export", "--format", "json")
    assert exported.returncode == 0, exported.stderr
    dump = tmp_path / "export.json"
    dump.write_text(exported.stdout, encoding="utf-8")
    other = Koroku(tmp_path / "other-home", koroku.workspace)
    imported = other.run("import", str(dump), KOROKU_HOME=str(other.home), GEMINI_API_KEY="")
    assert imported.returncode == 0, imported.stderr
    md2 = other.run("export", "--format", "md", KOROKU_HOME=str(other.home))
    assert md2.returncode == 0, md2.stderr
    assert "- [1] [aljazeera.com](<https://vertexaisearch." in md2.stdout
    assert "in the final. [1] This victory" in md2.stdout


def test_chat_prints_the_sources_after_the_streamed_answer_and_in_history(
    koroku: Koroku, fake_gemini: FakeGemini
) -> None:
    fake_gemini.reply_with(grounded_reply())
    chat = koroku.run("chat", stdin="Who won the euro 2024?\nexit\n", **WEB)
    assert chat.returncode == 0, chat.stderr
    streamed = chat.stdout.split("koroku> ", 1)[1]
    assert streamed.index("in the final.") < streamed.index("  Sources:")
    assert "    [2] uefa.com <https://vertexaisearch." in streamed
    history = koroku.run("history")
    assert history.returncode == 0, history.stderr
    assert "  Sources:" in history.stdout and "[3] www.uefa.com/euro2024/" in history.stdout


def test_a_bad_switch_value_is_refused_naming_the_variable(koroku: Koroku) -> None:
    done = koroku.run("ask", "hi", KOROKU_GOOGLE_SEARCH="sometimes")
    assert done.returncode == 2
    assert "KOROKU_GOOGLE_SEARCH" in done.stderr


def test_the_refused_combination_is_said_plainly(koroku: Koroku, fake_gemini: FakeGemini) -> None:
    done = koroku.run("ask", "news?", KOROKU_MODEL="gemini-2.5-flash", **WEB)
    assert done.returncode == 1
    assert "built-in web tools combine with function calling only on Gemini 3" in done.stderr
