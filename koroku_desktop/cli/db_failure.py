"""How a terminal command ends on a database failure: one clear line on stderr (the
`koroku doctor --recover` way out, store/db_errors.py) and exit status 1.

`explain` comes through app/search_session.py, the light part of the composition root, so
that `koroku search` can use this without importing the whole runtime.
"""

from __future__ import annotations

import sys
from pathlib import Path

from koroku_desktop.app.search_session import explain


def database_failed(exc: BaseException, db: Path) -> int:
    """Say what went wrong with the database at `db` and return the exit status (1); an
    error that is not a database failure is raised again as it is."""
    message = explain(exc, db)
    if message is None:
        raise exc
    print(f"koroku: {message}", file=sys.stderr)
    return 1
