"""FakeFiles: the Gemini Files API on the fake server, as the real google-genai SDK uses it.

`client.files.upload` speaks Google's resumable protocol: a `start` POST to
`/upload/{version}/files` (JSON metadata, `X-Goog-Upload-*` headers) answered with an
`X-Goog-Upload-URL`, then `upload` / `upload, finalize` POSTs of the bytes with their offset;
the final answer is `{"file": {...}}` with `X-Goog-Upload-Status: final`. `files.get` is
`GET /{version}/files/{id}`. Files expire (`expire`, or `ttl_s`); like the service, a
generate request naming a file URI it does not hold answers 403 PERMISSION_DENIED, and a
request body over 20 MB (inline data is base64 in the body) answers 400.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import secrets
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol
from urllib.parse import parse_qs, urlparse

from tests.fakes.gemini_replies import JsonDict, error_body

MAX_REQUEST_BYTES = 20 * 1024 * 1024
"""The service's request size limit (20,971,520 bytes)."""
_GET = re.compile(r"^/(?:v1beta|v1|v1alpha)/(files/[\w-]+)$")
_FILE_URI = re.compile(r"/(?:v1beta|v1|v1alpha)/files/[\w-]+$")
"""A Files API URI (other URIs, e.g. a public URL, are the service's to fetch: not checked)."""


class Handler(Protocol):
    """What FakeFiles needs of the server's request handler."""

    headers: Any
    path: str
    rfile: Any

    def send_json(self, status: int, body: JsonDict) -> None: ...

    def send_response(self, code: int, message: str | None = None) -> None: ...

    def send_header(self, keyword: str, value: str) -> None: ...

    def end_headers(self) -> None: ...

    @property
    def wfile(self) -> Any: ...


@dataclass
class StoredFile:
    """One uploaded file: its bytes and metadata."""

    name: str
    display_name: str | None
    mime_type: str
    data: bytes
    created: float
    expires: float
    uri: str = ""

    def resource(self) -> JsonDict:
        """The file as the REST API shows it."""
        return {
            "name": self.name,
            **({"displayName": self.display_name} if self.display_name else {}),
            "mimeType": self.mime_type,
            "sizeBytes": str(len(self.data)),
            "createTime": _rfc3339(self.created),
            "updateTime": _rfc3339(self.created),
            "expirationTime": _rfc3339(self.expires),
            "sha256Hash": base64.b64encode(hashlib.sha256(self.data).digest()).decode(),
            "uri": self.uri,
            "state": "ACTIVE",
            "source": "UPLOADED",
        }


@dataclass
class _Session:
    metadata: JsonDict
    size: int
    mime_type: str
    received: bytearray


