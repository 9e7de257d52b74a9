"""The `koroku` entry point: the terminal commands, or the desktop app when none is given.

It sits above both front ends (the top layer of the layer contract), so the terminal front end
never imports the desktop one: it is handed `start_desktop` instead. Qt is imported only once
the desktop app starts, so every other command (and the core) runs without it.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from koroku_desktop import cli
from koroku_desktop.cli.desktop import EXIT_USAGE


def start_desktop(
    *, self_check: bool = False, quick_ask: bool = False, screen: bool = False
) -> int:
    """Run the desktop app (or hand over to the running one); its exit code."""
    try:
        from koroku_desktop.ui.run_app import run_app
        from koroku_desktop.ui.self_check import run_self_check
    except ImportError as exc:
        print(f"The desktop app is not available ({exc}); use `koroku chat`.", file=sys.stderr)
        return EXIT_USAGE
    if self_check:
        return run_self_check()
    return run_app(quick_ask=quick_ask, screen=screen)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `koroku` console script (and `python -m koroku_desktop`)."""
    return cli.main(argv, start_desktop=start_desktop)
