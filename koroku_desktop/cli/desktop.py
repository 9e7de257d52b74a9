"""`koroku quick-ask`: open the quick-ask popup in the running app, starting it if needed.

This is the command to bind to a desktop keyboard shortcut where Qt has no global-hotkey API
(X11 and Wayland). The desktop front end is imported only inside `start_desktop`, so no
other command loads Qt: the one exception to the layer contracts, named in pyproject.toml.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

EXIT_USAGE = 2


def register(sub: Any) -> None:
    """Add `koroku quick-ask`."""
    quick = sub.add_parser(
        "quick-ask",
        help="open the quick-ask popup (bind this to a keyboard shortcut)",
    )
    quick.set_defaults(handler=cmd_quick_ask)


def start_desktop(*, self_check: bool = False, quick_ask: bool = False) -> int:
    """Run the desktop app (or hand over to the running one); its exit code."""
    try:
        from koroku_desktop.ui.app import run_app
    except ImportError as exc:
        print(f"The desktop app is not available ({exc}); use `koroku chat`.", file=sys.stderr)
        return EXIT_USAGE
    result: int = run_app(self_check=self_check, quick_ask=quick_ask)
    return result


def cmd_quick_ask(args: argparse.Namespace) -> int:
    """Open the popup in the running instance, or start the app with the popup open."""
    return start_desktop(quick_ask=True)
