"""A grounded reply's sources as a `SourcesBlock`, and citation markers (`[1]`, `[1, 2]`) put
into its text after each stretch Gemini says the sources back.

Markers are placed by the stretch's own text (`GroundingSupport.text`), not by Gemini's
offsets, which count UTF-8 bytes of one part while a block holds the joined characters; a
stretch that cannot be found gets no marker rather than a misplaced one.
"""

from __future__ import annotations

from html.parser import HTMLParser
from urllib.parse import urlparse

from koroku_desktop.domain.grounding import Grounding
from koroku_desktop.render.blocks import Block, SourceLink, SourcesBlock, TextBlock


def sources_block(grounding: Grounding) -> SourcesBlock | None:
    """The sources worth listing: every web chunk with a link (numbered by its chunk index,
    as cited), then pages URL context read that no chunk names; None when there are none."""
    links: list[SourceLink] = []
    for index, source in enumerate(grounding.sources):
        if source.uri:
            title = source.title or source.site
            links.append(SourceLink(index + 1, title, source.uri, source.site))
    seen = {s.uri for s in grounding.sources}
    number = len(grounding.sources)
    for page in grounding.url_context:
        if page.ok and page.url and page.url not in seen:
            seen.add(page.url)
            number += 1
            title = page.url.split("://", 1)[-1]
            links.append(SourceLink(number, title, page.url, _host(page.url)))
    suggestions = search_suggestions(grounding.search_entry_point or "")
    if not links and not suggestions:
        return None
    return SourcesBlock(tuple(links), tuple(grounding.search_queries), tuple(suggestions))


class _Chips(HTMLParser):
    """Collects the `<a class="chip" href=...>query</a>` of Search Suggestions HTML."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, str]] = []
        self._href: str | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = dict(attrs)
        if tag == "a" and "chip" in (named.get("class") or "").split():
            self._href, self._text = named.get("href") or "", []

    def handle_data(self, data: str) -> None:
        if self._href is not None:
            self._text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "a" and self._href is not None:
            query = " ".join("".join(self._text).split())
            if query and self._href.startswith("https://"):
                self.found.append((query, self._href))
            self._href = None


def search_suggestions(rendered: str) -> list[tuple[str, str]]:
    """The Google Search suggestions in Gemini's `searchEntryPoint.renderedContent`: each
    query and the link Gemini gave for its results (Google asks apps that ground answers on
    Search to show them). Qt cannot draw that HTML and CSS as is, so the chips are drawn as
    links of our own, with Gemini's own URLs; malformed HTML gives what could be read."""
    chips = _Chips()
    try:
        chips.feed(rendered)
        chips.close()
    except Exception:  # noqa: BLE001 — never let a bad snippet break the reply
        pass
    return chips.found


def _host(url: str) -> str:
    return urlparse(url).netloc or url


def cite(text: str, grounding: Grounding) -> str:
    """`text` with a marker after each supported stretch found in it."""
    cited = {i for i, s in enumerate(grounding.sources) if s.uri}
    inserts: list[tuple[int, str]] = []
    cursor = 0
    for support in grounding.supports:
        numbers = [i + 1 for i in support.sources if i in cited]
        stretch = support.text.strip()
        if not numbers or not stretch:
            continue
        at = text.find(stretch, cursor)
        if at < 0:
            at = text.find(stretch)
        if at < 0:
            continue
        end = at + len(stretch)
        cursor = end
        inserts.append((end, " [" + ", ".join(str(n) for n in sorted(set(numbers))) + "]"))
    for end, marker in sorted(inserts, reverse=True):
        text = text[:end] + marker + text[end:]
    return text


def grounded_blocks(blocks: tuple[Block, ...], grounding: Grounding) -> tuple[Block, ...]:
    """A reply's blocks with citation markers in its text and the sources after it."""
    out: list[Block] = [
        TextBlock(cite(block.text, grounding)) if isinstance(block, TextBlock) else block
        for block in blocks
    ]
    sources = sources_block(grounding)
    if sources is not None:
        out.append(sources)
    return tuple(out)
