"""Keeps full garbage collections off the event loop's critical path.

Once the Gemini SDK is imported and its clients built, the heap holds a few hundred thousand
long-lived objects (pydantic schemas, SDK types, Qt wrappers). A full (generation 2)
collection scans them all: 25-85 ms on the loop, and streaming a long answer allocates
enough to trigger several, the longest stalls measured while streaming (benchmarks/bench_ui.py).
Moving what survived start-up into the collector's permanent generation (`gc.freeze`) makes
later full collections scan only what was made since.
"""

from __future__ import annotations

import gc


def freeze_startup_heap() -> None:
    """Collect once, then freeze every surviving object (call once start-up is done)."""
    gc.collect()
    gc.freeze()


def thaw_heap() -> None:
    """Give frozen objects back to the collector (on quit: a later app in the same process,
    as in the tests, must not keep this one's objects alive)."""
    gc.unfreeze()
