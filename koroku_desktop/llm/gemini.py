"""GeminiChatModel: the `ChatModel` port over the google-genai SDK.

Streams each reply, hands visible text to the caller as it arrives, and returns one aggregated
model content that keeps every part and thought signature exactly as the service sent it. The
endpoint is the SDK's own (it honours `GOOGLE_GEMINI_BASE_URL`) unless `base_url` is given.
Retries with backoff and a timeout are set on the client, since the SDK has neither by default.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
import logging
import time
from collections.abc import AsyncIterator, Callable

import pydantic
from google import genai
from google.genai import types

from koroku_desktop.domain.events import MessageEvent
from koroku_desktop.domain.model_io import ModelError, ModelRequest
from koroku_desktop.domain.parts import Part
from koroku_desktop.domain.projection import is_usable_reply
from koroku_desktop.llm.attachments import (
    INLINE_BUDGET_BYTES,
    AttachmentSender,
    BlobReader,
    sdk_contents,
)
from koroku_desktop.llm.certs import use_certifi_if_store_empty
from koroku_desktop.llm.errors import retry_delay_s, to_model_error
from koroku_desktop.llm.grounding import combination_refused, grounding_from_sdk, web_tools_to_sdk
from koroku_desktop.llm.mapping import tools_to_sdk
from koroku_desktop.llm.stream import StreamSummary, append_part, visible_text
from koroku_desktop.llm.upload_cache import UploadCache, key_fingerprint

log = logging.getLogger(__name__)

DEFAULT_CHECK_MODEL = "gemini-3-flash-preview"
RETRY_STATUS_CODES = (408, 500, 502, 503, 504)
"""Retried by the SDK. A 429 is retried here instead, honouring the service's RetryInfo."""
QUOTA_RETRY_ATTEMPTS = 4
SdkClient = genai.Client
"""The SDK's client, as the composition root names it (only llm imports google.genai)."""


_FIRST_REQUEST_IMPORTS = (
    "anyio._backends._asyncio",
    "anyio._core._sockets",
    "anyio.streams.memory",
    "anyio.streams.stapled",
    "pydantic._internal._dataclasses",
)
"""Modules the SDK's async transport imports on its first request (~35 ms on the loop)."""


