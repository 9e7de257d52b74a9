"""Running due tasks while the app is closed: a systemd user timer, or an XDG autostart
loop where there is no systemd user session (no Qt; `koroku install-desktop` writes them).

`koroku-tasks.timer` fires every minute (`Persistent=true`: a minute missed while the
machine was off or asleep fires at once when it is back) and starts `koroku-tasks.service`
(`Type=oneshot`), which runs `koroku tasks run-due`: with nothing due that exits in a few
tens of milliseconds. Where no systemd user manager runs, `koroku-tasks.desktop` in the
autostart folder starts a shell loop doing the same every minute after login.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from pathlib import Path

from koroku_desktop.fsutil import atomic_write
from koroku_desktop.xdg import exec_line, xdg_config_home

SERVICE = "koroku-tasks.service"
TIMER = "koroku-tasks.timer"
AUTOSTART = "koroku-tasks.desktop"
_PLAIN = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+=:,@")


def systemd_user_dir() -> Path:
    """`$XDG_CONFIG_HOME/systemd/user` (default ~/.config/systemd/user)."""
    return xdg_config_home() / "systemd" / "user"


def tasks_autostart_file() -> Path:
    """`$XDG_CONFIG_HOME/autostart/koroku-tasks.desktop`."""
    return xdg_config_home() / "autostart" / AUTOSTART


def systemd_word(arg: str) -> str:
    """One argument of a systemd `ExecStart=` line: quoted and escaped where needed
    (`%` is a specifier and `$` a variable there: both doubled)."""
    text = arg.replace("%", "%%").replace("$", "$$")
    if text and set(text) <= _PLAIN | {"%", "$"}:
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def service_text(command: list[str]) -> str:
    """The oneshot service that runs `koroku tasks run-due` once."""
    exec_start = " ".join(systemd_word(a) for a in [*command, "tasks", "run-due"])
    return (
        "[Unit]\n"
        "Description=Koroku: run the scheduled tasks that are due\n"
        "\n"
        "[Service]\n"
        "Type=oneshot\n"
        f"ExecStart={exec_start}\n"
    )


def timer_text() -> str:
    """The timer that starts the service every minute, catching up after sleep or power-off."""
    return (
        "[Unit]\n"
        "Description=Koroku: look for due tasks every minute\n"
        "\n"
        "[Timer]\n"
        "OnCalendar=*-*-* *:*:00\n"
        "Persistent=true\n"
        "AccuracySec=1s\n"
        "\n"
        "[Install]\n"
        "WantedBy=timers.target\n"
    )


def autostart_loop_text(command: list[str]) -> str:
    """The autostart entry for a session without systemd: run-due every minute."""
    loop = f"while :; do {shlex.join([*command, 'tasks', 'run-due'])}; sleep 60; done"
    return (
        "[Desktop Entry]\n"
        "Type=Application\n"
        "Name=Koroku tasks\n"
        "Comment=Runs Koroku's scheduled tasks while the app is closed\n"
        f"Exec={exec_line(['sh', '-c', loop])}\n"
        "Icon=koroku\n"
        "Terminal=false\n"
        "NoDisplay=true\n"
        "X-GNOME-Autostart-enabled=true\n"
    )


def systemd_user_session() -> bool:
    """Whether a systemd user manager runs for this session (its private socket exists)."""
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    return bool(runtime) and (Path(runtime) / "systemd" / "private").exists()


def write_units(command: list[str], folder: Path | None = None) -> list[Path]:
    """Write the service and the timer (into `folder`, default the systemd user dir)."""
    target = folder or systemd_user_dir()
    service, timer = target / SERVICE, target / TIMER
    atomic_write(service, service_text(command), mode=0o644)
    atomic_write(timer, timer_text(), mode=0o644)
    return [service, timer]


def enable_timer() -> str:
    """Reload the user manager and start the timer; a sentence saying what happened."""
    systemctl = shutil.which("systemctl")
    if systemctl is None:
        return (
            "systemctl not found: start it with `systemctl --user enable --now koroku-tasks.timer`"
        )
    for args in (["daemon-reload"], ["enable", "--now", TIMER]):
        done = subprocess.run(
            [systemctl, "--user", *args], capture_output=True, text=True, check=False, timeout=30
        )
        if done.returncode != 0:
            return f"`systemctl --user {' '.join(args)}` failed: {done.stderr.strip()}"
    return f"the timer {TIMER} runs every minute"


def install_task_runner(command: list[str]) -> tuple[list[Path], str]:
    """The units always (for a later systemd session), and where there is no systemd user
    session the autostart loop; the files written and a sentence on how tasks will run."""
    written = write_units(command)
    if systemd_user_session():
        return written, enable_timer()
    autostart = tasks_autostart_file()
    atomic_write(autostart, autostart_loop_text(command), mode=0o644)
    return [*written, autostart], "no systemd user session: the autostart entry runs them"


def uninstall_task_runner() -> list[Path]:
    """Stop the timer (where systemd runs) and remove the units and the autostart entry."""
    if systemd_user_session() and shutil.which("systemctl"):
        subprocess.run(
            ["systemctl", "--user", "disable", "--now", TIMER],
            capture_output=True,
            check=False,
            timeout=30,
        )
    removed = []
    for path in (systemd_user_dir() / SERVICE, systemd_user_dir() / TIMER, tasks_autostart_file()):
        if path.is_file() or path.is_symlink():
            path.unlink()
            removed.append(path)
    return removed
