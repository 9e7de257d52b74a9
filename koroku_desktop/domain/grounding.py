"""What grounded a model reply on the web: Gemini's `groundingMetadata` (Google Search) and
`urlContextMetadata` (URL context), kept with the reply's `MessageEvent`.

It is stored and shown (a "Sources" list, citation markers), never sent back to Gemini: the
request is built from the message's parts only, and the API takes no grounding in history.
"""

from __future__ import annotations

from urllib.parse import urlparse

from pydantic import Field

from koroku_desktop.domain.frozen import Frozen


class WebSource(Frozen):
    """One grounding chunk from the web: the link Gemini gives (often a redirect through
    vertexaisearch.cloud.google.com), its title, and the site's domain when known."""

    uri: str
    title: str = ""
    domain: str = ""

    @property
    def site(self) -> str:
        """The site to name: the domain, else the title (Gemini titles web chunks by
        domain), else the link's host."""
        return self.domain or self.title or urlparse(self.uri).netloc


class GroundingSupport(Frozen):
    """A stretch of the reply's text and the sources (indices into `Grounding.sources`)
    that back it. `start_index`/`end_index` are Gemini's offsets into the text part;
    `text` is the stretch itself, which is what citation markers are placed by."""

    text: str = ""
    start_index: int | None = None
    end_index: int | None = None
    part_index: int | None = None
    sources: list[int] = Field(default_factory=list)
    confidence: list[float] | None = None


class UrlRetrieval(Frozen):
    """A URL the URL-context tool fetched, and how that went (`URL_RETRIEVAL_STATUS_...`)."""

    url: str
    status: str = ""

    @property
    def ok(self) -> bool:
        """The page was read."""
        return self.status in ("", "URL_RETRIEVAL_STATUS_SUCCESS")


class Grounding(Frozen):
    """Everything a reply was grounded on: search queries, sources, which text they back,
    the Google Search suggestions widget (`search_entry_point`, HTML), URLs read."""

    search_queries: list[str] = Field(default_factory=list)
    sources: list[WebSource] = Field(default_factory=list)
    supports: list[GroundingSupport] = Field(default_factory=list)
    search_entry_point: str | None = None
    """Gemini's `searchEntryPoint.renderedContent`: the Search Suggestions HTML."""
    url_context: list[UrlRetrieval] = Field(default_factory=list)

    @property
    def empty(self) -> bool:
        """Nothing worth keeping (a reply that was not grounded)."""
        return not (self.search_queries or self.sources or self.url_context)
