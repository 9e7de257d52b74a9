"""`koroku --self-check` from source: offscreen, a temporary data dir, every window, the SDK."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.packaging.conftest import ROOT, run_python

pytestmark = pytest.mark.slow


def test_self_check_passes_and_leaves_the_data_dir_alone(koroku_home: Path) -> None:
    result = run_python(["-m", "koroku_desktop", "--self-check"], {"KOROKU_HOME": str(koroku_home)})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith("koroku self-check: ok")
    # It ran on a temporary data dir: the user's was never created, let alone written.
    assert not koroku_home.exists()


def test_self_check_forces_offscreen(koroku_home: Path) -> None:
    result = run_python(["-m", "koroku_desktop", "--self-check"], {"QT_QPA_PLATFORM": "xcb"})
    assert result.returncode == 0, result.stderr


def test_a_bad_setting_fails_with_the_reason() -> None:
    result = run_python(["-m", "koroku_desktop", "--self-check"], {"KOROKU_MAX_TOOL_CALLS": "0"})
    assert result.returncode == 1
    assert "koroku self-check: FAILED" in result.stderr
    assert "KOROKU_MAX_TOOL_CALLS" in result.stderr


def test_a_missing_sdk_fails_with_the_reason(tmp_path: Path) -> None:
    """A bundle without google.genai (here: an import that breaks) must not pass."""
    stub = tmp_path / "google" / "genai"
    stub.mkdir(parents=True)
    (stub / "__init__.py").write_text("raise ImportError('google.genai is missing (simulated)')\n")
    result = run_python(
        ["-m", "koroku_desktop", "--self-check"], {"PYTHONPATH": f"{tmp_path}:{ROOT}"}
    )
    assert result.returncode == 1
    assert "ImportError: google.genai is missing (simulated)" in result.stderr
