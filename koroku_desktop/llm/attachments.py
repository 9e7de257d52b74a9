"""Sending attachments: inline bytes while they fit in a request, the Files API beyond.

Gemini refuses a request over 20 MB (HTTP 400, "Request payload size exceeds the limit"),
and inline bytes travel as base64 (4/3 of their size) beside the text of the whole history.
So attachments go inline, oldest first, while their bytes add up to `INLINE_BUDGET_BYTES`
(14 MB: 18.7 MB as base64, leaving more than 1 MB for the conversation's text); the rest are
uploaded with `client.files.upload` (the SDK's resumable protocol) and sent as `file_data`.
An attached MCP resource (`part.uri`) of a text type goes as a text part headed by its URI;
one of a binary type Gemini does not read is named in a text part, never sent.
A file over `INLINE_FILE_BYTES` (2 MB) is uploaded even when it would fit: an attachment
stays in the history, so inline it is encoded and sent again with every later turn
(benchmarks/bench_attachments.py: a 10 MB file inline makes each turn about 20 times a plain
one, while an upload costs once and a reused URI almost nothing).
Oldest first keeps every earlier attachment's form from turn to turn, so the history prefix
stays byte-stable for Gemini's implicit cache.

Uploaded files expire (48 hours); the `UploadCache` keeps their URIs, a file close to expiry
is uploaded again from Koroku's own copy, and when the service says a file is gone anyway
(`is_gone_error`), the request is built again with fresh uploads. A blob missing from this
device fails the turn that attaches it with a clear error; in older turns it is replaced by a
note in the request (the log stays as it is), so one lost file never blocks the conversation.
"""

from __future__ import annotations

import asyncio
import io
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import KW_ONLY, dataclass, field

from google import genai
from google.genai import errors, types

from koroku_desktop.domain.events import MessageEvent
from koroku_desktop.domain.media import GEMINI_INLINE, base_type, is_text_type
from koroku_desktop.domain.model_io import ModelError
from koroku_desktop.domain.parts import AttachmentPart
from koroku_desktop.llm.mapping import content_to_sdk
from koroku_desktop.llm.upload_cache import UploadCache, UploadedFile
from koroku_desktop.may_block import may_block

log = logging.getLogger(__name__)

INLINE_BUDGET_BYTES = 14_000_000
"""Raw attachment bytes sent inline in one request (see the module docstring)."""
INLINE_FILE_BYTES = 2_000_000
"""The largest single file sent inline; bigger ones are uploaded once and referenced."""
REUSE_MARGIN_S = 15 * 60
"""An uploaded file expiring sooner than this is uploaded again (a turn may take minutes)."""
ACTIVE_WAIT_S = 120.0
"""How long an upload may stay PROCESSING before the turn gives up."""
FILE_TTL_S = 48 * 3600
"""The Files API's lifetime of an upload, assumed when the service gives no expiry."""

BlobReader = Callable[[str], bytes]
"""Reads a blob by SHA-256; raises a `LookupError` (the store's `MissingBlob`) when absent."""


def missing_note(part: AttachmentPart) -> types.Part:
    """What the model is told in place of an attachment whose copy is gone."""
    return types.Part(
        text=f"[Koroku: the attached file {part.name or part.sha256[:12]!r} ({part.mime_type}) "
        "is no longer available on this device.]"
    )


