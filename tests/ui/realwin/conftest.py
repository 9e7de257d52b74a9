"""The real-window layer: one private Xvfb per test worker, as in the trial (no window manager)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.ui.xserver import running_xvfb


@pytest.fixture(scope="session")
def x_display() -> Iterator[str]:
    """A running Xvfb (1920x1200) for this worker; its DISPLAY value."""
    with running_xvfb("1920x1200x24") as display:
        yield display
