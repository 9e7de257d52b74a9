"""The app on a real X server, as a person meets it, at three sizes and in both themes.

Each size and theme is one real app process (tests/ui/realwin/driver.py) on this worker's
Xvfb: the first start, a conversation with approvals, every header button and shortcut,
sending while scrolled up. Nothing visible may be cut off, typed keys must land in the message
box after every action, and the view must follow what is sent.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
SIZES = [(400, 700), (900, 760), (1600, 1000)]
SHOTS = os.environ.get("KOROKU_REALWIN_SHOTS")
"""A folder to save the screenshots in (e.g. resources/screenshots), else none are kept."""


def run_in_app(
    module: str, x_display: str, tmp_path: Path, width: int, height: int, mode: str
) -> dict[str, list[str]]:
    """Run `module` (driver.py or tour.py) as its own app process; its report."""
    env = {
        **os.environ,
        "DISPLAY": x_display,
        "QT_QPA_PLATFORM": "xcb",
        "QT_SCALE_FACTOR": "1",
        "KOROKU_HOME": str(tmp_path / "home"),
        "KOROKU_WORKSPACE": str(tmp_path / "workspace"),
    }
    (tmp_path / "workspace").mkdir()
    for var in ("WAYLAND_DISPLAY", "GOOGLE_GEMINI_BASE_URL", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        env.pop(var, None)
    report_path = tmp_path / "report.json"
    command = [sys.executable, "-m", module, str(width), str(height), mode]
    command += [str(tmp_path / "work"), str(report_path)]
    if SHOTS:
        command.append(SHOTS)
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=240)
    assert report_path.exists(), (
        f"the app did not finish (exit status {done.returncode}):\n{done.stderr[-4000:]}"
    )
    report: dict[str, list[str]] = json.loads(report_path.read_text())
    report.setdefault("stderr", [done.stderr[-3000:]])
    return report


@pytest.mark.parametrize("mode", ["light", "dark"])
@pytest.mark.parametrize(("width", "height"), SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_real_window(x_display: str, tmp_path: Path, width: int, height: int, mode: str) -> None:
    report = run_in_app("tests.ui.realwin.driver", x_display, tmp_path, width, height, mode)
    done_stderr = report["stderr"][0]
    assert report["errors"] == [], "\n".join(report["errors"]) + "\n" + done_stderr
    assert report["clipped"] == [], "text cut off:\n" + "\n".join(report["clipped"])
    assert report["focus"] == [], "typed keys lost:\n" + "\n".join(report["focus"])
    assert report["follow"] == [], "\n".join(report["follow"])
    assert report["width"] == [], "the window held wide:\n" + "\n".join(report["width"])
