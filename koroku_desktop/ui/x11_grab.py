"""`python -m koroku_desktop.ui.x11_grab`: write a PNG of the X11 screen to stdout.

The app runs this helper with QT_QPA_PLATFORM=xcb when it itself runs on another Qt platform
(Wayland, offscreen) and no desktop portal offers screenshots.
"""

from __future__ import annotations

import sys


def main() -> int:
    """Grab the screen on the xcb platform; 1 with the reason on stderr if that fails."""
    from PySide6.QtGui import QGuiApplication

    from koroku_desktop.ui.screen_capture import ScreenCaptureError, grab_x11_in_process

    app = QGuiApplication(sys.argv[:1])
    try:
        data = grab_x11_in_process()
    except ScreenCaptureError as exc:
        print(exc, file=sys.stderr)
        return 1
    finally:
        del app
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
