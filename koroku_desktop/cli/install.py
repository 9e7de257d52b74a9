"""`koroku install-desktop [--uninstall]`: the launcher and icons in the user's XDG folders.

Writes `$XDG_DATA_HOME/applications/koroku.desktop` (from `resources/koroku.desktop`, with `Exec`
pointing at the running `koroku`) and the icon into `$XDG_DATA_HOME/icons/hicolor/`, so Koroku
appears in the desktop's application menu with a "Quick ask" action. Plain file copies, no Qt.
"""

from __future__ import annotations

import argparse
import importlib.resources
import os
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DESKTOP_FILE = "koroku.desktop"
ICON_NAME = "koroku"
ICON_SIZES = (16, 22, 24, 32, 48, 64, 128, 256)
# Characters the Desktop Entry spec reserves in an Exec argument (quote the argument then).
_EXEC_RESERVED = set(" \t\n\"'\\><~|&;$*?#()`")


def register(sub: Any) -> None:
    """Add `koroku install-desktop`."""
    parser = sub.add_parser(
        "install-desktop",
        help="add Koroku to the application menu (XDG launcher and icons)",
    )
    parser.add_argument(
        "--uninstall",
        action="store_true",
        help="remove the launcher, the icons and the start-at-login entry",
    )
    parser.set_defaults(handler=cmd_install_desktop)


def xdg_data_home() -> Path:
    """`$XDG_DATA_HOME`, or ~/.local/share when unset, empty or relative (as the spec says)."""
    value = os.environ.get("XDG_DATA_HOME", "")
    if value and os.path.isabs(value):
        return Path(value)
    return Path.home() / ".local" / "share"


def autostart_entry() -> Path:
    """The start-at-login entry the desktop app's settings write (removed on --uninstall)."""
    value = os.environ.get("XDG_CONFIG_HOME", "")
    base = Path(value) if value and os.path.isabs(value) else Path.home() / ".config"
    return base / "autostart" / DESKTOP_FILE


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


def desktop_entry(command: list[str]) -> str:
    """The launcher's text: resources/koroku.desktop with every `Exec=koroku` made absolute."""
    template = importlib.resources.files("resources").joinpath(DESKTOP_FILE).read_text("utf-8")
    lines = []
    for line in template.splitlines():
        if line.startswith("Exec="):
            args = shlex.split(line.removeprefix("Exec="))
            if args and args[0] == "koroku":
                line = "Exec=" + exec_line(command + args[1:])
        lines.append(line)
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class DesktopFiles:
    """Where the launcher and each icon go under one XDG data dir."""

    data_home: Path

    @property
    def launcher(self) -> Path:
        """The .desktop file."""
        return self.data_home / "applications" / DESKTOP_FILE

    @property
    def icon_theme(self) -> Path:
        """The user's hicolor icon theme folder."""
        return self.data_home / "icons" / "hicolor"

    def icons(self) -> dict[Path, str]:
        """Target path -> resource path inside `resources/icons`, for every icon."""
        targets = {
            self.icon_theme / f"{n}x{n}/apps/{ICON_NAME}.png": f"hicolor/{n}x{n}/koroku.png"
            for n in ICON_SIZES
        }
        targets[self.icon_theme / "scalable" / "apps" / f"{ICON_NAME}.svg"] = "app.svg"
        return targets

    def all(self) -> list[Path]:
        """Every file install writes."""
        return [self.launcher, *self.icons()]


def install(data_home: Path, command: list[str]) -> list[Path]:
    """Write the launcher and icons under `data_home`; the files written."""
    files = DesktopFiles(data_home)
    icons = importlib.resources.files("resources.icons")
    for target, resource in files.icons().items():
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(icons.joinpath(resource).read_bytes())
    files.launcher.parent.mkdir(parents=True, exist_ok=True)
    tmp = files.launcher.with_suffix(".desktop.tmp")
    tmp.write_text(desktop_entry(command), encoding="utf-8")
    tmp.chmod(0o755)  # some desktops only trust executable launchers
    os.replace(tmp, files.launcher)
    _touch(files.icon_theme)
    return files.all()


def uninstall(data_home: Path) -> list[Path]:
    """Remove the launcher and icons under `data_home`, and the autostart entry; what was there."""
    removed = []
    for path in [*DesktopFiles(data_home).all(), autostart_entry()]:
        if path.is_file() or path.is_symlink():
            path.unlink()
            removed.append(path)
    if removed:
        _touch(DesktopFiles(data_home).icon_theme)
    return removed


def _touch(folder: Path) -> None:
    # Icon caches notice a newer mtime on the theme folder and reload.
    if folder.is_dir():
        os.utime(folder)


def cmd_install_desktop(args: argparse.Namespace) -> int:
    """Install (or with --uninstall remove) the launcher and icons; report what changed."""
    data_home = xdg_data_home()
    try:
        if args.uninstall:
            removed = uninstall(data_home)
            if not removed:
                print(f"Nothing to remove: no Koroku launcher under {data_home}.")
            for path in removed:
                print(f"removed {path}")
            return 0
        command = koroku_command()
        written = install(data_home, command)
    except OSError as exc:
        print(f"koroku install-desktop: {exc}", file=sys.stderr)
        return 1
    print(f"Installed the launcher {written[0]}")
    print(f"  it runs: {shlex.join(command)}")
    print(f"Installed {len(written) - 1} icons under {DesktopFiles(data_home).icon_theme}")
    print("Koroku is in your application menu (log out and in if it does not show yet).")
    return 0
