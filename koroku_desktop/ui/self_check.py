"""`koroku --self-check`: the whole desktop app started offscreen on a temporary data dir.

Used on frozen builds (packaging/smoke_check.py) and by anyone who wants to know that this
install works: database, every window, the tray menu, and the Gemini SDK's import.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path

from PySide6.QtWidgets import QApplication

from koroku_desktop.app.config import ApiKey, Paths
from koroku_desktop.app.lazy_model import LazyGeminiModel
from koroku_desktop.ui.app import Desktop


def run_self_check() -> int:
    """`koroku --self-check`: start offscreen on a temporary data dir, build every window,
    import the Gemini SDK, quit; 0, or 1 with the reason on stderr (used on frozen builds)."""
    os.environ["QT_QPA_PLATFORM"] = "offscreen"
    # Never touch the user's keyring (it may prompt to unlock): the check needs no key.
    os.environ["PYTHON_KEYRING_BACKEND"] = "keyring.backends.fail.Keyring"
    try:
        with tempfile.TemporaryDirectory(
            prefix="koroku-self-check-", ignore_cleanup_errors=True
        ) as tmp:
            _self_check_in(Paths(Path(tmp)).ensure())
    except Exception as exc:
        print(f"koroku self-check: FAILED: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    print("koroku self-check: ok")
    return 0


def _self_check_in(paths: Paths) -> None:
    import qasync

    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication(sys.argv[:1])
    app.setApplicationName("Koroku")
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    desktop = Desktop(app, paths, use_tray=True)

    async def check() -> None:
        try:
            await desktop.start()
            if not paths.db.is_file():
                raise RuntimeError(f"the database was not created at {paths.db}")
            desktop.popup.popup()
            for widget in (desktop.window, desktop.popup):
                if widget.grab().isNull():
                    raise RuntimeError(f"{type(widget).__name__} could not be drawn")
            if desktop.tray is not None:
                desktop.tray.menu.grab()
            # Through the model port's warm-up, as `warm_up` does: `ui` never imports `llm`.
            model = LazyGeminiModel(ApiKey("self-check", "self-check"))
            model.prepare()
            model.connect()
            if "google.genai" not in sys.modules:
                raise RuntimeError("google.genai was not imported")
        finally:
            await desktop.quit()

    with loop:
        loop.run_until_complete(check())
