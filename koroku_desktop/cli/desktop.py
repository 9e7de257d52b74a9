"""`koroku quick-ask`: open the quick-ask popup in the running app, starting it if needed.

This is the command to bind to a desktop keyboard shortcut where Qt has no global-hotkey API
(X11 and Wayland). The terminal front end never imports the desktop one: the entry point
(`koroku_desktop.launcher`) hands it a `DesktopStarter`.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, Protocol

EXIT_USAGE = 2


class DesktopStarter(Protocol):
    """Starts the desktop app (or hands the wish to the running one); returns the exit code."""

    def __call__(
        self, *, self_check: bool = False, quick_ask: bool = False, screen: bool = False
    ) -> int:
        """Run the app until it quits (`screen`: quick ask about a capture of the screen)."""
        ...


def no_desktop(*, self_check: bool = False, quick_ask: bool = False, screen: bool = False) -> int:
    """The starter when the desktop front end is not wired in: say so, exit 2."""
    print("The desktop app is not available here; use `koroku chat`.", file=sys.stderr)
    return EXIT_USAGE


def register(sub: Any, start_desktop: DesktopStarter) -> None:
    """Add `koroku quick-ask`."""

    def cmd_quick_ask(args: argparse.Namespace) -> int:
        """Open the popup in the running instance, or start the app with the popup open."""
        return start_desktop(quick_ask=True, screen=bool(args.screen))

    quick = sub.add_parser(
        "quick-ask",
        help="open the quick-ask popup (bind this to a keyboard shortcut)",
    )
    quick.add_argument(
        "--screen",
        action="store_true",
        help="capture the screen (desktop portal, else X11) and ask about it",
    )
    quick.set_defaults(handler=cmd_quick_ask)
