"""A private Xvfb for tests that need a real X server (the real-window layer, X11 capture)."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager

import pytest


@contextmanager
def running_xvfb(screen: str) -> Iterator[str]:
    """Xvfb with one `screen` (e.g. "800x600x24") on a display number it picks itself
    (-displayfd, so parallel workers never collide); yields `:N`, stops it afterwards."""
    binary = shutil.which("Xvfb")
    if binary is None:
        pytest.skip("Xvfb is not installed (Debian package xvfb)")
    read_fd, write_fd = os.pipe()
    proc = subprocess.Popen(
        [binary, "-displayfd", str(write_fd), "-screen", "0", screen, "-nolisten", "tcp"],
        pass_fds=(write_fd,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(write_fd)
    with os.fdopen(read_fd) as pipe:
        number = pipe.readline().strip()  # written once the server accepts clients
    if not number:
        proc.kill()
        proc.wait()
        pytest.fail("Xvfb did not report its display")
    try:
        yield f":{number}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