@dataclass(eq=False)
class AttachmentSender:
    """Resolves the attachments of a request into inline data or uploaded files."""

    read_blob: BlobReader
    cache: UploadCache | None
    _: KW_ONLY
    inline_budget: int = INLINE_BUDGET_BYTES
    inline_file_max: int = INLINE_FILE_BYTES
    clock: Callable[[], float] = time.time
    sent_uris: set[str] = field(init=False, default_factory=set)
    """The file URIs the last resolved request used (to forget them if they are gone)."""

    def _read(self, sha256: str) -> asyncio.Future[bytes]:
        """The blob's bytes, `may_block`: a blob made on another device is fetched from the
        sync hub (the network) on first need, so never on `koroku ask`'s loop thread."""
        return may_block(self.read_blob, sha256)

    async def resolve(
        self,
        client: genai.Client,
        key: str,
        contents: Sequence[MessageEvent],
        *,
        fresh: bool = False,
    ) -> dict[str, types.Part]:
        """The SDK part for every attachment in `contents`, by SHA-256.

        `fresh`: ignore recorded uploads (the service said one was gone). Raises `ModelError`
        when an attachment of the last user message is missing or cannot be uploaded.
        """
        attachments = _attachments(contents)
        current = _last_user_attachments(contents)
        resolved: dict[str, types.Part] = {}
        self.sent_uris = set()
        inline_used = 0
        for part in attachments:
            if part.sha256 in resolved:
                continue
            inline = (
                part.size <= self.inline_file_max and inline_used + part.size <= self.inline_budget
            )
            try:
                if part.uri is not None:  # an MCP resource: text as text, others by type
                    as_is = await self._resource(part)
                    if as_is is not None:
                        resolved[part.sha256] = as_is
                        continue
                    if is_text_type(part.mime_type):  # too long for a text part: a file
                        part = part.model_copy(update={"mime_type": "text/plain"})
                if inline:
                    data = await self._read(part.sha256)
                    resolved[part.sha256] = types.Part(
                        inline_data=types.Blob(mime_type=part.mime_type, data=data)
                    )
                    inline_used += part.size
                else:
                    upload = await self._uploaded(client, key, part, fresh)
                    self.sent_uris.add(upload.uri)
                    resolved[part.sha256] = types.Part(
                        file_data=types.FileData(mime_type=part.mime_type, file_uri=upload.uri)
                    )
            except LookupError:
                if part.sha256 in current:
                    raise ModelError(
                        "bad_request",
                        f"The attached file {part.name!r} is missing from Koroku's copy "
                        f"(blob {part.sha256[:12]}…), so it cannot be sent. Attach it again.",
                    ) from None
                log.warning("attachment %s (%s) is missing: sent as a note", part.name, part.sha256)
                resolved[part.sha256] = missing_note(part)
        return resolved

    async def _resource(self, part: AttachmentPart) -> types.Part | None:
        """An attached MCP resource as a text part (text types, while short enough), or a
        note naming it (a binary type Gemini does not read); None: send its bytes."""
        head = f"[MCP resource {part.uri} of server {part.server!r}, {part.mime_type}]"
        if is_text_type(part.mime_type) and part.size <= self.inline_file_max:
            data = await self._read(part.sha256)
            return types.Part(text=f"{head}\n{data.decode('utf-8', 'replace')}")
        if not is_text_type(part.mime_type) and base_type(part.mime_type) not in GEMINI_INLINE:
            return types.Part(
                text=f"{head}: {part.size:,} bytes of a type the model cannot read; not sent."
            )
        return None

    async def _uploaded(
        self, client: genai.Client, key: str, part: AttachmentPart, fresh: bool
    ) -> UploadedFile:
        now = self.clock()
        if self.cache is not None and not fresh:
            known = await asyncio.to_thread(self.cache.get, part.sha256, key)
            if known is not None and known.expires_at - now > REUSE_MARGIN_S:
                return known
        data = await self._read(part.sha256)
        try:
            file = await client.aio.files.upload(
                file=io.BytesIO(data),
                config=types.UploadFileConfig(
                    mime_type=part.mime_type, display_name=part.name or None
                ),
            )
            file = await _wait_active(client, file)
        except ModelError:
            raise
        except Exception as exc:  # noqa: BLE001 — any SDK or httpx error becomes a ModelError
            raise ModelError(
                "unavailable",
                f"Uploading {part.name!r} to Gemini's Files API failed: {_why(exc)}",
                getattr(exc, "code", None),
            ) from None
        expiry = file.expiration_time.timestamp() if file.expiration_time else now + FILE_TTL_S
        upload = UploadedFile(
            name=file.name or "",
            uri=file.uri or "",
            mime_type=file.mime_type or part.mime_type,
            expires_at=expiry,
        )
        if self.cache is not None:
            await asyncio.to_thread(self.cache.put, part.sha256, key, upload, now)
        return upload

    def is_gone_error(self, exc: BaseException) -> bool:
        """Whether a failed request says a file it referenced is gone (expired, deleted)."""
        if not self.sent_uris or not isinstance(exc, errors.APIError):
            return False
        if exc.code not in (400, 403, 404):
            return False
        text = str(exc)
        names = {uri.rsplit("/", 2)[-1] for uri in self.sent_uris}
        return any(name in text for name in names) or "file" in text.lower()

    async def forget_sent(self) -> None:
        """Forget the uploads the last request used, so the next one uploads them again."""
        if self.cache is not None and self.sent_uris:
            await asyncio.to_thread(self.cache.forget, set(self.sent_uris))


async def _wait_active(client: genai.Client, file: types.File) -> types.File:
    """Poll `files.get` while the service is still processing an upload."""
    deadline = time.monotonic() + ACTIVE_WAIT_S
    delay = 0.2
    while file.state == types.FileState.PROCESSING and file.name:
        if time.monotonic() > deadline:
            raise ModelError("unavailable", f"Gemini is still processing {file.display_name!r}.")
        await asyncio.sleep(delay)
        delay = min(2.0, delay * 2)
        file = await client.aio.files.get(name=file.name)
    if file.state == types.FileState.FAILED:
        detail = file.error.message if file.error is not None else "no reason given"
        raise ModelError("bad_request", f"Gemini could not process the upload: {detail}")
    return file


def _why(exc: BaseException) -> str:
    message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    return str(message)


async def sdk_contents(
    sender: AttachmentSender | None,
    client: genai.Client,
    key: str,
    messages: Sequence[MessageEvent],
    fresh_uploads: bool = False,
) -> list[types.Content]:
    """Messages as SDK contents, their attachments resolved by `sender` (None: no blob store
    is wired, and the model is told the files are not available)."""
    if not any(isinstance(p, AttachmentPart) for m in messages for p in m.parts):
        return [content_to_sdk(m) for m in messages]
    if sender is None:
        return [content_to_sdk(m, missing_note) for m in messages]
    resolved = await sender.resolve(client, key, messages, fresh=fresh_uploads)
    return [content_to_sdk(m, lambda a: resolved[a.sha256]) for m in messages]


def _attachments(contents: Sequence[MessageEvent]) -> list[AttachmentPart]:
    return [p for m in contents for p in m.parts if isinstance(p, AttachmentPart)]


def _last_user_attachments(contents: Sequence[MessageEvent]) -> set[str]:
    """The attachments of the newest person's message (the turn being sent)."""
    for message in reversed(contents):
        if message.role == "user" and message.origin == "person":
            return {p.sha256 for p in message.parts if isinstance(p, AttachmentPart)}
    return set()
