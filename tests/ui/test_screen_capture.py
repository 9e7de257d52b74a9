"""Screen capture against real components: a fake Screenshot portal on a private D-Bus session
bus (dbus-daemon started here), and a real Xvfb for the X11 fallback."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from koroku_desktop.ui import screen_capture
from koroku_desktop.ui.app import Desktop
from koroku_desktop.ui.screen_capture import (
    ScreenCaptureCancelled,
    ScreenCaptureError,
    capture_screen,
)
from tests.fakes.fake_screenshot_portal import HEIGHT, WIDTH, png
from tests.ui.xserver import running_xvfb

FAKE = Path(__file__).resolve().parents[1] / "fakes" / "fake_screenshot_portal.py"
ROOT = Path(__file__).resolve().parents[2]


def png_size(data: bytes) -> tuple[int, int]:
    """Width and height from a PNG's IHDR."""
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    width, height = struct.unpack(">II", data[16:24])
    return width, height


@pytest.fixture
def start_portal(private_bus: str, tmp_path: Path) -> Iterator[Callable[[str], Path]]:
    """Start the fake Screenshot portal in a mode; returns the folder it writes PNGs to."""
    procs: list[subprocess.Popen[str]] = []

    def start(mode: str) -> Path:
        folder = tmp_path / "shots"
        folder.mkdir(exist_ok=True)
        proc = subprocess.Popen(
            [sys.executable, str(FAKE), str(tmp_path / "portal.jsonl"), str(folder), mode],
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "DBUS_SESSION_BUS_ADDRESS": private_bus},
        )
        procs.append(proc)
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        return folder

    yield start
    for proc in procs:
        proc.kill()
        proc.wait()


@pytest.fixture
def xvfb() -> Iterator[str]:
    """A real Xvfb (800x600); yields `:N`."""
    with running_xvfb("800x600x24") as display:
        yield display


async def test_the_portal_screenshot_is_read_and_its_temporary_file_removed(
    start_portal: Callable[[str], Path], tmp_path: Path
) -> None:
    folder = start_portal("ok")
    data = await capture_screen(interactive=True)
    assert data == png(WIDTH, HEIGHT)
    assert png_size(data) == (WIDTH, HEIGHT)
    assert list(folder.iterdir()) == []  # written under /tmp: a scratch copy, deleted
    (call,) = [json.loads(line) for line in (tmp_path / "portal.jsonl").read_text().splitlines()]
    assert call["interface"] == "org.freedesktop.portal.Screenshot"
    assert call["member"] == "Screenshot"
    assert "'interactive': ('b', True)" in call["body"]
    assert "'handle_token'" in call["body"]


