"""A real PostgreSQL hub for the sync tests: one cluster per session, a fresh database per test.

A session fixture is made once per pytest-xdist worker, so each worker has a cluster of its
own (its own directory and free port) and runs its tests on it one after another. A test that
stops and restarts the cluster therefore disturbs no other worker's test, and the PostgreSQL
tests spread over every worker instead of queueing on one (they were a 15-minute group).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests.sync.pg_server import PgServer, find_bin


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    """One PostgreSQL server for the session (skipped only where it is not installed)."""
    bindir = find_bin()
    if bindir is None:
        if os.environ.get("CI"):
            pytest.fail("PostgreSQL is missing in CI: .ci/run must apt-get install postgresql")
        pytest.skip("PostgreSQL is not installed (apt-get install postgresql)")
    server = PgServer(bindir).init()
    server.start()
    try:
        yield server
    finally:
        server.destroy()


@pytest.fixture
def hub(pg_server: PgServer) -> Iterator[PgServer]:
    """The server, running (a test that stops it gets it restarted afterwards)."""
    pg_server.start()
    yield pg_server
    pg_server.start()


@pytest.fixture
def hub_url(hub: PgServer) -> str:
    """A fresh hub database for this test."""
    return hub.new_database()