def _rfc3339(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class FakeFiles:
    """Uploaded files, upload sessions and the checks generate requests get."""

    def __init__(self, ttl_s: float = 48 * 3600) -> None:
        self.ttl_s = ttl_s
        self.max_request_bytes = MAX_REQUEST_BYTES
        self._files: dict[str, StoredFile] = {}
        self._sessions: dict[str, _Session] = {}
        self._lock = threading.Lock()
        self.uploads = 0
        """How many uploads finished."""
        self.gets = 0
        """How many `files.get` requests were answered."""

    # -- inspection and scripting ---------------------------------------------------------

    def all(self) -> list[StoredFile]:
        """Every file held now (expired ones included until they are asked for)."""
        with self._lock:
            return list(self._files.values())

    def by_uri(self, uri: str) -> StoredFile | None:
        """The live file with this URI, or None."""
        with self._lock:
            for stored in self._files.values():
                if stored.uri == uri and stored.expires > time.time():
                    return stored
        return None

    def expire(self, name: str | None = None) -> None:
        """Let one file (by name, `files/...`) or every file expire now."""
        with self._lock:
            for stored in self._files.values():
                if name is None or stored.name == name:
                    stored.expires = time.time() - 1

    # -- serving --------------------------------------------------------------------------

    def handle_upload(self, handler: Handler, base_url: str) -> None:
        """A POST under /upload/: start a session, or take a chunk of one."""
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length) if length else b""
        query = parse_qs(urlparse(handler.path).query)
        command = (handler.headers.get("X-Goog-Upload-Command") or "").lower()
        if "upload_id" not in query:
            # Starting needs the key; the session URL it returns is the chunks' credential.
            if not handler.headers.get("x-goog-api-key"):
                message = "Method doesn't allow unregistered callers."
                handler.send_json(403, error_body(403, message))
                return
            self._start(handler, raw, command, base_url)
        else:
            self._chunk(handler, query["upload_id"][0], raw, command, base_url)

    def _start(self, handler: Handler, raw: bytes, command: str, base_url: str) -> None:
        if handler.headers.get("X-Goog-Upload-Protocol") != "resumable" or command != "start":
            handler.send_json(400, error_body(400, "Only the resumable upload protocol is faked."))
            return
        try:
            metadata = json.loads(raw or b"{}").get("file") or {}
            size = int(handler.headers.get("X-Goog-Upload-Header-Content-Length") or -1)
        except (ValueError, AttributeError):
            handler.send_json(400, error_body(400, "Invalid JSON payload received."))
            return
        mime = handler.headers.get("X-Goog-Upload-Header-Content-Type") or ""
        if size < 0 or not mime:
            handler.send_json(400, error_body(400, "Upload size and type are required."))
            return
        upload_id = secrets.token_urlsafe(16)
        with self._lock:
            self._sessions[upload_id] = _Session(metadata, size, mime, bytearray())
        version = handler.path.split("/")[2]
        url = f"{base_url}/upload/{version}/files?upload_id={upload_id}&upload_protocol=resumable"
        self._send(handler, 200, b"", {"X-Goog-Upload-URL": url, "X-Goog-Upload-Status": "active"})

    def _chunk(
        self, handler: Handler, upload_id: str, raw: bytes, command: str, base_url: str
    ) -> None:
        with self._lock:
            session = self._sessions.get(upload_id)
        if session is None:
            handler.send_json(404, error_body(404, "No such upload session."))
            return
        offset = int(handler.headers.get("X-Goog-Upload-Offset") or -1)
        if offset != len(session.received):
            handler.send_json(400, error_body(400, f"Bad upload offset {offset}."))
            return
        session.received.extend(raw)
        if "finalize" not in command:
            self._send(handler, 200, b"", {"X-Goog-Upload-Status": "active"})
            return
        if len(session.received) != session.size:
            handler.send_json(400, error_body(400, "Upload size does not match."))
            return
        file_id = secrets.token_hex(6)
        now = time.time()
        version = urlparse(handler.path).path.split("/")[2]
        stored = StoredFile(
            name=f"files/{file_id}",
            display_name=session.metadata.get("displayName")
            or session.metadata.get("display_name"),
            mime_type=session.mime_type,
            data=bytes(session.received),
            created=now,
            expires=now + self.ttl_s,
            uri=f"{base_url}/{version}/files/{file_id}",
        )
        with self._lock:
            self._files[stored.name] = stored
            del self._sessions[upload_id]
            self.uploads += 1
        body = json.dumps({"file": stored.resource()}).encode()
        self._send(handler, 200, body, {"X-Goog-Upload-Status": "final"})

    def handle_get(self, handler: Handler) -> bool:
        """`files.get`; False when the path is not a file's (the caller answers 404)."""
        match = _GET.match(urlparse(handler.path).path)
        if match is None:
            return False
        with self._lock:
            stored = self._files.get(match.group(1))
            alive = stored is not None and stored.expires > time.time()
            self.gets += 1
        if stored is None or not alive:
            handler.send_json(403, error_body(403, _no_access(match.group(1))))
        else:
            handler.send_json(200, stored.resource())
        return True

    def check_request(self, body: JsonDict, size: int) -> str | None:
        """The service's answer to a generate request over the size limit or naming a file it
        does not hold: (status, message) folded into one message, or None when fine."""
        if size > self.max_request_bytes:
            return f"Request payload size exceeds the limit: {self.max_request_bytes} bytes."
        for content in body.get("contents") or []:
            for part in content.get("parts") or []:
                file_data = part.get("fileData") or part.get("file_data")
                if isinstance(file_data, dict):
                    uri = str(file_data.get("fileUri") or file_data.get("file_uri") or "")
                    if _FILE_URI.search(uri) and self.by_uri(uri) is None:
                        return _no_access(uri.rsplit("/", 1)[-1])
        return None

    @staticmethod
    def _send(handler: Handler, status: int, body: bytes, headers: dict[str, str]) -> None:
        handler.send_response(status)
        for key, value in headers.items():
            handler.send_header(key, value)
        handler.send_header("Content-Type", "application/json; charset=UTF-8")
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)
        handler.wfile.flush()


def _no_access(file_id: str) -> str:
    file_id = file_id.removeprefix("files/")
    return f"You do not have permission to access the File {file_id} or it may not exist."


def no_access_status(message: str) -> int:
    """The HTTP status the service uses for `check_request`'s message (403 or 400)."""
    return 403 if message.startswith("You do not have permission") else 400
