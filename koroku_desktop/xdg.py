"""Linux desktop integration without Qt: XDG folders, the `Exec` line, the autostart entry.

Shared by `koroku install-desktop` (the launcher) and the Settings dialog (start at login).
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from koroku_desktop.fsutil import atomic_write

DESKTOP_FILE = "koroku.desktop"
# Characters the Desktop Entry spec reserves in an Exec argument (quote the argument then).
_EXEC_RESERVED = set(" \t\n\"'\\><~|&;$*?#()`")


def _xdg_home(variable: str, default: Path) -> Path:
    value = os.environ.get(variable, "").strip()
    return Path(value) if value and os.path.isabs(value) else default


def xdg_data_home() -> Path:
    """`$XDG_DATA_HOME`, or ~/.local/share when unset, empty or relative (as the spec says)."""
    return _xdg_home("XDG_DATA_HOME", Path.home() / ".local" / "share")


def xdg_config_home() -> Path:
    """`$XDG_CONFIG_HOME`, or ~/.config when unset, empty or relative."""
    return _xdg_home("XDG_CONFIG_HOME", Path.home() / ".config")


def autostart_file() -> Path:
    """`$XDG_CONFIG_HOME/autostart/koroku.desktop` (default under ~/.config)."""
    return xdg_config_home() / "autostart" / DESKTOP_FILE


def koroku_command() -> list[str]:
    """The command that starts this Koroku: the frozen binary, the `koroku` script, or -m."""
    if getattr(sys, "frozen", False):
        return [str(Path(sys.executable).resolve())]
    script = shutil.which("koroku")
    if script:
        return [str(Path(script).absolute())]
    return [str(Path(sys.executable).absolute()), "-m", "koroku_desktop"]


def exec_line(argv: list[str]) -> str:
    """`argv` as a Desktop Entry `Exec` value (quoted and escaped as the spec requires)."""
    words = []
    for arg in argv:
        arg = arg.replace("%", "%%")
        if any(ch in _EXEC_RESERVED for ch in arg):
            inner = "".join("\\" + ch if ch in '"`$\\' else ch for ch in arg)
            arg = f'"{inner}"'
        # The value is a desktop-file string too, where a backslash is itself escaped.
        words.append(arg.replace("\\", "\\\\"))
    return " ".join(words)


def autostart_text(command: list[str]) -> str:
    """The .desktop entry that starts Koroku in the tray at login."""
    return (
        "[Desktop Entry]\n"
        "Type=Application\n"
        "Name=Koroku\n"
        "Comment=A tray assistant with total recall, built on Google Gemini\n"
        f"Exec={exec_line(command)}\n"
        "Icon=koroku\n"
        "Terminal=false\n"
        "X-GNOME-Autostart-enabled=true\n"
    )


def autostart_enabled() -> bool:
    """Whether the autostart entry exists."""
    return autostart_file().is_file()


def set_autostart(on: bool, command: list[str] | None = None) -> None:
    """Write the entry atomically, or remove it. Raises OSError."""
    path = autostart_file()
    if not on:
        path.unlink(missing_ok=True)
        return
    atomic_write(path, autostart_text(command or koroku_command()), mode=0o644)
