"""`run_app`: the desktop app's start — the QApplication, the qasync loop, one instance per
data dir (a second `koroku` hands its wish to the running one), then `Desktop` until quit."""

from __future__ import annotations

import asyncio
import sys

from PySide6.QtWidgets import QApplication, QMessageBox

from koroku_desktop.app.config import SettingsError, default_paths
from koroku_desktop.app.runtime import DatabaseUnavailable
from koroku_desktop.ui.app import open_desktop
from koroku_desktop.ui.single_instance import send_command, server_name


def run_app(quick_ask: bool = False, screen: bool = False) -> int:
    """Start the desktop app (or hand the wish to the running one); the exit code."""
    import qasync

    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication(sys.argv[:1])
    app.setApplicationName("Koroku")
    app.setQuitOnLastWindowClosed(False)
    paths = default_paths()
    command = ("quick-ask-screen" if screen else "quick-ask") if quick_ask else "show"
    if send_command(server_name(paths.home), command):
        return 0
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    try:
        desktop = open_desktop(app, paths)
    except SettingsError as exc:
        QMessageBox.critical(None, "Koroku", f"Koroku cannot start: {exc}")
        return 2
    except DatabaseUnavailable as exc:
        print(f"koroku: {exc}", file=sys.stderr)
        QMessageBox.critical(None, "Koroku", f"Koroku cannot start: {exc}")
        return 1

    async def main() -> int:
        await desktop.start(show_window=not quick_ask)
        if quick_ask and screen:
            desktop.quick.with_screen()
        elif quick_ask:
            desktop.show_quick_ask()
        await desktop.done.wait()
        return 0

    with loop:
        code: int = loop.run_until_complete(main())
    return code
