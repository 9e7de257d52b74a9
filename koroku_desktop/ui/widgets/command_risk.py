"""Which shell commands deserve a second look before they run: recursive deletes, root,
raw disk writes, overwriting an existing file, force-pushes. Pure text rules (no Qt), so the
approval card can style the dangerous ones and the rules can be tested on their own."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\brm\s+(-\w*[rR]\w*|--recursive)\b"), "deletes files recursively (rm -r)"),
    (re.compile(r"\brm\s+(-\w*f\w*|--force)\b"), "deletes without asking (rm -f)"),
    (re.compile(r"(^|[;&|]\s*|\s)sudo\b"), "runs as root (sudo)"),
    (re.compile(r"(^|[;&|]\s*)\s*su\s"), "switches user (su)"),
    (re.compile(r"\bdd\b[^\n]*\bof="), "writes raw bytes (dd of=)"),
    (re.compile(r"\bmkfs(\.\w+)?\b"), "formats a file system (mkfs)"),
    (
        re.compile(r"\b(chmod|chown|chgrp)\s+(-\w*R\w*|--recursive)\b"),
        "changes permissions recursively",
    ),
    (
        re.compile(r"\bgit\s+push\b[^\n]*(\s--force\b|\s-f\b|\s--force-with-lease\b)"),
        "rewrites remote history (git push --force)",
    ),
    (
        re.compile(r"\bgit\s+(reset\s+--hard|clean\s+-\w*f)"),
        "discards local changes (git reset --hard / clean -f)",
    ),
    (re.compile(r"\bfind\b[^\n]*\s-delete\b"), "deletes what find matches"),
    (re.compile(r"\b(shred|wipefs)\b"), "destroys data"),
    (re.compile(r">\s*/dev/(sd|nvme|hd|vd)\w*"), "writes to a disk device"),
    (re.compile(r":\(\)\s*\{\s*:\|:&\s*\};:"), "a fork bomb"),
    (re.compile(r"\b(curl|wget)\b[^\n|]*\|\s*(sudo\s+)?(ba|z)?sh\b"), "runs a downloaded script"),
)
_REDIRECT = re.compile(r"(?<![>&\d])>(?!>|&)\s*([^\s;&|<>]+)")


def overwritten_files(command: str, cwd: Path) -> list[Path]:
    """Existing files a plain `>` redirect in `command` would truncate."""
    out: list[Path] = []
    for match in _REDIRECT.finditer(command):
        try:
            target = shlex.split(match.group(1))[0]
        except (ValueError, IndexError):
            continue
        if target.startswith("/dev/"):
            continue
        path = Path(target).expanduser()
        path = path if path.is_absolute() else cwd / path
        if path.is_file():
            out.append(path)
    return out


def destructive_reasons(command: str, cwd: Path) -> list[str]:
    """Why `command` (run in `cwd`) could destroy something, in words; empty when it looks safe.
    A line continued with a backslash is one command (`dd … \\⏎ of=/dev/sdb` writes a disk)."""
    command = re.sub(r"\\\r?\n", " ", command)
    reasons = [why for rule, why in _RULES if rule.search(command)]
    reasons += [f"overwrites the existing file {p.name}" for p in overwritten_files(command, cwd)]
    return reasons
