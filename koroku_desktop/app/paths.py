"""Where the data dir is and what it holds (no pydantic: the fast commands read it too)."""

from __future__ import annotations

import contextlib
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from platformdirs import user_data_dir


@dataclass(frozen=True)
class Paths:
    """Every file and folder in the data dir, derived once from `home`."""

    home: Path
    db: Path = field(init=False, repr=False, compare=False)
    """The event log."""
    memory: Path = field(init=False, repr=False, compare=False)
    """Daily memory files (dd-mm-yyyy.md)."""
    tools: Path = field(init=False, repr=False, compare=False)
    """User tools (*.py)."""
    mcp_config: Path = field(init=False, repr=False, compare=False)
    """mcp.json: the MCP servers (Claude desktop's `mcpServers` format)."""
    logs: Path = field(init=False, repr=False, compare=False)
    """Logs, e.g. each stdio MCP server's stderr (mcp-<name>.log)."""
    settings_file: Path = field(init=False, repr=False, compare=False)
    """settings.json."""
    blobs: Path = field(init=False, repr=False, compare=False)
    """Attachments, content-addressed by SHA-256 (blobs/blob_store.py)."""
    task_runner_lock: Path = field(init=False, repr=False, compare=False)
    """Locked by the process that runs this device's due tasks: the desktop app while it
    runs, else the `koroku tasks run-due` of the moment (which defers to the app)."""

    def __post_init__(self) -> None:
        derived = {
            "db": "koroku.db",
            "memory": "memory",
            "tools": "tools",
            "mcp_config": "mcp.json",
            "logs": "logs",
            "settings_file": "settings.json",
            "blobs": "blobs",
            "task_runner_lock": "tasks-runner.lock",
        }
        for name, leaf in derived.items():
            object.__setattr__(self, name, self.home / leaf)

    def ensure(self) -> Paths:
        """Create the data dir and its folders, all 0700 (owner only).

        Changes nothing that is already right, and gives up quietly where it cannot (a
        read-only file system): the read-only commands must still work there.
        """
        for folder in (self.home, self.memory, self.tools):
            with contextlib.suppress(OSError):
                if not folder.is_dir():
                    folder.mkdir(mode=stat.S_IRWXU, parents=True, exist_ok=True)
                if stat.S_IMODE(folder.stat().st_mode) != stat.S_IRWXU:
                    os.chmod(folder, stat.S_IRWXU)
        return self


def data_dir() -> Path:
    """`KOROKU_HOME` if set, else the platform's user data dir for koroku."""
    env = os.environ.get("KOROKU_HOME")
    return Path(env).expanduser() if env else Path(user_data_dir("koroku", appauthor=False))


def default_paths() -> Paths:
    """The paths of the data dir in use, created if missing."""
    return Paths(data_dir()).ensure()
