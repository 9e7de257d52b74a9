"""One connection's log, `logs/mcp-<name>.log`: the server's stderr, the SDK's records
about it and the log messages it sends (a mixin of `ServerConnection`)."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import TextIO

from mcp_types import LoggingMessageNotificationParams

from koroku_desktop.mcp import sdk_log


class ServerLog:
    """Writes and reads one server's log file (mixed into `ServerConnection`)."""

    _log_dir: Path | None
    _errlog: TextIO | None
    _errlog_start: int
    _sdk_error: str

    @property
    def name(self) -> str:
        """The server's name in mcp.json."""
        raise NotImplementedError

    @property
    def log_path(self) -> Path | None:
        """`logs/mcp-<name>.log`: the server's stderr, the SDK's records, its notifications."""
        return None if self._log_dir is None else sdk_log.log_file(self._log_dir, self.name)

    def write_log(self, text: str, level: int) -> None:
        """Append one of Koroku's records (the SDK's, the server's notifications) to the log."""
        if level >= logging.WARNING:
            first = text.split("] ", 1)[-1].splitlines()[0].strip()
            self._sdk_error = first or self._sdk_error
        fh = self._open_log()
        if fh is not None:
            fh.write(text)
            fh.flush()

    def _open_log(self) -> TextIO | None:
        if self._log_dir is None:
            return None
        if self._errlog is None:
            self._log_dir.mkdir(parents=True, exist_ok=True)
            path = sdk_log.log_file(self._log_dir, self.name)
            self._errlog = open(path, "a", encoding="utf-8")  # noqa: SIM115
        return self._errlog

    def _stderr(self) -> TextIO | None:
        errlog = self._open_log()
        if errlog is not None:
            errlog.flush()
            self._errlog_start = errlog.tell()
        return errlog

    def _stderr_tail(self) -> str:
        """The last line the server wrote to stderr during this attempt, if any."""
        if self._errlog is None:
            return ""
        try:
            with open(self._errlog.name, encoding="utf-8", errors="replace") as fh:
                fh.seek(self._errlog_start)
                lines = [
                    ln.strip()
                    for ln in fh.read()[-20000:].splitlines()
                    if ln.strip() and not ln.startswith(sdk_log.PREFIX)
                ]
        except OSError:
            return ""
        return lines[-1] if lines else ""

    async def _server_log(self, params: LoggingMessageNotificationParams) -> None:
        """A `notifications/message` from the server, kept in its log."""
        data = params.data
        text = data if isinstance(data, str) else json.dumps(data, default=str)
        source = f"server {params.logger}" if params.logger else "server"
        self.write_log(sdk_log.format_lines(source, params.level.upper(), text), logging.INFO)
