"""Fixtures for the tools tests: a workspace and a data dir in tmp_path."""

from __future__ import annotations

from pathlib import Path

import pytest

from koroku_desktop.tools.base import ToolContext


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """An empty workspace folder."""
    path = tmp_path / "workspace"
    path.mkdir()
    return path


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    """An empty data folder (memory files live in data_dir/memory)."""
    path = tmp_path / "data"
    path.mkdir()
    return path


@pytest.fixture
def ctx(workspace: Path, data_dir: Path) -> ToolContext:
    """A tool context over the workspace and data dir, without a log search."""
    return ToolContext(workspace=workspace, data_dir=data_dir)
