"""Start at login on Linux: an XDG autostart entry, `$XDG_CONFIG_HOME/autostart/koroku.desktop`."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

ENTRY_NAME = "koroku.desktop"


def autostart_dir() -> Path:
    """`$XDG_CONFIG_HOME/autostart` (default `~/.config/autostart`)."""
    config = os.environ.get("XDG_CONFIG_HOME", "").strip()
    base = Path(config) if config and Path(config).is_absolute() else Path.home() / ".config"
    return base / "autostart"


def autostart_file() -> Path:
    """The entry Koroku writes."""
    return autostart_dir() / ENTRY_NAME


def _quote(arg: str) -> str:
    """An Exec argument quoted as the Desktop Entry spec asks."""
    if arg and not any(c in arg for c in " \t\n\"'\\><~|&;$*?#()`"):
        return arg
    escaped = arg.replace("\\", "\\\\").replace('"', '\\"').replace("`", "\\`").replace("$", "\\$")
    return f'"{escaped}"'


def launch_command() -> list[str]:
    """How to start Koroku: the frozen binary, `koroku` on PATH, or this Python's module."""
    if getattr(sys, "frozen", False):
        return [sys.executable]
    found = shutil.which("koroku")
    return [found] if found else [sys.executable, "-m", "koroku_desktop"]


def entry_text(command: list[str]) -> str:
    """The .desktop entry that starts Koroku in the tray at login."""
    exec_line = " ".join(_quote(a) for a in command)
    return (
        "[Desktop Entry]\n"
        "Type=Application\n"
        "Name=Koroku\n"
        "Comment=A tray assistant with total recall, built on Google Gemini\n"
        f"Exec={exec_line}\n"
        "Icon=koroku\n"
        "Terminal=false\n"
        "X-GNOME-Autostart-enabled=true\n"
    )


def is_enabled() -> bool:
    """Whether the autostart entry exists."""
    return autostart_file().is_file()


def enable(command: list[str] | None = None) -> Path:
    """Write the entry (atomically); returns its path. Raises OSError."""
    path = autostart_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".koroku-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(entry_text(command or launch_command()))
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def disable() -> None:
    """Remove the entry if it is there. Raises OSError for anything but a missing file."""
    autostart_file().unlink(missing_ok=True)


def set_enabled(on: bool) -> None:
    """Write or remove the entry."""
    if on:
        enable()
    else:
        disable()
