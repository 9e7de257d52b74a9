"""The real `koroku` command in a subprocess, on this test's data dir and environment."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.waits import wait_until

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Koroku:
    """Runs `python -m koroku_desktop ...` with this test's data dir and environment."""

    home: Path
    workspace: Path

    def env(self, **extra: str) -> dict[str, str]:
        env = dict(os.environ)
        env["KOROKU_WORKSPACE"] = str(self.workspace)
        env["PYTHONPATH"] = str(ROOT)
        env.update(extra)
        return env

    def run(
        self, *args: str, stdin: str = "", timeout: float = 60, **env: str
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "koroku_desktop", *args],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=timeout,
            env=self.env(**env),
            cwd=self.workspace,
            check=False,
        )

    def popen(self, *args: str, **env: str) -> subprocess.Popen[str]:
        return popen_koroku(args, self.env(**env), self.workspace)

    def sql(self, query: str, params: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
        with sqlite3.connect(self.home / "koroku.db") as conn:
            return list(conn.execute(query, params))


def popen_koroku(
    args: Sequence[str], env: dict[str, str], cwd: Path | None = None
) -> subprocess.Popen[str]:
    """`python -m koroku_desktop *args` started (no stdin; stdout and stderr piped)."""
    return subprocess.Popen(
        [sys.executable, "-m", "koroku_desktop", *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=cwd,
    )


@pytest.fixture
def koroku(koroku_home: Path, tmp_path: Path) -> Koroku:
    """`koroku` on this test's data dir, run in `<tmp>/workspace`."""
    workspace = tmp_path / "workspace"
    workspace.mkdir(exist_ok=True)
    return Koroku(koroku_home, workspace)


def wait_for(path: Path, timeout: float = 60) -> None:
    """Wait until `path` exists (a subprocess's sign that it got somewhere)."""
    wait_until(path.exists, timeout, interval=0.05, message=f"{path} never appeared")
