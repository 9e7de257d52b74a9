"""The layer rule holds by construction: import-linter contracts and a Qt-free core.

The rule is described in the README's Architecture section (the project's design notes live
outside this repository, in ../shared/DESIGN.md, and are not needed to run these tests).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_import_linter_contracts_hold() -> None:
    lint_imports = Path(sys.executable).parent / "lint-imports"
    result = subprocess.run(
        [str(lint_imports), "--no-cache"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout, result.stdout


def test_core_runs_without_qt() -> None:
    """Importing every core module (and the entry point, and running the terminal front end
    without the desktop one handed to it) never loads Qt."""
    code = (
        "import sys, importlib, pkgutil\n"
        "import koroku_desktop\n"
        "for m in pkgutil.walk_packages(koroku_desktop.__path__, 'koroku_desktop.'):\n"
        "    if m.name.startswith('koroku_desktop.ui') or m.name.endswith('__main__'):\n"
        "        continue\n"
        "    importlib.import_module(m.name)\n"
        "from koroku_desktop.cli import build_parser, main\n"
        "build_parser()\n"
        "assert main(['quick-ask']) == 2  # the cli alone cannot start the desktop app\n"
        "bad = sorted(n for n in sys.modules if n.startswith(('PySide6', 'qasync')))\n"
        "assert not bad, bad\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr


def test_no_update_or_delete_on_events() -> None:
    """The log is append-only: no UPDATE or DELETE statement on `events` in the code.

    One exception: migration m004 fills the id columns it adds on rows written before them
    (`UPDATE events SET event_id = ?, turn_id = ?, writer = ?`); payloads are never touched.
    And sync's bookkeeping: an event's hub position, set once from NULL (store/log/event_log.py;
    by seq for rows without an event id, store/sync_ledger.py).
    """
    statement = re.compile(r"\b(UPDATE|DELETE\s+FROM)\s+[\"'`]?events\b(?!_)", re.IGNORECASE)
    allowed = {
        "migrations.py": "UPDATE events SET event_id = ?, turn_id = ?, writer = ? WHERE seq = ?",
        "event_log.py": "UPDATE events SET hub_seq = ? WHERE event_id = ? AND hub_seq IS NULL",
        "sync_ledger.py": (
            "UPDATE events SET hub_seq = ? WHERE seq = ? AND event_id IS NULL AND hub_seq IS NULL"
        ),
    }
    offenders = [
        f"{path.relative_to(ROOT)}: {match.group(0)}"
        for path in (ROOT / "koroku_desktop").rglob("*.py")
        for match in statement.finditer(path.read_text(encoding="utf-8"))
        if not (
            path.name in allowed
            and path.read_text(encoding="utf-8")[match.start() :].startswith(allowed[path.name])
        )
    ]
    assert not offenders


def test_the_append_only_check_would_catch_a_violation() -> None:
    statement = re.compile(r"\b(UPDATE|DELETE\s+FROM)\s+[\"'`]?events\b(?!_)", re.IGNORECASE)
    assert statement.search('conn.execute("DELETE FROM events WHERE seq = 1")')
    assert statement.search("UPDATE events SET payload = ?")
    assert not statement.search("DELETE FROM events_fts_pending")
