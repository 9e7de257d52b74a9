"""LazyGeminiModel: the chat model every front end holds, importing google.genai (and
building the client) only on the first request, so windows appear before the SDK loads."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from koroku_desktop.agent.ports import TextDeltaCallback
from koroku_desktop.app.config import NO_KEY_HELP, ApiKey
from koroku_desktop.domain.events import MessageEvent
from koroku_desktop.domain.model_io import ModelError, ModelRequest

if TYPE_CHECKING:  # the SDK loads on the first request, not with this module
    from koroku_desktop.llm.gemini import GeminiChatModel, SdkClient


class LazyGeminiModel:
    """A `WarmableChatModel` that imports google.genai and builds the client on first use.

    With no API key it fails every request with an `auth` error that says how to set one.
    """

    def __init__(
        self,
        api_key: ApiKey | None,
        read_blob: Callable[[str], bytes] | None = None,
        uploads: Path | None = None,
    ) -> None:
        """`read_blob` reads attachments; `uploads` is the Files API upload cache's file."""
        self._api_key = api_key
        self._read_blob, self._uploads = read_blob, uploads
        self._model: GeminiChatModel | None = None
        self.on_retry: list[Callable[[int, int, str], object]] = []
        """Told `(attempt, attempts, reason)` before a rate-limited request is retried."""

    @property
    def has_key(self) -> bool:
        """True when a key is configured."""
        return self._api_key is not None

    @property
    def api_key(self) -> ApiKey | None:
        """The key in use and where it came from (None: no key configured)."""
        return self._api_key

    def set_api_key(self, api_key: ApiKey | None) -> None:
        """Use another key from the next request on."""
        self._api_key = api_key
        self._model = None

    def _real(self) -> GeminiChatModel:
        if self._api_key is None:
            raise ModelError("auth", NO_KEY_HELP)
        if self._model is None:
            from koroku_desktop.llm.gemini import GeminiChatModel
            from koroku_desktop.llm.upload_cache import UploadCache

            uploads = None if self._uploads is None else UploadCache(self._uploads)
            real = GeminiChatModel(self._api_key.value, read_blob=self._read_blob, uploads=uploads)
            real.on_retry = self.on_retry  # one list: listeners added later are told too
            self._model = real
        return self._model

    def prepare(self) -> None:
        """Import the SDK and build its validators now. Blocking: run it in a worker thread.

        Without it the first request pays for the import (a second or more) on the loop.
        """
        if self._api_key is not None:
            self._real().prepare()

    def connect(self) -> None:
        """Build the SDK client now (~0.2 s). Call it on the loop's thread, after `prepare`.

        Built in a worker thread instead, the client's construction raced the Qt thread's
        garbage collector and crashed the interpreter now and then (seen in the UI tests).
        """
        if self._api_key is not None:
            self._real().connect()

    def sdk_client(self) -> SdkClient:
        """The SDK client of the key in use, built on first use (on the loop's thread, as
        `connect`): the embedder sends through it, so a process builds one client, with one
        connection pool and one TLS set-up (each client costs ~0.1 s to build)."""
        return self._real().sdk_client()

    async def generate(
        self, request: ModelRequest, on_text_delta: TextDeltaCallback | None = None
    ) -> MessageEvent:
        """See `ChatModel.generate`."""
        return await self._real().generate(request, on_text_delta)

    async def count_tokens(self, request: ModelRequest) -> int:
        """See `ChatModel.count_tokens`."""
        return await self._real().count_tokens(request)

    async def check_connection(self, model: str) -> str:
        """One cheap request to `model`; a sentence saying it worked (raises ModelError)."""
        return await self._real().check_connection(model)
