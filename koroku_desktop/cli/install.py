"""`koroku install-desktop [--uninstall]`: the launcher and icons in the user's XDG folders.

Writes `$XDG_DATA_HOME/applications/koroku.desktop` (from `resources/koroku.desktop`, with `Exec`
pointing at the running `koroku`) and the icon into `$XDG_DATA_HOME/icons/hicolor/`, so Koroku
appears in the desktop's application menu with a "Quick ask" action. Plain file copies, no Qt.
It also writes the systemd user timer that runs due tasks while the app is closed, or an
autostart loop where there is no systemd user session (koroku_desktop/task_timer.py).
"""

from __future__ import annotations

import argparse
import importlib.resources
import os
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from koroku_desktop.fsutil import atomic_write
from koroku_desktop.task_timer import install_task_runner, uninstall_task_runner
from koroku_desktop.xdg import (
    DESKTOP_FILE,
    autostart_file,
    exec_line,
    koroku_command,
    xdg_data_home,
)

ICON_NAME = "koroku"
ICON_SIZES = (16, 22, 24, 32, 48, 64, 128, 256)


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
    # Mode 0755: some desktops only trust executable launchers.
    atomic_write(files.launcher, desktop_entry(command), mode=0o755)
    _touch(files.icon_theme)
    return files.all()


def uninstall(data_home: Path) -> list[Path]:
    """Remove the launcher and icons under `data_home`, and the autostart entry; what was there."""
    removed = []
    for path in [*DesktopFiles(data_home).all(), autostart_file()]:
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
            removed = uninstall(data_home) + uninstall_task_runner()
            if not removed:
                print(f"Nothing to remove: no Koroku launcher under {data_home}.")
            for path in removed:
                print(f"removed {path}")
            return 0
        command = koroku_command()
        written = install(data_home, command)
        runner_files, how = install_task_runner(command)
    except OSError as exc:
        print(f"koroku install-desktop: {exc}", file=sys.stderr)
        return 1
    print(f"Installed the launcher {written[0]}")
    print(f"  it runs: {shlex.join(command)}")
    print(f"Installed {len(written) - 1} icons under {DesktopFiles(data_home).icon_theme}")
    print("Koroku is in your application menu (log out and in if it does not show yet).")
    for path in runner_files:
        print(f"Installed {path}")
    print(f"  scheduled tasks run while Koroku is closed: {how}")
    return 0
