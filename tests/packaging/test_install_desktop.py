"""`koroku install-desktop [--uninstall]` with a temporary XDG_DATA_HOME, and the resources."""

from __future__ import annotations

import configparser
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from koroku_desktop import xdg as desktop_xdg
from koroku_desktop.cli import main
from tests.packaging.conftest import ROOT, run_python

SIZES = (16, 22, 24, 32, 48, 64, 128, 256)


@pytest.fixture
def xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temporary XDG_DATA_HOME (and XDG_CONFIG_HOME beside it), and a runtime dir with no
    systemd user manager (install never touches the developer's own session)."""
    data = tmp_path / "xdg-data"
    monkeypatch.setenv("XDG_DATA_HOME", str(data))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "xdg-runtime"))
    return data


def read_desktop(path: Path) -> configparser.ConfigParser:
    """A .desktop file as sections and keys (case kept)."""
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read(path, encoding="utf-8")
    return parser


def png_size(path: Path) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", path
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_install_writes_the_launcher_and_every_icon(
    xdg: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["install-desktop"]) == 0
    launcher = xdg / "applications" / "koroku.desktop"
    entry = read_desktop(launcher)
    command = desktop_xdg.exec_line(desktop_xdg.koroku_command())
    assert entry["Desktop Entry"]["Exec"] == command
    assert entry["Desktop Entry"]["Icon"] == "koroku"
    assert entry["Desktop Action quick-ask"]["Exec"] == f"{command} quick-ask"
    for size in SIZES:
        icon = xdg / "icons" / "hicolor" / f"{size}x{size}" / "apps" / "koroku.png"
        assert png_size(icon) == (size, size)
    svg = xdg / "icons" / "hicolor" / "scalable" / "apps" / "koroku.svg"
    assert svg.read_bytes() == (ROOT / "resources" / "icons" / "app.svg").read_bytes()
    assert "Installed the launcher" in capsys.readouterr().out


def test_uninstall_removes_exactly_what_install_wrote(
    xdg: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = xdg / "icons" / "hicolor" / "48x48" / "apps" / "other.png"
    other.parent.mkdir(parents=True)
    other.write_bytes(b"someone else's icon")
    assert main(["install-desktop"]) == 0
    assert main(["install-desktop", "--uninstall"]) == 0
    assert not (xdg / "applications" / "koroku.desktop").exists()
    assert not list(xdg.rglob("koroku.*"))
    assert other.read_bytes() == b"someone else's icon"
    out = capsys.readouterr().out
    assert (
        out.count("removed ") == 1 + len(SIZES) + 1 + 3
    )  # + the tasks timer, its service, autostart


def test_uninstall_also_removes_the_start_at_login_entry(xdg: Path) -> None:
    entry = xdg.parent / "xdg-config" / "autostart" / "koroku.desktop"
    entry.parent.mkdir(parents=True)
    entry.write_text("[Desktop Entry]\nExec=koroku\n")
    assert main(["install-desktop", "--uninstall"]) == 0
    assert not entry.exists()


def test_uninstall_with_nothing_installed_says_so(
    xdg: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["install-desktop", "--uninstall"]) == 0
    assert "Nothing to remove" in capsys.readouterr().out


def test_install_twice_is_harmless(xdg: Path) -> None:
    assert main(["install-desktop"]) == 0
    first = (xdg / "applications" / "koroku.desktop").read_text()
    assert main(["install-desktop"]) == 0
    assert (xdg / "applications" / "koroku.desktop").read_text() == first
    assert not list(xdg.rglob("*.tmp"))


def test_xdg_data_home_defaults_to_local_share(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    for value in (None, "", "relative/path"):
        if value is None:
            monkeypatch.delenv("XDG_DATA_HOME", raising=False)
        else:
            monkeypatch.setenv("XDG_DATA_HOME", value)
        assert desktop_xdg.xdg_data_home() == tmp_path / ".local" / "share"


def test_the_command_is_the_frozen_binary_when_frozen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    binary = tmp_path / "dist" / "koroku" / "koroku"
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "executable", str(binary))
    assert desktop_xdg.koroku_command() == [str(binary)]


def test_the_command_is_the_script_on_path_else_python_m(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = tmp_path / "bin" / "koroku"
    script.parent.mkdir()
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", str(script.parent))
    assert desktop_xdg.koroku_command() == [str(script)]
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert desktop_xdg.koroku_command() == [sys.executable, "-m", "koroku_desktop"]


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (["/usr/bin/koroku"], "/usr/bin/koroku"),
        (["/opt/My Apps/koroku", "quick-ask"], '"/opt/My Apps/koroku" quick-ask'),
        (["/opt/100%/koroku"], "/opt/100%%/koroku"),
        (['/tmp/a"b$c/koroku'], '"/tmp/a\\\\"b\\\\$c/koroku"'),
    ],
)
def test_exec_lines_are_quoted_as_the_spec_says(argv: list[str], line: str) -> None:
    assert desktop_xdg.exec_line(argv) == line


def test_the_desktop_file_is_valid(xdg: Path) -> None:
    entry = read_desktop(ROOT / "resources" / "koroku.desktop")
    main_entry = entry["Desktop Entry"]
    assert main_entry["Type"] == "Application"
    assert main_entry["Exec"] == "koroku"
    assert main_entry["Icon"] == "koroku"
    assert main_entry["Categories"].endswith(";")
    assert main_entry["Actions"] == "quick-ask;"
    assert entry["Desktop Action quick-ask"]["Exec"] == "koroku quick-ask"
    validator = shutil.which("desktop-file-validate")
    if validator:
        assert main(["install-desktop"]) == 0
        for path in (ROOT / "resources" / "koroku.desktop", xdg / "applications/koroku.desktop"):
            result = subprocess.run([validator, str(path)], capture_output=True, text=True)
            assert result.returncode == 0, result.stdout + result.stderr


def test_the_committed_pngs_have_every_size() -> None:
    folder = ROOT / "resources" / "icons" / "hicolor"
    assert sorted(p.parent.name for p in folder.glob("*/koroku.png")) == sorted(
        f"{n}x{n}" for n in SIZES
    )
    for size in SIZES:
        assert png_size(folder / f"{size}x{size}" / "koroku.png") == (size, size)


def test_render_icons_draws_the_svg_at_each_size(tmp_path: Path) -> None:
    code = (
        "import sys; sys.path.insert(0, 'packaging')\n"
        "from pathlib import Path\n"
        "import render_icons\n"
        "render_icons.render(render_icons.SVG, Path(sys.argv[1]), (16, 48))\n"
    )
    result = run_python(["-c", code, str(tmp_path)])
    assert result.returncode == 0, result.stderr
    assert png_size(tmp_path / "16x16" / "koroku.png") == (16, 16)
    assert png_size(tmp_path / "48x48" / "koroku.png") == (48, 48)


def test_install_desktop_never_loads_qt(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from koroku_desktop.cli import main\n"
        "assert main(['install-desktop']) == 0\n"
        "assert not [m for m in sys.modules if m.startswith(('PySide6', 'qasync'))]\n"
    )
    result = run_python(["-c", code], {"XDG_DATA_HOME": str(tmp_path)})
    assert result.returncode == 0, result.stderr
