"""Which paths a read must ask about: outside the workspace, and secrets that always ask.

A file read by a tool goes into the log, the search index and the next request to the cloud.
Reading outside the workspace therefore asks like a write does. Some places hold secrets so
plainly that a read there asks every time, even with "always allow": SSH and GnuPG keys,
keyrings, browser profiles, cloud and password-store credentials, and `.env*` files. Paths are
resolved (symlinks followed) first, so a link inside the workspace to `~/.ssh/id_rsa` asks too.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

ReadVerdict = Literal["free", "ask", "always_ask"]

SECRET_DIRS = (
    ".ssh",
    ".gnupg",
    ".local/share/keyrings",
    ".password-store",
    ".mozilla",
    ".thunderbird",
    ".config/google-chrome",
    ".config/chromium",
    ".config/BraveSoftware",
    ".config/microsoft-edge",
    ".config/vivaldi",
    ".config/opera",
    ".var/app/org.mozilla.firefox",
    ".var/app/com.google.Chrome",
    ".aws",
    ".config/gcloud",
    ".kube",
    ".docker",
    ".pki",
    "snap/firefox",
)
"""Folders under the home folder whose files always ask before being read."""

SECRET_FILES = (".netrc", ".pgpass", ".git-credentials")
"""Files under the home folder that always ask."""


def _within(path: Path, folder: Path) -> bool:
    try:
        path.relative_to(folder)
    except ValueError:
        return False
    return True


def _is_secret(path: Path, home: Path) -> bool:
    if path.name.startswith(".env"):
        return True
    if any(_within(path, home / d) for d in SECRET_DIRS):
        return True
    return any(path == home / f for f in SECRET_FILES)


def read_verdict(raw: str, workspace: Path, home: Path | None = None) -> ReadVerdict:
    """`always_ask` for secrets, `ask` outside the workspace, `free` inside it.

    Both the path as given and the path with every symlink resolved are checked.
    """
    home = Path(home or Path.home())
    given = Path(raw).expanduser()
    if not given.is_absolute():
        given = workspace / given
    given = Path(os.path.normpath(given))
    real = given.resolve()
    homes = {home, home.resolve()}
    if any(_is_secret(p, h) for p in (given, real) for h in homes):
        return "always_ask"
    spaces = {workspace, workspace.resolve()}
    if any(_within(real, w) for w in spaces) and any(_within(given, w) for w in spaces):
        return "free"
    return "ask"
