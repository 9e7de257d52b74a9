"""FakeGemini: a real HTTP server on 127.0.0.1 that speaks Gemini's REST API to the real SDK.

Point the SDK at it with `GOOGLE_GEMINI_BASE_URL` (or `HttpOptions.base_url`), script replies
in order (`reply_text`, `reply_calls`, `fail`, `delay`, `drop_connection`, `reply_with`), and
inspect `requests`. It is as strict as the service: thought signatures it issued must come back
byte-identical, and function responses must directly follow and match their calls (400
INVALID_ARGUMENT otherwise). A bad API key ("bad-key") gets the service's API_KEY_INVALID 400.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import socket
import sys
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

from tests.fakes.gemini_embeddings import EmbedFn, batch_embed_response
from tests.fakes.gemini_files import FakeFiles, no_access_status
from tests.fakes.gemini_replies import (
    BlockedReply,
    CallsReply,
    ContentReply,
    DelayStep,
    DropReply,
    EchoReply,
    ErrorReply,
    JsonDict,
    PartsReply,
    ReceivedRequest,
    Reply,
    ReplyFn,
    Step,
    TextReply,
    blocked_body,
    cache_pieces,
    cached_prefix_tokens,
    error_body,
    estimate_tokens,
    prompt_tokens,
    render,
    response_body,
    retry_info,
)
from tests.fakes.gemini_rules import check_contents, check_size, check_tools

BAD_KEY = "bad-key"
_GENERATE = ("generateContent", "streamGenerateContent")
_METHODS = ("generateContent", "streamGenerateContent", "countTokens", "batchEmbedContents")
_BAD_KEY_DETAILS: list[JsonDict] = [
    {
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        "reason": "API_KEY_INVALID",
        "domain": "googleapis.com",
        "metadata": {"service": "generativelanguage.googleapis.com"},
    }
]


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    fake: FakeGemini

    def handle_error(self, request: object, client_address: object) -> None:
        """A client that went away (a cancelled turn, a cut the fake made itself) is no error
        of the fake's: only real failures print their traceback."""
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)  # type: ignore[arg-type]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    """TCP_NODELAY, as real front ends set it: without it a reply written as headers, then
    body, on a kept-alive connection waited for the client's delayed ACK (~40 ms: the
    embedding request after a turn, in `koroku ask`)."""
    server: _Server

    def setup(self) -> None:
        super().setup()
        self.server.fake._track(self.connection, add=True)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.fake._track(self.connection, add=False)

    def log_message(self, format: str, *args: Any) -> None:
        """Keep test output quiet."""

    def do_POST(self) -> None:
        if self.path.startswith("/upload/"):
            self.server.fake.files.handle_upload(self, self.server.fake.base_url)
            return
        self.server.fake._handle(self)

    def do_GET(self) -> None:
        if not self.server.fake.files.handle_get(self):
            self.send_json(404, error_body(404, f"Method not found: {self.path}"))

    def send_json(self, status: int, body: JsonDict) -> None:
        data = json.dumps(body).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=UTF-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def start_stream(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def send_event(self, body: JsonDict) -> None:
        data = f"data: {json.dumps(body)}\r\n\r\n".encode()
        self.wfile.write(f"{len(data):X}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def end_stream(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def drop(self) -> None:
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)


class FakeGemini:
    """A scripted, strict stand-in for the Gemini REST API on an ephemeral local port."""

    def __init__(self, default_text: str = "ok") -> None:
        self.default_text = default_text
        self.max_input_tokens: int | None = None
        """Like a model's input limit: a bigger generate request gets the service's 400."""
        self.requests: list[ReceivedRequest] = []
        self.files = FakeFiles()
        """The Files API (uploads, `files.get`, expiry)."""
        self._steps: deque[Step] = deque()
        self._fallback: Reply | ReplyFn | None = None
        self._issued: dict[str, bytes | None] = {}
        self.embedding_outage: int | None = None
        """While set: every embedding request fails with this HTTP status (0: dropped)."""
        self.embedder: EmbedFn | None = None
        """When set: computes the vectors (texts, dimensions, model) instead of the built-in
        synonym hashing, e.g. a real small model for a retrieval benchmark."""
        self.wrong_dimensions: int | None = None
        """When set: vectors come back with this many values, whatever was asked for."""
        self._cache_pieces: list[str] = []
        """The previous generate request's prompt, for the implicit-cache usage figure."""
        self._lock = threading.Lock()
        self._conns: set[socket.socket] = set()
        self._stopping = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ------------------------------------------------------------------------

    def start(self) -> FakeGemini:
        """Bind 127.0.0.1 on a free port and serve in a daemon thread."""
        server = _Server(("127.0.0.1", 0), _Handler)
        server.fake = self
        self._server = server
        self._stopping.clear()
        self._thread = threading.Thread(
            target=server.serve_forever, name="fake-gemini", kwargs={"poll_interval": 0.05}
        )
        self._thread.daemon = True
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and cut every open connection (the port then refuses connections)."""
        server, self._server = self._server, None
        if server is None:
            return
        self._stopping.set()
        server.shutdown()
        with self._lock:
            conns = list(self._conns)
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeGemini:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The bound port."""
        if self._server is None:
            raise RuntimeError("FakeGemini is not running")
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        """What to put in `GOOGLE_GEMINI_BASE_URL`."""
        return f"http://127.0.0.1:{self.port}"

    def reset(self) -> None:
        """Forget requests, scripted steps, the fallback and issued signatures."""
        with self._lock:
            self.requests.clear()
            self._steps.clear()
            self._fallback = None
            self._issued.clear()

    def reset_all(self, default_text: str = "ok") -> FakeGemini:
        """Back to a freshly started server, on the same port (between tests of a session).

        Beyond `reset`: pending delays end as dropped connections, open connections are cut
        (a client of the previous test cannot leak into the next), and the files, limits,
        outage, embedder and implicit-cache memory are forgotten.
        """
        stopping, self._stopping = self._stopping, threading.Event()
        stopping.set()
        with self._lock:
            conns = list(self._conns)
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        self.reset()
        with self._lock:
            self.default_text = default_text
            self.max_input_tokens = None
            self.embedding_outage = None
            self.embedder = None
            self.files = FakeFiles()
            self._cache_pieces = []
        return self

    # -- scripting ------------------------------------------------------------------------

    def script(self, *steps: Step) -> FakeGemini:
        """Queue raw steps (replies, delays or callables of the request)."""
        with self._lock:
            self._steps.extend(steps)
        return self

    def reply_text(self, text: str, *, thought: str | None = None, chunks: int = 3) -> FakeGemini:
        """Next generate request: a text answer (a thought part first if `thought`)."""
        return self.script(TextReply(text, thought, chunks))

    def reply_calls(
        self, *calls: tuple[str, JsonDict], thought: str | None = None, text: str | None = None
    ) -> FakeGemini:
        """Next generate request: one step of function calls (parallel when several)."""
        return self.script(CallsReply(tuple(calls), thought, text))

    def reply_parts(self, *parts: JsonDict) -> FakeGemini:
        """Next generate request: these service-JSON parts verbatim."""
        return self.script(PartsReply(tuple(parts)))

    def reply_echo(self, index: int = -1) -> FakeGemini:
        """Next generate request: the parts of the request's `contents[index]`, sent back."""
        return self.script(EchoReply(index))

    def reply_with(self, fn: ReplyFn, times: int = 1) -> FakeGemini:
        """Next `times` generate requests: whatever `fn(request)` returns."""
        return self.script(*([fn] * times))

    def endless_calls(self, name: str, args: JsonDict) -> FakeGemini:
        """Once the script runs out, every request that offers tools gets this function call."""
        calls = CallsReply(((name, dict(args)),))

        def call_again(request: ReceivedRequest) -> Reply:
            # Like the real model: with no tools declared it cannot call one, so it answers.
            if request.has_tools:
                return calls
            return TextReply("I stopped calling tools. Here is what I did so far.")

        with self._lock:
            self._fallback = call_again
        return self

    def set_fallback(self, reply: Reply | ReplyFn | None) -> FakeGemini:
        """What to answer once the script runs out (None: the default text)."""
        with self._lock:
            self._fallback = reply
        return self

    def fail(
        self,
        status: int = 503,
        times: int = 1,
        message: str | None = None,
        *,
        retry_delay: str | None = None,
    ) -> FakeGemini:
        """Next `times` requests of any kind: an HTTP error with Gemini's error JSON.

        `retry_delay` (e.g. `"15s"`) adds the `RetryInfo` detail a real 429 carries.
        """
        details = (retry_info(retry_delay),) if retry_delay else ()
        return self.script(*([ErrorReply(status, message, details)] * times))

    def block(self, reason: str = "PROHIBITED_CONTENT", message: str | None = None) -> FakeGemini:
        """Next generate request: the prompt is blocked (`promptFeedback`, no candidates)."""
        return self.script(BlockedReply(reason, message))

    def delay(self, seconds: float) -> FakeGemini:
        """Wait `seconds` before answering the next request."""
        return self.script(DelayStep(seconds))

    def drop_connection(self, *, mid_stream: bool = False) -> FakeGemini:
        """Next request: close the connection without an answer (or after one stream event)."""
        return self.script(DropReply(mid_stream))

    @property
    def pending(self) -> int:
        """How many scripted steps are left."""
        with self._lock:
            return len(self._steps)

    def generate_requests(self) -> list[ReceivedRequest]:
        """The received generateContent / streamGenerateContent requests."""
        with self._lock:
            return [r for r in self.requests if r.method in _GENERATE]

    # -- serving --------------------------------------------------------------------------

    def _track(self, conn: socket.socket, *, add: bool) -> None:
        with self._lock:
            if add:
                self._conns.add(conn)
            else:
                self._conns.discard(conn)

    def _next_step(self, request: ReceivedRequest, is_generate: bool) -> Reply | None:
        """The scripted step for this request: errors/drops/delays apply to any request."""
        while True:
            with self._lock:
                head = self._steps[0] if self._steps else None
                if isinstance(head, DelayStep | ErrorReply | DropReply):
                    self._steps.popleft()
                elif head is not None and is_generate:
                    return None  # a content reply: taken after validation
                else:
                    head = None
            if isinstance(head, DelayStep):
                if self._stopping.wait(head.seconds):
                    return DropReply()
                continue
            return head

    def _content_reply(self, request: ReceivedRequest) -> Reply:
        with self._lock:
            step = self._steps.popleft() if self._steps else self._fallback
        if step is None:
            return TextReply(self.default_text)
        if callable(step):
            return step(request)
        if isinstance(step, DelayStep):  # pragma: no cover - consumed in _next_step
            return TextReply(self.default_text)
        return step

    def _handle(self, handler: _Handler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            handler.send_json(400, error_body(400, "Invalid JSON payload received."))
            return
        request = ReceivedRequest(handler.path, body, time.monotonic())
        if request.method not in _METHODS:
            handler.send_json(404, error_body(404, f"Method not found: {handler.path}"))
            return
        with self._lock:
            self.requests.append(request)
        key = handler.headers.get("x-goog-api-key")
        if not key:
            message = "Method doesn't allow unregistered callers. Please use an API Key."
            handler.send_json(403, error_body(403, message))
            return
        if key == BAD_KEY:
            message = "API key not valid. Please pass a valid API key."
            handler.send_json(400, error_body(400, message, _BAD_KEY_DETAILS))
            return
        if request.method == "batchEmbedContents":
            self._answer_embeddings(handler, request)
            return
        is_generate = request.method != "countTokens"
        step = self._next_step(request, is_generate)
        if self._answer_failure(handler, step, request):
            return
        file_problem = self.files.check_request(body, length)
        if file_problem:
            status = no_access_status(file_problem)
            handler.send_json(status, error_body(status, file_problem))
            return
        if not is_generate:
            handler.send_json(200, {"totalTokens": prompt_tokens(body)})
            return
        with self._lock:
            problem = check_contents(request.body, self._issued) or check_tools(request)
            problem = problem or check_size(prompt_tokens(body), self.max_input_tokens)
        if problem:
            handler.send_json(400, error_body(400, problem))
            return
        reply = self._content_reply(request)
        if self._answer_failure(handler, reply, request):
            return
        assert not isinstance(reply, ErrorReply | DropReply)
        self._send_content(handler, request, reply, mid_drop=isinstance(step, DropReply))

    def embed_requests(self) -> list[ReceivedRequest]:
        """The received `:batchEmbedContents` requests."""
        with self._lock:
            return [r for r in self.requests if r.method == "batchEmbedContents"]

    def _answer_embeddings(self, handler: _Handler, request: ReceivedRequest) -> None:
        outage = self.embedding_outage
        if outage == 0:
            handler.drop()
        elif outage is not None:
            handler.send_json(outage, error_body(outage, "The embedding service is down."))
        else:
            body = batch_embed_response(request.body, request.model, self.embedder)
            if self.wrong_dimensions is not None:
                for item in body["embeddings"]:
                    item["values"] = (item["values"] * self.wrong_dimensions)[
                        : self.wrong_dimensions
                    ]
            handler.send_json(200, body)

    @staticmethod
    def _answer_failure(handler: _Handler, step: Reply | None, request: ReceivedRequest) -> bool:
        """Answer an error or drop step; a mid-stream drop of a stream is left to the stream."""
        if isinstance(step, ErrorReply):
            details = list(step.details) or None
            handler.send_json(step.status, error_body(step.status, step.message, details))
            return True
        if isinstance(step, DropReply):
            if step.mid_stream and request.method == "streamGenerateContent":
                return False
            handler.drop()
            return True
        return False

    def _send_content(
        self,
        handler: _Handler,
        request: ReceivedRequest,
        reply: ContentReply,
        *,
        mid_drop: bool,
    ) -> None:
        stream = request.method == "streamGenerateContent"
        if isinstance(reply, BlockedReply):
            body = blocked_body(reply, request)
            if not stream:
                handler.send_json(200, body)
                return
            handler.start_stream()
            handler.send_event(body)
            handler.end_stream()
            return
        rendered = render(reply, request, stream)
        pieces = cache_pieces(request.body)
        with self._lock:
            self._issued.update(rendered.signed_calls)
            cached = cached_prefix_tokens(self._cache_pieces, pieces)
            self._cache_pieces = pieces
        response_id = secrets.token_urlsafe(12)
        output_chars = 0
        bodies: list[JsonDict] = []
        for n, parts in enumerate(rendered.events):
            output_chars += 4 * sum(estimate_tokens(p) for p in parts if not p.get("thought"))
            final = n == len(rendered.events) - 1
            bodies.append(
                response_body(
                    parts,
                    request,
                    output_chars=output_chars,
                    thought_chars=rendered.thought_chars,
                    final=final,
                    response_id=response_id,
                    cached_tokens=cached,
                    finish_reason=rendered.finish_reason,
                    candidate_extra=rendered.candidate,
                )
            )
        if not stream:
            handler.send_json(200, bodies[0])
            return
        handler.start_stream()
        for n, body in enumerate(bodies):
            handler.send_event(body)
            if mid_drop and n == 0:
                handler.drop()
                return
        handler.end_stream()
