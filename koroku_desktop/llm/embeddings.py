"""GeminiEmbedder: the `Embedder` port over google-genai's `embed_content`.

Stored text is embedded with task type RETRIEVAL_DOCUMENT and queries with RETRIEVAL_QUERY
(the asymmetric pair the model is trained for). The Gemini API serves `embed_content` through
`:batchEmbedContents`, up to 100 texts a request, so long lists are sent in slices of
`BATCH_SIZE`. Vectors come back at `dimensions` (768 by default; see `DEFAULT_DIMENSIONS`).

Its timeout and retries go with each request, so it can send through another SDK client: the
chat model's (one client, one connection pool and one TLS set-up per process).
"""

from __future__ import annotations

from collections.abc import Callable

from google import genai
from google.genai import types

from koroku_desktop.domain.model_io import ModelError
from koroku_desktop.llm.certs import use_certifi_if_store_empty
from koroku_desktop.llm.errors import to_model_error

DEFAULT_EMBEDDING_MODEL = "gemini-embedding-001"
DEFAULT_DIMENSIONS = 768
"""gemini-embedding-001 is trained Matryoshka-style: 768 of its 3072 dimensions keep almost
all of its retrieval quality (Google's MTEB figures: 67.99 at 768 vs 68.16 at 3072) at a
quarter of the storage and of the time a brute-force scan takes."""
BATCH_SIZE = 100
"""The most texts one `:batchEmbedContents` request may carry."""

ClientSource = Callable[[], genai.Client]
"""Hands out the SDK client to send through (built on first use by its owner)."""


class GeminiEmbedder:
    """An `Embedder` backed by Gemini's embedding model, with retries and a timeout."""

    def __init__(
        self,
        api_key: str,
        *,
        model: str = DEFAULT_EMBEDDING_MODEL,
        dimensions: int = DEFAULT_DIMENSIONS,
        timeout_s: float = 30,
        retry_attempts: int = 2,
        client: ClientSource | None = None,
    ) -> None:
        """`client`: another adapter's SDK client to send through (None: its own, built on
        first use and closed by `aclose`)."""
        self._api_key = api_key.strip()
        self._shared = client
        self.model = model
        self.dimensions = dimensions
        self._timeout_s = timeout_s
        retry = types.HttpRetryOptions(
            attempts=max(1, retry_attempts), initial_delay=0.5, max_delay=5.0
        )
        self._http_options = types.HttpOptions(timeout=int(timeout_s * 1000), retry_options=retry)
        self._client: genai.Client | None = None

    async def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """One vector per stored text, in order. Raises `ModelError` on failure."""
        vectors: list[list[float]] = []
        for start in range(0, len(texts), BATCH_SIZE):
            vectors.extend(
                await self._embed(texts[start : start + BATCH_SIZE], "RETRIEVAL_DOCUMENT")
            )
        return vectors

    async def embed_query(self, text: str) -> list[float]:
        """The vector of a search query. Raises `ModelError` on failure."""
        (vector,) = await self._embed([text], "RETRIEVAL_QUERY")
        return vector

    def connect(self) -> None:
        """Build the SDK client (TLS contexts, HTTP clients) now rather than on first use."""
        self._require_client()

    async def aclose(self) -> None:
        """Close the SDK's HTTP connections (its own client's; a shared one is its owner's)."""
        if self._client is not None:
            await self._client.aio.aclose()

    async def _embed(self, texts: list[str], task: str) -> list[list[float]]:
        if not texts:
            return []
        config = types.EmbedContentConfig(
            task_type=task,
            output_dimensionality=self.dimensions,
            http_options=self._http_options,  # this request's timeout and retries
        )
        try:
            contents: list[types.ContentUnion] = [
                types.Content(parts=[types.Part(text=t)]) for t in texts
            ]
            response = await self._require_client().aio.models.embed_content(
                model=self.model, contents=contents, config=config
            )
        except ModelError:
            raise
        except Exception as exc:  # noqa: BLE001 — any SDK or httpx error becomes a ModelError
            raise to_model_error(exc, api_key=self._api_key, timeout_s=self._timeout_s) from None
        embeddings = response.embeddings or []
        if len(embeddings) != len(texts):
            raise ModelError(
                "unknown", f"Gemini returned {len(embeddings)} of {len(texts)} vectors"
            )
        return [list(e.values or []) for e in embeddings]

    def _require_client(self) -> genai.Client:
        if not self._api_key:
            raise ModelError("auth", "No Gemini API key is set.")
        if self._shared is not None:
            return self._shared()
        if self._client is None:
            use_certifi_if_store_empty()
            self._client = genai.Client(api_key=self._api_key, http_options=self._http_options)
        return self._client
