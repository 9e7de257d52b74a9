"""packaging/build.py's naming and archive, without running PyInstaller."""

from __future__ import annotations

import importlib.util
import platform
import tarfile
from pathlib import Path
from types import ModuleType

from koroku_desktop import __version__
from tests.packaging.conftest import ROOT


def load(name: str) -> ModuleType:
    """A script from packaging/ (a folder of scripts, not a package) as a module."""
    spec = importlib.util.spec_from_file_location(f"koroku_{name}", ROOT / "packaging" / name)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_archive_is_named_after_version_and_platform() -> None:
    build = load("build.py")
    assert build.version() == __version__
    expected = f"koroku-{__version__}-{platform.system().lower()}-{platform.machine()}.tar.gz"
    assert build.archive_name() == expected


def test_the_archive_holds_the_bundle_folder(tmp_path: Path) -> None:
    build = load("build.py")
    bundle = tmp_path / "koroku"
    (bundle / "_internal").mkdir(parents=True)
    (bundle / "koroku").write_text("#!/bin/sh\n")
    (bundle / "koroku").chmod(0o755)
    target = tmp_path / "out.tar.gz"
    build.make_archive(bundle, target)
    with tarfile.open(target) as tar:
        members = {m.name: m for m in tar.getmembers()}
    assert set(members) == {"koroku", "koroku/_internal", "koroku/koroku"}
    assert members["koroku/koroku"].mode & 0o111


def test_the_spec_keeps_dev_tools_and_sdk_tests_out() -> None:
    spec = (ROOT / "packaging" / "koroku.spec").read_text(encoding="utf-8")
    for name in ('"pytest"', '"hypothesis"', '"mypy"', '"google.genai.tests"', "WebEngine"):
        assert name in spec
    assert 'collect_submodules("google.genai", filter=' in spec
