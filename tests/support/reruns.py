"""Why a test was run again: the failure of each rerun test, printed at the end of the run.

The suite reruns a failed test (`--reruns 2` in pyproject's addopts) so one slow moment on a
loaded machine does not fail CI; `-rR` names those tests only. Without the first failure's
traceback a flaky test could not be told from a slow one, so it is printed here, short.
"""

from __future__ import annotations

import pytest

SHOWN_CHARS = 4_000
"""The end of each failure's report (where the assertion and its values are)."""


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    reports = terminalreporter.stats.get("rerun", [])
    if not reports:
        return
    terminalreporter.write_sep("=", "why tests were run again")
    for report in reports:
        longrepr = getattr(report, "longrepr", None)
        # The traceback alone: the captured output and Qt messages would drown it.
        trace = getattr(longrepr, "reprtraceback", None)
        text = str(trace if trace is not None else longrepr or "(no report)")
        terminalreporter.write_sep("-", report.nodeid)
        terminalreporter.write_line(text[-SHOWN_CHARS:])
