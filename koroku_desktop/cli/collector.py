"""`koroku ask` starts without the cyclic garbage collector.

Start-up allocates a few hundred thousand objects that live until exit (our modules, the
pydantic schemas, the SDK's types) and almost no cyclic garbage, yet every 700 allocations
the collector scans the young ones and now and then all of them: ~4% of the command's
instructions (valgrind, `benchmarks/README.md`). It is paused from the command line's
parsing until the first reply, then everything alive is frozen (`gc.freeze`: later
collections skip it) and it runs again for the rest (tool calls, the wind-down).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

_paused = False


@contextmanager
def paused(pause: bool) -> Iterator[None]:
    """Run the body with the collector paused when `pause` (and it is on); it runs again
    afterwards whatever happened (a test may call a command in its own process)."""
    global _paused
    if not pause or not gc.isenabled():
        yield
        return
    gc.disable()
    _paused = True
    try:
        yield
    finally:
        if _paused:
            _paused = False
            gc.enable()


def resume_frozen() -> None:
    """Start-up is over: freeze what is alive and let the collector run again (no-op unless
    `paused` paused it)."""
    global _paused
    if _paused:
        _paused = False
        gc.freeze()
        gc.enable()
