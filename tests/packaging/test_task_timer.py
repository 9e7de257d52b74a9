"""The units that run due tasks while the app is closed: written by `koroku install-desktop`,
checked with `systemd-analyze verify` (Debian's `systemd` package), enabled through
`systemctl --user` where a user manager runs, an autostart loop where none does."""

from __future__ import annotations

import configparser
import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from koroku_desktop import task_timer
from koroku_desktop.cli import main
from koroku_desktop.xdg import koroku_command

ANALYZE = shutil.which("systemd-analyze")
needs_analyze = pytest.mark.skipif(
    ANALYZE is None, reason="systemd-analyze is not installed (Debian's `systemd` package)"
)


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Temporary XDG folders and a runtime dir without a systemd user manager."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    runtime = tmp_path / "runtime"
    runtime.mkdir()
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    return tmp_path / "config"


def verify(*units: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """`systemd-analyze verify --user` on the units (a private runtime dir: no session
    needed), in a clean environment."""
    runtime = tmp_path / "verify-runtime"
    runtime.mkdir(exist_ok=True)
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "XDG_RUNTIME_DIR": str(runtime)}
    assert ANALYZE is not None
    return subprocess.run(
        [ANALYZE, "verify", "--user", *map(str, units)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )


def ini(path: Path) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read(path, encoding="utf-8")
    return parser


@needs_analyze
def test_install_writes_units_systemd_accepts_and_an_autostart_loop(
    config: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["install-desktop"]) == 0
    units = config / "systemd" / "user"
    service, timer = units / "koroku-tasks.service", units / "koroku-tasks.timer"
    checked = verify(service, timer, tmp_path=tmp_path)
    assert checked.returncode == 0, checked.stderr
    assert ini(service)["Service"]["Type"] == "oneshot"
    exec_start = ini(service)["Service"]["ExecStart"]
    assert exec_start.endswith(" tasks run-due") and koroku_command()[0] in exec_start
    assert ini(timer)["Timer"]["Persistent"] == "true"
    assert ini(timer)["Timer"]["OnCalendar"] == "*-*-* *:*:00"
    loop = ini(config / "autostart" / "koroku-tasks.desktop")["Desktop Entry"]["Exec"]
    assert loop.startswith("sh -c ") and "tasks run-due; sleep 60" in loop
    assert "no systemd user session" in capsys.readouterr().out
    assert main(["install-desktop", "--uninstall"]) == 0
    assert not service.exists() and not timer.exists()
    assert not (config / "autostart" / "koroku-tasks.desktop").exists()


@needs_analyze
def test_verify_is_real_a_broken_timer_or_a_missing_binary_fails(tmp_path: Path) -> None:
    folder = tmp_path / "units"
    service, timer = task_timer.write_units(["/nonexistent/koroku"], folder)
    assert "not executable" in verify(service, timer, tmp_path=tmp_path).stderr
    service, timer = task_timer.write_units(koroku_command(), folder)
    timer.write_text(task_timer.timer_text().replace("*-*-* *:*:00", "every minute"))
    assert verify(service, timer, tmp_path=tmp_path).returncode != 0


@needs_analyze
def test_a_command_with_spaces_and_specifiers_is_quoted(tmp_path: Path) -> None:
    odd = tmp_path / "my apps" / "100% koroku"
    odd.parent.mkdir()
    odd.write_text("#!/bin/sh\nexit 0\n")
    odd.chmod(stat.S_IRWXU)
    assert task_timer.systemd_word(str(odd)) == f'"{tmp_path}/my apps/100%% koroku"'
    units = task_timer.write_units([str(odd)], tmp_path / "units")
    checked = verify(*units, tmp_path=tmp_path)
    assert checked.returncode == 0, checked.stderr


def test_with_a_user_manager_the_timer_is_enabled_not_autostarted(
    config: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "runtime" / "systemd").mkdir()
    (tmp_path / "runtime" / "systemd" / "private").touch()
    calls = tmp_path / "systemctl-calls"
    fake = tmp_path / "bin" / "systemctl"
    fake.parent.mkdir()
    fake.write_text(f'#!/bin/sh\necho "$@" >> {calls}\n')
    fake.chmod(stat.S_IRWXU)
    monkeypatch.setenv("PATH", f"{fake.parent}{os.pathsep}{os.environ['PATH']}")
    assert main(["install-desktop"]) == 0
    assert calls.read_text().splitlines() == [
        "--user daemon-reload",
        "--user enable --now koroku-tasks.timer",
    ]
    assert not (config / "autostart" / "koroku-tasks.desktop").exists()
    assert main(["install-desktop", "--uninstall"]) == 0
    assert calls.read_text().splitlines()[-1] == "--user disable --now koroku-tasks.timer"
