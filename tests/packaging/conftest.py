"""Helpers for the packaging tests: run `python -m koroku_desktop` or Python code from source."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_python(
    args: list[str], env: dict[str, str] | None = None, timeout: float = 90
) -> subprocess.CompletedProcess[str]:
    """Run this interpreter with `args` from the repository root, offscreen, with `env` added."""
    full_env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONPATH=str(ROOT))
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=full_env, capture_output=True, text=True,
        timeout=timeout, check=False,
    )  # fmt: skip
