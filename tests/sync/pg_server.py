"""A real PostgreSQL server for the sync tests: initdb + pg_ctl on a temp dir and free port.

PostgreSQL refuses to run as root, so as root (CI, this machine) every server command runs
as the `postgres` user on a folder it owns. Password (scram) auth on 127.0.0.1 only.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

SUPERUSER = "koroku"
PASSWORD = "hub-secret-Xq7"
"""The hub password the tests use: never to be found on disk after a sync."""


def find_bin() -> Path | None:
    """The newest Debian PostgreSQL bin folder, or None when PostgreSQL is not installed."""
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4])
    )
    return Path(found[-1]).parent if found else None


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PgServer:
    """One PostgreSQL cluster in a temp dir (see the module docstring)."""

    def __init__(self, bindir: Path) -> None:
        self.bindir = bindir
        self.root = Path(tempfile.mkdtemp(prefix="koroku-pg-"))
        self.data = self.root / "data"
        self.port = free_port()
        self._as_root = os.geteuid() == 0
        self._databases = 0
        self.running = False

    def _run(self, *args: str) -> None:
        cmd = [str(self.bindir / args[0]), *args[1:]]
        if self._as_root:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
        if done.returncode != 0:
            log = self.root / "log"
            server_log = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            raise RuntimeError(f"{args[0]} failed: {done.stderr}{done.stdout}\n{server_log}")

    def init(self) -> PgServer:
        """initdb with a password-protected superuser."""
        pwfile = self.root / "pw"
        pwfile.write_text(PASSWORD)
        os.chmod(self.root, 0o700)
        if self._as_root:
            shutil.chown(self.root, "postgres", "postgres")
            shutil.chown(pwfile, "postgres", "postgres")
        self._run(
            "initdb",
            "-D",
            str(self.data),
            "-U",
            SUPERUSER,
            f"--pwfile={pwfile}",
            "--auth=scram-sha-256",
            "-E",
            "UTF8",
            "--no-sync",
        )
        pwfile.unlink()
        return self

    def start(self) -> None:
        """Start the server (if stopped) and wait until it accepts connections."""
        if self.running:
            return
        options = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._run(
            "pg_ctl",
            "-D",
            str(self.data),
            "-o",
            options,
            "-l",
            str(self.root / "log"),
            "-w",
            "start",
        )
        self.running = True

    def stop(self) -> None:
        """Stop the server now (connections are cut)."""
        if self.running:
            self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")
            self.running = False

    def destroy(self) -> None:
        """Stop (if running) and delete everything."""
        self.stop()
        shutil.rmtree(self.root, ignore_errors=True)

    def url(self, dbname: str = "postgres") -> str:
        """The hub URL (no password) of one database."""
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{dbname}"

    def new_database(self) -> str:
        """A fresh empty database (one per test); its URL."""
        import psycopg

        self._databases += 1
        name = f"hub{self._databases}"
        with psycopg.connect(self.url(), password=PASSWORD, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")  # type: ignore[arg-type]
        return self.url(name)
