"""Capturing the screen for "ask about the screen": PNG bytes of what the person sees.

First the xdg-desktop-portal Screenshot interface on the session bus (GNOME, KDE, wlroots on
Wayland and X11): a `Screenshot` call answers through a Request object's `Response` signal
with a `file://` uri, which is read (and deleted when it is a temporary file). Where no portal
offers Screenshot, the X11 screen is grabbed with Qt (`QScreen.grabWindow(0)` on the xcb
platform: in this process when it runs on xcb, else in a short `python -m` helper that does).
Where neither is possible, `ScreenCaptureError` says what is missing. A person cancelling the
portal's dialog is `ScreenCaptureCancelled`, which is not an error to report.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from jeepney import DBusAddress
from jeepney.io.asyncio import open_dbus_router

from koroku_desktop.domain.errors import KorokuError
from koroku_desktop.ui.portal_request import CANCELLED, PortalRefused, portal_request

log = logging.getLogger(__name__)

PORTAL = DBusAddress(
    "/org/freedesktop/portal/desktop",
    bus_name="org.freedesktop.portal.Desktop",
    interface="org.freedesktop.portal.Screenshot",
)
PORTAL_TIMEOUT_S = 120.0  # an interactive portal dialog waits for the person
X11_HELPER_TIMEOUT_S = 30.0
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


class ScreenCaptureError(KorokuError):
    """The screen could not be captured; the message says why and what is missing."""


class ScreenCaptureCancelled(ScreenCaptureError):
    """The person cancelled the portal's screenshot dialog (response code 1)."""


class PortalUnavailable(ScreenCaptureError):
    """No session bus, no portal, or a portal without the Screenshot interface."""


async def capture_screen(*, interactive: bool = False) -> bytes:
    """The screen as PNG bytes: through the desktop portal, else an X11 grab.

    `interactive` asks the portal to let the person pick an area or window first. Raises
    `ScreenCaptureCancelled` when they cancel, `ScreenCaptureError` when nothing works.
    """
    try:
        return await portal_screenshot(interactive=interactive)
    except PortalUnavailable as no_portal:
        if not os.environ.get("DISPLAY"):
            raise ScreenCaptureError(
                f"Cannot capture the screen: no desktop portal offers screenshots "
                f"({no_portal}) and there is no X11 display (DISPLAY is not set). Install "
                f"xdg-desktop-portal with your desktop's backend (e.g. xdg-desktop-portal-gnome "
                f"or -kde)."
            ) from None
        return await x11_screenshot()


async def capture_for_asking(failed: Callable[[str], None]) -> bytes | None:
    """The screen as PNG for a question, or None: cancelled by the person (nothing to say) or
    failed (`failed` is told why, in a sentence for the person)."""
    try:
        return await capture_screen()
    except ScreenCaptureCancelled:
        return None
    except ScreenCaptureError as exc:
        log.warning("screen capture failed: %s", exc)
        failed(str(exc))
        return None


async def portal_screenshot(*, interactive: bool = False) -> bytes:
    """Ask xdg-desktop-portal for a screenshot; the PNG bytes (the temporary file removed)."""
    uri = await _portal_uri(interactive)
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        raise ScreenCaptureError(f"The desktop portal returned an unexpected location: {uri!r}")
    path = Path(unquote(parsed.path))
    try:
        data = await asyncio.to_thread(path.read_bytes)
    except OSError as exc:
        raise ScreenCaptureError(f"Cannot read the portal's screenshot {path}: {exc}") from None
    if is_temporary(path):
        await asyncio.to_thread(path.unlink, missing_ok=True)
    return data if data.startswith(PNG_MAGIC) else _to_png(data, str(path))


async def _portal_uri(interactive: bool) -> str:
    """One Screenshot request through the portal; the `uri` of its Response."""
    try:
        cm = open_dbus_router(bus="SESSION")
        router = await cm.__aenter__()
    except Exception as exc:  # noqa: BLE001 — no DBUS_SESSION_BUS_ADDRESS, bus not running
        raise PortalUnavailable(f"no D-Bus session bus: {exc}") from None
    options: dict[str, Any] = {"modal": ("b", True), "interactive": ("b", interactive)}
    try:
        code, results = await portal_request(
            router, PORTAL, "Screenshot", "sa{sv}", ("", options), PORTAL_TIMEOUT_S
        )
    except PortalRefused as refused:
        raise PortalUnavailable(str(refused)) from None
    except TimeoutError:
        raise ScreenCaptureError("The desktop portal did not answer in time.") from None
    finally:
        await cm.__aexit__(None, None, None)
    if code == CANCELLED:
        raise ScreenCaptureCancelled("The screenshot was cancelled.")
    if code != 0:
        raise ScreenCaptureError(
            "The desktop portal did not take the screenshot (it answered 'other', e.g. "
            "permission denied)."
        )
    uri = results.get("uri", ("s", ""))[1]
    if not uri:
        raise ScreenCaptureError("The desktop portal answered without a screenshot.")
    return str(uri)


def is_temporary(path: Path) -> bool:
    """True for a file in the temporary directory or the runtime dir (a portal's scratch
    copy, safe to delete); a screenshot saved in the person's Pictures is kept."""
    roots = [Path(tempfile.gettempdir()), Path("/tmp")]
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime:
        roots.append(Path(runtime))
    resolved = path.resolve()
    return any(resolved.is_relative_to(root.resolve()) for root in roots)


def _to_png(data: bytes, name: str) -> bytes:
    """Another image format (some portals write JPEG) re-encoded as PNG with Qt."""
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice
    from PySide6.QtGui import QImage

    image = QImage.fromData(data)
    if image.isNull():
        raise ScreenCaptureError(f"The portal's screenshot {name} is not an image Koroku reads.")
    out = QByteArray()
    buffer = QBuffer(out)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, b"PNG")
    return bytes(out.data())


async def x11_screenshot() -> bytes:
    """Grab the whole X11 screen as PNG: in process on the xcb platform, else in a helper."""
    from PySide6.QtGui import QGuiApplication

    app = QGuiApplication.instance()
    if isinstance(app, QGuiApplication) and QGuiApplication.platformName() == "xcb":
        return grab_x11_in_process()
    if getattr(sys, "frozen", False):
        raise ScreenCaptureError(
            "Cannot capture the screen: no desktop portal offers screenshots and this "
            "Koroku does not run on X11 (QT_QPA_PLATFORM=xcb) to grab the screen itself."
        )
    env = {**os.environ, "QT_QPA_PLATFORM": "xcb"}
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "koroku_desktop.ui.x11_grab",
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(), X11_HELPER_TIMEOUT_S)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        raise ScreenCaptureError("Grabbing the X11 screen took too long.") from None
    if proc.returncode != 0 or not out.startswith(PNG_MAGIC):
        why = err.decode(errors="replace").strip().splitlines()
        raise ScreenCaptureError(
            f"Cannot grab the X11 screen on DISPLAY={os.environ.get('DISPLAY')}: "
            f"{why[-1] if why else 'no image'}"
        )
    return out


def grab_x11_in_process() -> bytes:
    """The primary screen grabbed with Qt (needs a QGuiApplication on the xcb platform)."""
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice
    from PySide6.QtGui import QGuiApplication

    screen = QGuiApplication.primaryScreen()
    if screen is None:
        raise ScreenCaptureError("Qt sees no screen to grab.")
    pixmap = screen.grabWindow(0)
    if pixmap.isNull():
        raise ScreenCaptureError("Qt could not grab the X11 screen.")
    out = QByteArray()
    buffer = QBuffer(out)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    pixmap.save(buffer, "PNG")
    return bytes(out.data())
