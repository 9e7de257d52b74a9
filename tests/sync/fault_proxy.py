"""A fault-injecting TCP proxy between a sync and the real PostgreSQL the tests start.

It forwards bytes both ways until the client sends a chosen pattern (a statement's text, e.g.
`INSERT INTO koroku.events`, or `COMMIT`); from then on, by the armed fault:

- `cut`: both sockets are closed, the pattern never reaches the server;
- `stall`: nothing moves in either direction any more (the pattern is held back), the
  sockets stay open: a link that went silent;
- `drop_answer`: the pattern goes to the server, but nothing the server says comes back.

`hits` is set once the fault fired. Each accepted connection gets two pump threads; `close`
ends them all.
"""

from __future__ import annotations

import contextlib
import select
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal

Fault = Literal["cut", "stall", "drop_answer"]


@dataclass
class Arm:
    """The fault to fire when the client sends `pattern` (once), after `after` if given (e.g.
    the COMMIT of a push, not of a migration)."""

    pattern: bytes
    fault: Fault
    after: bytes = b""


@dataclass
class FaultProxy:
    """See the module docstring; `port` is where clients connect."""

    upstream_port: int
    arm: Arm | None = None
    hits: threading.Event = field(default_factory=threading.Event)
    _server: socket.socket = field(init=False)
    _stop: threading.Event = field(default_factory=threading.Event)
    _sockets: list[socket.socket] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._server = socket.create_server(("127.0.0.1", 0))
        self._server.settimeout(0.2)
        self.port = int(self._server.getsockname()[1])
        threading.Thread(target=self._accept, daemon=True).start()

    def url(self, hub_url: str) -> str:
        """`hub_url` (the real server's) pointed at this proxy instead."""
        return hub_url.replace(f":{self.upstream_port}/", f":{self.port}/")

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                client, _ = self._server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.upstream_port))
            self._sockets += [client, upstream]
            threading.Thread(target=self._pump, args=(client, upstream), daemon=True).start()

    def _fire(self, data: bytes, tail: bytes, primed: bool) -> bool:
        """Whether the armed pattern is in `data` (seen across chunks via `tail`)."""
        arm = self.arm
        if arm is None or self.hits.is_set() or not primed:
            return False
        return arm.pattern in tail + data

    def _pump(self, client: socket.socket, upstream: socket.socket) -> None:
        tail = b""
        silenced = False  # server -> client dropped
        primed = self.arm is None or not self.arm.after
        while not self._stop.is_set():
            try:
                ready, _, _ = select.select([client, upstream], [], [], 0.2)
            except (OSError, ValueError):
                return
            for sock in ready:
                try:
                    data = sock.recv(65536)
                except OSError:
                    data = b""
                if not data:
                    self._close(client, upstream)
                    return
                if sock is upstream:
                    if not silenced:
                        with contextlib.suppress(OSError):
                            client.sendall(data)
                    continue
                fire = self._fire(data, tail, primed)
                if self.arm is not None and self.arm.after in tail + data:
                    primed = True  # the pattern counts from the next chunk on
                tail = (tail + data)[-256:]
                if not fire:
                    try:
                        upstream.sendall(data)
                    except OSError:
                        self._close(client, upstream)
                        return
                    continue
                assert self.arm is not None
                fault = self.arm.fault
                self.hits.set()
                if fault == "cut":
                    self._close(client, upstream)
                    return
                if fault == "stall":  # nothing moves any more; the sockets stay open
                    self._stop.wait()
                    return
                with contextlib.suppress(OSError):  # drop_answer: the server gets it...
                    upstream.sendall(data)
                silenced = True  # ...and the client never hears back

    @staticmethod
    def _close(*socks: socket.socket) -> None:
        for sock in socks:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                sock.close()

    def close(self) -> None:
        """Stop accepting and cut every connection."""
        self._stop.set()
        self._close(self._server, *self._sockets)


@contextlib.contextmanager
def fault_proxy(upstream_port: int, arm: Arm | None = None) -> Iterator[FaultProxy]:
    """A running proxy to `upstream_port` (see `FaultProxy`), closed afterwards."""
    proxy = FaultProxy(upstream_port, arm)
    try:
        yield proxy
    finally:
        proxy.close()
