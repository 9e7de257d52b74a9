"""The MCP SDK's own log records, routed to the log of the server they are about.

The SDK logs through `logging` (e.g. `logger.exception` for every non-JSON line a server
prints on stdout). Those records must never reach the terminal as tracebacks: the `mcp`
logger stops propagating, and a handler writes each record into `logs/mcp-<name>.log` of the
connection whose task emitted it (a context variable set by the supervising task, which the
SDK's reader tasks inherit). Records from no connection are kept in `logs/mcp.log`.
"""

from __future__ import annotations

import contextvars
import logging
import re
import time
from pathlib import Path
from typing import Protocol

PREFIX = "[koroku"
"""Every line Koroku writes into a server's log starts with this (the server's stderr never)."""


class LogSink(Protocol):
    """Where one connection's records go (a `ServerConnection`)."""

    def write_log(self, text: str, level: int) -> None:
        """Append `text` (one record, maybe several lines) to the server's log."""
        ...


current_sink: contextvars.ContextVar[LogSink | None] = contextvars.ContextVar(
    "koroku_mcp_sink", default=None
)


def log_file(log_dir: Path, server: str) -> Path:
    """`<log dir>/mcp-<name>.log`, the name made safe for a file name."""
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", server)
    return log_dir / f"mcp-{safe}.log"


def format_lines(source: str, level: str, text: str) -> str:
    """A record as lines marked as Koroku's: `[koroku HH:MM:SS LEVEL source] first line`."""
    stamp = time.strftime("%Y-%m-%d %H:%M:%S")
    lines = text.rstrip("\n").splitlines() or [""]
    head = f"{PREFIX} {stamp} {level} {source}] {lines[0]}"
    return "\n".join([head, *(f"{PREFIX}]   {line}" for line in lines[1:])]) + "\n"


class SdkLogRouter(logging.Handler):
    """Writes the SDK's records into the emitting connection's log (or `mcp.log`)."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.fallback_dir: Path | None = None

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = record.getMessage()
            if record.exc_info:
                text += "\n" + logging.Formatter().formatException(record.exc_info)
            sink = current_sink.get()
            if sink is not None:
                sink.write_log(format_lines(record.name, record.levelname, text), record.levelno)
            elif self.fallback_dir is not None:
                self.fallback_dir.mkdir(parents=True, exist_ok=True)
                with open(self.fallback_dir / "mcp.log", "a", encoding="utf-8") as fh:
                    fh.write(format_lines(record.name, record.levelname, text))
        except Exception:  # noqa: BLE001 — a log record must never break a connection
            pass


_router = SdkLogRouter()


def install(log_dir: Path | None) -> SdkLogRouter:
    """Route the `mcp` loggers through the router (once), never to the terminal."""
    logger = logging.getLogger("mcp")
    if _router not in logger.handlers:
        logger.addHandler(_router)
        logger.setLevel(logging.INFO)
        logger.propagate = False
    if log_dir is not None:
        _router.fallback_dir = log_dir
    return _router


class FileSink:
    """The log of a server that has no running connection here (`koroku mcp login`)."""

    def __init__(self, log_dir: Path | None, server: str) -> None:
        self.path = None if log_dir is None else log_file(log_dir, server)

    def write_log(self, text: str, level: int) -> None:
        """Append one record to `logs/mcp-<name>.log` (nothing without a log dir)."""
        del level
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(text)
