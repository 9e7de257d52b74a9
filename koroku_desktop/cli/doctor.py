"""`koroku doctor`: check the database, list its backups, and salvage a damaged one."""

from __future__ import annotations

import argparse
import sys
from datetime import datetime
from typing import Any

from koroku_desktop.app.config import data_dir
from koroku_desktop.app.runtime import DB_ERRORS, check_database, recover_database


def register(sub: Any) -> None:
    """Add `koroku doctor`."""
    doctor = sub.add_parser("doctor", help="check the database; --recover salvages a damaged one")
    doctor.add_argument(
        "--recover",
        action="store_true",
        help="copy every readable event into a fresh database (the original is kept aside)",
    )
    doctor.set_defaults(handler=cmd_doctor)


def _span(first: int, last: int) -> str:
    if last < 0:
        return f"#{first} onward"
    return f"#{first}" if first == last else f"#{first}–#{last}"


def cmd_doctor(args: argparse.Namespace) -> int:
    """Print the check; exit 0 when healthy (or recovered), 1 when problems remain."""
    db = data_dir() / "koroku.db"
    report = check_database(db)
    print(f"database: {db}" + (f" ({report.size:,} bytes)" if report.exists else ""))
    verdict = report.integrity.splitlines() or ["?"]
    print(f"integrity check: {verdict[0]}")
    for line in verdict[1:6]:
        print(f"  {line}")
    if report.schema:
        print("schema: damaged")
        for problem in report.schema[:6]:
            print(f"  {problem}")
    if report.exists:
        unreadable = ", some rows unreadable" if report.unreadable else ""
        print(f"events: {report.good:,} good, {report.damaged:,} damaged{unreadable}")
    if report.backups:
        print("backups (taken before migrations):")
        for backup in report.backups:
            stat = backup.stat()
            stamp = datetime.fromtimestamp(stat.st_mtime).strftime("%Y-%m-%d %H:%M")
            print(f"  {backup}  ({stat.st_size:,} bytes, {stamp})")
    else:
        print("backups: none")
    if not report.exists or report.healthy:
        return 0
    if not args.recover:
        print(
            "Run `koroku doctor --recover` to copy every readable event into a fresh database "
            "(the damaged file is kept aside), or copy a backup over koroku.db.",
            file=sys.stderr,
        )
        return 1
    try:
        result = recover_database(db)
    except DB_ERRORS as exc:
        print(f"koroku doctor: recovery failed: {exc}", file=sys.stderr)
        return 1
    lost = ", ".join(_span(a, b) for a, b in result.lost_ranges[:10])
    print(f"recovered {result.recovered:,} event(s) into a fresh {db.name}")
    if lost:
        print(f"unreadable and lost: {lost}")
    if result.set_aside:
        print(f"damaged and set aside ({len(result.set_aside):,}, still in the original):")
        for seq, why in result.set_aside[:10]:
            print(f"  #{seq}: {why}")
        if len(result.set_aside) > 10:
            print(f"  … and {len(result.set_aside) - 10:,} more")
    print(f"the damaged original is kept as {result.original_kept_as}")
    return 0
