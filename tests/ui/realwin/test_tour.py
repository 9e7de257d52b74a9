"""A person's tour beyond the main scene (tests/ui/realwin/tour.py) at three sizes in both
themes: a long streamed answer followed while the window is resized, the viewer's tabs and
facts, every Settings group, a scheduled task made and edited, a conversation renamed, pinned
and searched, quick ask with a long answer. Nothing cut off, nothing scrolling sideways,
typed keys land in the message box, and the view follows the stream."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.ui.realwin.test_real_window import SIZES, run_in_app


@pytest.mark.parametrize("mode", ["light", "dark"])
@pytest.mark.parametrize(("width", "height"), SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_tour(x_display: str, tmp_path: Path, width: int, height: int, mode: str) -> None:
    report = run_in_app("tests.ui.realwin.tour", x_display, tmp_path, width, height, mode)
    assert report["errors"] == [], "\n".join(report["errors"]) + "\n" + report["stderr"][0]
    assert report["clipped"] == [], "text cut off:\n" + "\n".join(report["clipped"])
    assert report["focus"] == [], "typed keys lost:\n" + "\n".join(report["focus"])
    assert report["follow"] == [], "\n".join(report["follow"])
    assert report["sideways"] == [], "scrolls sideways:\n" + "\n".join(report["sideways"])