class GeminiChatModel:
    """A `ChatModel` backed by Gemini through google-genai, with retries and a timeout."""

    def __init__(
        self,
        api_key: str,
        *,
        timeout_s: float = 120,
        retry_attempts: int = 4,
        base_url: str | None = None,
        retry_initial_delay_s: float = 1.0,
        retry_max_delay_s: float = 30.0,
        read_blob: BlobReader | None = None,
        uploads: UploadCache | None = None,
        inline_budget: int = INLINE_BUDGET_BYTES,
    ) -> None:
        """`retry_attempts` counts every attempt, the first included (the SDK's `attempts`).

        `read_blob` reads attachments from the blob store; `uploads` records Files API uploads.
        """
        self._api_key = api_key.strip()
        self._timeout_s = timeout_s
        self._retry_attempts = max(1, retry_attempts)
        self.on_retry: list[Callable[[int, int, str], object]] = []
        """Told `(attempt, attempts, reason)` before a rate-limited request is tried again."""
        self._retry_initial_delay_s = retry_initial_delay_s
        retry = types.HttpRetryOptions(
            attempts=max(1, retry_attempts),
            initial_delay=retry_initial_delay_s,
            max_delay=retry_max_delay_s,
            exp_base=2,
            jitter=min(1.0, retry_initial_delay_s),
            http_status_codes=list(RETRY_STATUS_CODES),
        )
        self._http_options = types.HttpOptions(
            timeout=int(timeout_s * 1000), retry_options=retry, base_url=base_url
        )
        self._client: genai.Client | None = None
        self.attachments = (
            None
            if read_blob is None
            else AttachmentSender(read_blob, uploads, inline_budget=inline_budget)
        )

    # -- the ChatModel port ---------------------------------------------------------------

    async def generate(
        self, request: ModelRequest, on_text_delta: Callable[[str], None] | None = None
    ) -> MessageEvent:
        """Stream one reply; call `on_text_delta` for visible text; return the final content.

        Raises `ModelError` on failure.
        """
        started = time.monotonic()
        stream, first = await self._open_stream(request, started)
        parts: list[Part] = []
        summary = StreamSummary()
        try:
            while True:
                if first is not None:
                    chunk, first = first, None
                else:
                    try:
                        chunk = await anext(stream)
                    except StopAsyncIteration:
                        break
                    except Exception as exc:  # noqa: BLE001 — any SDK or httpx error becomes a ModelError
                        raise self._error(exc) from None
                for part in summary.observe(chunk):
                    text = visible_text(part)
                    if text and on_text_delta is not None:
                        on_text_delta(text)
                    append_part(parts, part)
                # Chunks that arrive in a burst are all ready at once; yield between them so
                # the caller's event loop (the UI) keeps painting while a long answer streams.
                await asyncio.sleep(0)
        finally:
            await _close(stream)
        if not parts or not is_usable_reply(MessageEvent(role="model", parts=parts)):
            # Only empty text: nothing to show, and sent back it would poison every request.
            raise summary.empty_reply_error()
        usage = summary.usage(request.model, (time.monotonic() - started) * 1000)
        return MessageEvent(
            role="model",
            origin="model",
            parts=parts,
            usage=usage,
            finish_reason=summary.finish_reason,
            grounding=grounding_from_sdk(summary.grounding, summary.url_context),
        )

    async def _open_stream(
        self, request: ModelRequest, started: float
    ) -> tuple[AsyncIterator[types.GenerateContentResponse], types.GenerateContentResponse | None]:
        """Start the stream and read its first chunk (None: an empty stream).

        A 429 is retried after the delay the service asks for.

        The SDK's own retries ignore the `RetryInfo` of a 429; here the delay is honoured
        as long as it ends within the request's timeout (else the 429 is reported at once).
        """
        attempt = 0
        fresh_uploads = False
        while True:
            attempt += 1
            stream: AsyncIterator[types.GenerateContentResponse] | None = None
            try:
                client = self._require_client()
                contents = await self._sdk_contents(client, request, fresh_uploads)
                stream = await client.aio.models.generate_content_stream(
                    model=request.model, contents=contents, config=self._config(request)
                )
                try:
                    return stream, await anext(stream)
                except StopAsyncIteration:
                    return stream, None
            except Exception as exc:  # noqa: BLE001 — any SDK or httpx error becomes a ModelError
                if stream is not None:
                    await _close(stream)
                sender = self.attachments
                if not fresh_uploads and sender is not None and sender.is_gone_error(exc):
                    log.warning("an uploaded attachment is gone; uploading again: %s", exc)
                    await sender.forget_sent()
                    fresh_uploads = True
                    continue
                error = self._error(exc)
                if request.tools:
                    error = combination_refused(error, request.model, request.web_tools)
                if error.kind != "quota" or attempt >= max(self._retry_attempts, 1):
                    raise error from None
                asked = retry_delay_s(exc)
                delay = (
                    asked if asked is not None else self._retry_initial_delay_s * 2 ** (attempt - 1)
                )
                left = self._timeout_s - (time.monotonic() - started)
                if delay > left:
                    if asked is not None:
                        error = ModelError(
                            "quota",
                            f"{error.message} Gemini asks to wait {asked:g} s before retrying.",
                            error.status,
                        )
                    raise error from None
                for listener in list(self.on_retry):
                    listener(attempt + 1, self._retry_attempts, error.message)
                await asyncio.sleep(delay)

    async def count_tokens(self, request: ModelRequest) -> int:
        """The prompt size of `request` in tokens (system instruction and tools included).

        The Gemini API's countTokens takes contents only, so the system instruction and the
        tool declarations are counted as a leading user text.
        """
        try:
            contents = await self._sdk_contents(self._require_client(), request)
        except Exception as exc:  # noqa: BLE001 — any SDK or httpx error becomes a ModelError
            raise self._error(exc) from None
        preamble = _preamble(request)
        if preamble:
            contents.insert(0, types.Content(role="user", parts=[types.Part(text=preamble)]))
        if not contents:
            return 0
        try:
            response = await self._require_client().aio.models.count_tokens(
                model=request.model, contents=contents
            )
        except Exception as exc:  # noqa: BLE001 — any SDK or httpx error becomes a ModelError
            raise self._error(exc) from None
        return int(response.total_tokens or 0)

    async def check_connection(self, model: str = DEFAULT_CHECK_MODEL) -> str:
        """One cheap request (countTokens on "ping"); a sentence saying it works, or ModelError."""
        try:
            response = await self._require_client().aio.models.count_tokens(
                model=model, contents="ping"
            )
        except Exception as exc:  # noqa: BLE001 — any SDK or httpx error becomes a ModelError
            raise self._error(exc) from None
        tokens = response.total_tokens
        return f"Connected to Gemini: the API key works and {model} answered ({tokens} tokens)."

    async def aclose(self) -> None:
        """Close the SDK's HTTP connections."""
        if self._client is not None:
            await self._client.aio.aclose()

    # -- helpers --------------------------------------------------------------------------

    async def _sdk_contents(
        self, client: genai.Client, request: ModelRequest, fresh_uploads: bool = False
    ) -> list[types.Content]:
        """The request's contents for the SDK, attachments read and sent inline or uploaded."""
        key = key_fingerprint(self._api_key)
        return await sdk_contents(self.attachments, client, key, request.contents, fresh_uploads)

    def prepare(self) -> None:
        """Build the SDK's lazily built validators now (blocking: call it off the loop).

        Done on the first request instead, this would stall the caller's event loop.
        """
        for name in _FIRST_REQUEST_IMPORTS:
            with contextlib.suppress(ImportError):
                importlib.import_module(name)
        for value in list(vars(types).values()):
            validator = getattr(value, "__pydantic_validator__", None)
            if (
                isinstance(value, type)
                and issubclass(value, pydantic.BaseModel)
                and type(validator).__name__ == "MockValSer"
            ):
                with contextlib.suppress(Exception):
                    value.model_rebuild()

    def connect(self) -> None:
        """Build the SDK client (TLS contexts, HTTP clients) now rather than on first use."""
        self._require_client()

    def sdk_client(self) -> SdkClient:
        """The SDK client (built on first use), for another adapter to send through: the
        embedder shares it, with its own timeout and retries on each request."""
        return self._require_client()

    def _require_client(self) -> genai.Client:
        if not self._api_key:
            raise ModelError(
                "auth", "No Gemini API key is set. Add one in Settings or set GEMINI_API_KEY."
            )
        if self._client is None:
            use_certifi_if_store_empty()
            self._client = genai.Client(api_key=self._api_key, http_options=self._http_options)
        return self._client

    def _config(self, request: ModelRequest) -> types.GenerateContentConfig:
        tools = [*(tools_to_sdk(request.tools) or []), *web_tools_to_sdk(request.web_tools)]
        # Built-in and function tools together: the server-side calls come back as parts
        # (kept verbatim and resent), as the tool-combination API asks.
        combined = bool(request.tools) and bool(request.web_tools)
        return types.GenerateContentConfig(
            system_instruction=request.system_instruction or None,
            tools=tools or None,
            tool_config=(
                types.ToolConfig(include_server_side_tool_invocations=True) if combined else None
            ),
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
            thinking_config=types.ThinkingConfig(
                include_thoughts=True,
                thinking_level=_thinking_level(request.thinking_level),
            ),
        )

    def _error(self, exc: BaseException) -> ModelError:
        return to_model_error(exc, api_key=self._api_key, timeout_s=self._timeout_s)


def _thinking_level(level: str) -> types.ThinkingLevel | None:
    """The SDK's thinking level for a setting ("" or an unknown name: the model's default)."""
    try:
        return types.ThinkingLevel(level.upper()) if level else None
    except ValueError:
        return None


def _preamble(request: ModelRequest) -> str:
    """The system instruction and tool declarations as text, for counting tokens."""
    pieces = [request.system_instruction] if request.system_instruction else []
    if request.tools:
        declarations = [
            {"name": t.name, "description": t.description, "parameters": t.parameters}
            for t in request.tools
        ]
        pieces.append(json.dumps(declarations, ensure_ascii=False))
    return "\n\n".join(pieces)


async def _close(stream: AsyncIterator[types.GenerateContentResponse]) -> None:
    """Close the SDK's stream generator so the connection is released."""
    aclose = getattr(stream, "aclose", None)
    if aclose is not None:
        # If the stream already failed, that error is the one to report.
        with contextlib.suppress(Exception):
            await aclose()
