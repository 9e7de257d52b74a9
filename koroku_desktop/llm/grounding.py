"""Gemini's web tools on the wire: the `google_search` / `url_context` tools offered with a
request, and the `groundingMetadata` / `urlContextMetadata` of a reply as a domain `Grounding`.

Built-in tools combine with function declarations (Koroku's own tools) only on Gemini 3
models, as a preview, with `include_server_side_tool_invocations` set; the server-side
`toolCall`/`toolResponse` parts it then returns are kept verbatim (as unknown parts) and sent
back in history, as the API asks. Other models refuse the combination with HTTP 400, which
`combination_refused` turns into a sentence that says what to change.
"""

from __future__ import annotations

from collections.abc import Sequence

from google.genai import types

from koroku_desktop.domain.grounding import Grounding, GroundingSupport, UrlRetrieval, WebSource
from koroku_desktop.domain.model_io import ModelError

WEB_TOOL_NAMES = {"google_search": "Google Search", "url_context": "URL context"}


def web_tools_to_sdk(names: Sequence[str]) -> list[types.Tool]:
    """One SDK tool per built-in web tool asked for (unknown names are ignored)."""
    tools: list[types.Tool] = []
    if "google_search" in names:
        tools.append(types.Tool(google_search=types.GoogleSearch()))
    if "url_context" in names:
        tools.append(types.Tool(url_context=types.UrlContext()))
    return tools


def combination_refused(error: ModelError, model: str, names: Sequence[str]) -> ModelError:
    """The 400 of a model that will not combine web tools with function calling, said plainly
    (any other error is returned as it is)."""
    if error.kind != "bad_request" or not names:
        return error
    which = " and ".join(WEB_TOOL_NAMES.get(n, n) for n in names)
    return ModelError(
        "bad_request",
        f"Gemini refused {which} together with Koroku's tools for {model}: built-in web tools "
        f"combine with function calling only on Gemini 3 models. Turn the web tools off in "
        f"Settings (or KOROKU_GOOGLE_SEARCH=0 / KOROKU_URL_CONTEXT=0), or choose a Gemini 3 "
        f"model. Gemini said: {error.message}",
        error.status,
    )


def _source(chunk: types.GroundingChunk) -> WebSource:
    """A chunk as a source; a chunk of another kind keeps its place (its index is cited)."""
    if chunk.web is not None:
        web = chunk.web
        return WebSource(uri=web.uri or "", title=web.title or "", domain=web.domain or "")
    other = chunk.retrieved_context or chunk.maps
    if other is not None:
        return WebSource(uri=other.uri or "", title=other.title or "")
    return WebSource(uri="")


def _support(support: types.GroundingSupport) -> GroundingSupport:
    segment = support.segment or types.Segment()
    return GroundingSupport(
        text=segment.text or "",
        start_index=segment.start_index,
        end_index=segment.end_index,
        part_index=segment.part_index,
        sources=list(support.grounding_chunk_indices or []),
        confidence=list(support.confidence_scores) if support.confidence_scores else None,
    )


def grounding_from_sdk(
    metadata: types.GroundingMetadata | None, url_context: types.UrlContextMetadata | None
) -> Grounding | None:
    """A reply's grounding, or None when it was not grounded."""
    grounding = Grounding()
    if metadata is not None:
        entry = metadata.search_entry_point
        grounding = Grounding(
            search_queries=list(metadata.web_search_queries or []),
            sources=[_source(c) for c in metadata.grounding_chunks or []],
            supports=[_support(s) for s in metadata.grounding_supports or []],
            search_entry_point=entry.rendered_content if entry is not None else None,
        )
    if url_context is not None and url_context.url_metadata:
        retrieved = [
            UrlRetrieval(
                url=m.retrieved_url or "",
                status=str(m.url_retrieval_status.value) if m.url_retrieval_status else "",
            )
            for m in url_context.url_metadata
        ]
        grounding = grounding.model_copy(update={"url_context": retrieved})
    return None if grounding.empty else grounding
