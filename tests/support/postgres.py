"""A real PostgreSQL hub for the sync tests: one cluster per session, a fresh database per test.

Every test that uses the cluster is put in the `postgres` xdist group (`--dist loadgroup`),
so one worker runs them all on one cluster, one after another: some stop and restart it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests.sync.pg_server import PgServer, find_bin

GROUP = "postgres"


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


@pytest.hookimpl(tryfirst=True)  # before xdist reads the group marks
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Put every test that reaches the cluster in the one `postgres` group."""
    for item in items:
        if "pg_server" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.xdist_group(GROUP))
