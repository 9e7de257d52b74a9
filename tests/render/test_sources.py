"""A grounded reply on every surface: the fold's citation markers and Sources block, the
Markdown export, the terminal, search text; and the grounding surviving the payload round trip.

The grounding comes from the response written from Gemini's REST docs (tests/fakes/recorded),
parsed by the real SDK and mapped by the adapter, as in the app."""

from __future__ import annotations

import io

from google.genai import types

from koroku_desktop.cli.terminal import render_message, sources_text
from koroku_desktop.domain.events import MessageEvent, StoredEvent, dump_event
from koroku_desktop.domain.grounding import Grounding, GroundingSupport, WebSource
from koroku_desktop.domain.parts import TextPart
from koroku_desktop.domain.upcasting import upcast
from koroku_desktop.llm.grounding import grounding_from_sdk
from koroku_desktop.render import blocks as b
from koroku_desktop.render.citations import cite, search_suggestions, sources_block
from koroku_desktop.render.fold import message_blocks
from koroku_desktop.render.markdown import markdown_entry
from koroku_desktop.store.search.searchable import searchable_text
from tests.fakes.gemini_grounding import grounded_response


def grounded_event() -> MessageEvent:
    """The recorded reply as the adapter stores it."""
    response = types.GenerateContentResponse.model_validate(grounded_response())
    candidate = response.candidates[0]  # type: ignore[index]
    text = candidate.content.parts[0].text  # type: ignore[union-attr,index]
    grounding = grounding_from_sdk(candidate.grounding_metadata, candidate.url_context_metadata)
    return MessageEvent(
        role="model", origin="model", parts=[TextPart(text=text or "")], grounding=grounding
    )


def test_the_fold_cites_each_supported_sentence_and_lists_the_sources() -> None:
    blocks = message_blocks(grounded_event())
    text, sources = blocks
    assert isinstance(text, b.TextBlock) and isinstance(sources, b.SourcesBlock)
    # Placed by the sentence's text: the en dash makes Gemini's byte offsets differ.
    assert text.text == (
        "Spain won Euro 2024, defeating England 2–1 in the final. [1] This victory marks "
        "Spain's record fourth European Championship title. [1, 2]"
    )
    assert [(s.number, s.title, s.site) for s in sources.sources] == [
        (1, "aljazeera.com", "aljazeera.com"),
        (2, "uefa.com", "uefa.com"),
        (3, "www.uefa.com/euro2024/", "www.uefa.com"),  # read through URL context
    ]
    assert sources.sources[0].uri.startswith("https://vertexaisearch.cloud.google.com/")
    assert sources.queries == ("UEFA Euro 2024 winner", "who won euro 2024")


def test_unfound_or_unlinked_support_gets_no_marker() -> None:
    grounding = Grounding(
        sources=[WebSource(uri="https://a.example/x", title="A"), WebSource(uri="")],
        supports=[
            GroundingSupport(text="not in the text", sources=[0]),
            GroundingSupport(text="Second.", sources=[1]),
            GroundingSupport(text="First.", sources=[0, 0]),
        ],
    )
    assert cite("First. Second.", grounding) == "First. [1] Second."


def test_markdown_export_links_the_sources_under_the_reply() -> None:
    entry = StoredEvent(seq=7, conversation_id="c", created_at=0.0, event=grounded_event())
    md = markdown_entry(entry)
    assert "in the final. [1] This victory" in md
    assert "**Sources**\n\n- [1] [aljazeera.com](<https://vertexaisearch.cloud.google.com/" in md
    assert "- [3] [www.uefa.com/euro2024/](<https://www.uefa.com/euro2024/>)\n" in md
    # The searches Gemini ran, as the Google Search suggestions it gave, each a link.
    assert md.endswith(
        "*Google Search:* [UEFA Euro 2024 winner](<https://www.google.com/search?"
        "q=UEFA+Euro+2024+winner&client=app-vertex-grounding&safesearch=active>) · "
        "[who won euro 2024](<https://www.google.com/search?q=who+won+euro+2024"
        "&client=app-vertex-grounding&safesearch=active>)"
    )


def test_the_terminal_prints_the_sources_after_the_answer() -> None:
    event = grounded_event()
    lines = sources_text(event).splitlines()
    assert lines[0] == "  Sources:"
    assert lines[1].startswith("    [1] aljazeera.com <https://vertexaisearch.")
    assert lines[-2:] == [
        "    Google Search: UEFA Euro 2024 winner <https://www.google.com/search?q=UEFA+Euro"
        "+2024+winner&client=app-vertex-grounding&safesearch=active>",
        "    Google Search: who won euro 2024 <https://www.google.com/search?q=who+won+euro"
        "+2024&client=app-vertex-grounding&safesearch=active>",
    ]
    out = io.StringIO()
    render_message(event, out)
    assert out.getvalue().startswith("koroku> Spain won Euro 2024")
    assert "  Sources:" in out.getvalue()
    plain = MessageEvent(role="model", parts=[TextPart(text="hi")])
    assert sources_text(plain) == ""


def test_sources_are_searchable() -> None:
    text = searchable_text(grounded_event())
    assert "aljazeera.com" in text and "who won euro 2024" in text


def test_grounding_survives_the_payload_round_trip() -> None:
    event = grounded_event()
    payload = dump_event(event)
    assert payload["grounding"]["sources"][0]["title"] == "aljazeera.com"
    assert upcast("message", payload) == event
    old = {"kind": "message", "role": "model", "parts": [{"kind": "text", "text": "x"}]}
    restored = upcast("message", old)
    assert isinstance(restored, MessageEvent) and restored.grounding is None


def test_search_suggestions_are_read_from_the_rendered_html_whatever_it_holds() -> None:
    chips = (
        '<div class="carousel"><a class="chip" href="https://www.google.com/search?q=a">a\n'
        ' query</a><a class="other" href="https://x.example/">not a chip</a>'
        '<a class="chip" href="javascript:alert(1)">refused</a>'
        '<a class="chip big" href="https://www.google.com/search?q=b">b'
    )
    assert search_suggestions(chips) == [("a query", "https://www.google.com/search?q=a")]
    assert search_suggestions("") == [] and search_suggestions("<<<>>> &bogus; <a") == []
    # Suggestions alone (a search that found no page worth citing) still make a block.
    alone = sources_block(Grounding(search_entry_point=chips, search_queries=["a query"]))
    assert alone is not None and alone.sources == ()
    assert alone.suggestions == (("a query", "https://www.google.com/search?q=a"),)