async def test_cancelling_the_portal_dialog_is_reported_as_cancelled(
    start_portal: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    start_portal("cancel")
    monkeypatch.setenv("DISPLAY", ":12345")  # a cancel must not fall back to X11
    with pytest.raises(ScreenCaptureCancelled):
        await capture_screen()


async def test_a_portal_that_refuses_is_an_error_not_a_fallback(
    start_portal: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    start_portal("other")
    monkeypatch.setenv("DISPLAY", ":12345")
    with pytest.raises(ScreenCaptureError) as caught:
        await capture_screen()
    assert not isinstance(caught.value, ScreenCaptureCancelled)
    assert "did not take the screenshot" in str(caught.value)


async def test_without_portal_or_display_the_error_says_what_is_missing(
    start_portal: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    start_portal("no-screenshot")
    monkeypatch.delenv("DISPLAY", raising=False)
    with pytest.raises(ScreenCaptureError) as caught:
        await capture_screen()
    message = str(caught.value)
    assert "no desktop portal offers screenshots" in message
    assert "UnknownMethod" in message and "DISPLAY is not set" in message


async def test_without_a_session_bus_the_error_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)
    monkeypatch.setenv("XDG_RUNTIME_DIR", "/nonexistent-koroku-test")
    monkeypatch.delenv("DISPLAY", raising=False)
    with pytest.raises(ScreenCaptureError, match="no D-Bus session bus"):
        await capture_screen()


async def test_portal_missing_falls_back_to_the_x11_screen(
    private_bus: str, xvfb: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No portal on the private bus (ServiceUnknown); this process is offscreen, so the grab
    # runs in the xcb helper on the Xvfb display.
    monkeypatch.setenv("DISPLAY", xvfb)
    data = await capture_screen()
    assert png_size(data) == (800, 600)


def test_the_x11_grab_in_a_process_on_the_xcb_platform(private_bus: str, xvfb: str) -> None:
    script = (
        "import asyncio, sys\n"
        "from PySide6.QtGui import QGuiApplication\n"
        "from koroku_desktop.ui.screen_capture import capture_screen\n"
        "app = QGuiApplication(sys.argv[:1])\n"
        "assert QGuiApplication.platformName() == 'xcb'\n"
        "sys.stdout.buffer.write(asyncio.run(capture_screen()))\n"
    )
    env = {
        **os.environ,
        "QT_QPA_PLATFORM": "xcb",
        "DISPLAY": xvfb,
        "DBUS_SESSION_BUS_ADDRESS": private_bus,
    }
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, timeout=60
    )
    assert done.returncode == 0, done.stderr.decode()
    assert png_size(done.stdout) == (800, 600)


def test_a_bad_display_is_a_clear_error(private_bus: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    monkeypatch.setenv("DISPLAY", ":31999")
    with pytest.raises(ScreenCaptureError, match="Cannot grab the X11 screen on DISPLAY=:31999"):
        asyncio.run(screen_capture.x11_screenshot())


def test_only_scratch_files_are_deleted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert screen_capture.is_temporary(tmp_path / "Screenshot.png")
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    assert not screen_capture.is_temporary(Path("/home/someone/Pictures/Screenshot.png"))


def test_koroku_quick_ask_screen_reaches_the_running_app(
    start_portal: Callable[[str], Path], desktop: Desktop, qtbot: QtBot
) -> None:
    start_portal("ok")
    desktop.window.hide()
    captured: list[bytes] = []
    desktop.screen_captured.connect(captured.append)
    proc = subprocess.Popen(
        [sys.executable, "-m", "koroku_desktop", "quick-ask", "--screen"],
        cwd=ROOT,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    qtbot.waitUntil(lambda: proc.poll() is not None, timeout=30000)
    assert proc.returncode == 0, proc.communicate()[1].decode()
    qtbot.waitUntil(lambda: bool(captured), timeout=10000)
    assert captured == [png(WIDTH, HEIGHT)]
    assert desktop.popup.isVisible()
    # The capture waits in the popup as an attachment chip, with the portal's exact bytes.
    pending = desktop.popup.tray.pending
    assert [(p.name, p.mime_type, p.data) for p in pending] == [
        ("screen.png", "image/png", png(WIDTH, HEIGHT))
    ]
    desktop.popup.tray.take()
    desktop.popup.hide()


def test_the_popups_screen_button_hides_it_captures_and_attaches(
    start_portal: Callable[[str], Path], desktop: Desktop, qtbot: QtBot
) -> None:
    start_portal("ok")
    desktop.show_quick_ask()
    qtbot.waitUntil(desktop.popup.isVisible)
    hidden_while_capturing: list[bool] = []
    desktop.screen_captured.connect(lambda _png: hidden_while_capturing.append(True))
    qtbot.mouseClick(desktop.popup.screen_button, Qt.MouseButton.LeftButton)
    assert not desktop.popup.isVisible()  # out of the picture before the capture starts
    qtbot.waitUntil(lambda: bool(desktop.popup.tray.pending), timeout=10000)
    assert desktop.popup.isVisible()
    assert hidden_while_capturing == [True]
    [shot] = desktop.popup.tray.take()
    assert (shot.name, shot.data) == ("screen.png", png(WIDTH, HEIGHT))
    desktop.popup.hide()


def test_a_failed_capture_still_opens_the_popup_and_says_why(
    start_portal: Callable[[str], Path],
    desktop: Desktop,
    qtbot: QtBot,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    start_portal("no-screenshot")
    monkeypatch.delenv("DISPLAY", raising=False)
    captured: list[bytes] = []
    desktop.screen_captured.connect(captured.append)
    desktop.server.quick_ask_screen_requested.emit()
    qtbot.waitUntil(desktop.popup.isVisible, timeout=10000)
    qtbot.waitUntil(lambda: "DISPLAY is not set" in desktop.window.statusBar().currentMessage())
    assert captured == []
    desktop.popup.hide()
