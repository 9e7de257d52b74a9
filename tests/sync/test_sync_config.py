"""The hub URL check: TLS required off this machine, no password in the URL, clear errors."""

from __future__ import annotations

import pytest

from koroku_desktop.sync.config import SyncConfigError, check_url


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://me@localhost/koroku",
        "postgresql://me@127.0.0.1:5433/koroku",
        "postgresql://me@[::1]:5432/koroku",
        "postgresql://me@%2Fvar%2Frun%2Fpostgresql/koroku",
        "postgresql://me@hub.example.org/koroku?sslmode=require",
        "postgres://me@hub.example.org:6432/koroku?sslmode=verify-full",
    ],
)
def test_accepted_urls(url: str) -> None:
    address = check_url(url, "pw")
    assert "pw" not in address.display() and "pw" not in repr(address)
    assert "password=pw" in address.conninfo()


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("postgresql://me@hub.example.org/koroku", "without TLS"),
        ("postgresql://me@hub.example.org/koroku?sslmode=prefer", "without TLS"),
        ("postgresql://me@10.0.0.2/koroku?sslmode=disable", "without TLS"),
        ("postgresql://me:secret@localhost/koroku", "must not contain the password"),
        ("postgresql://me@localhost", "must name a database"),
        ("mysql://me@localhost/koroku", "must look like"),
        ("postgresql://me@localhost/koroku?bogus_option=1", "cannot be read"),
    ],
)
def test_refused_urls(url: str, why: str) -> None:
    with pytest.raises(SyncConfigError, match=why):
        check_url(url)


def test_display_names_the_hub_without_secrets() -> None:
    address = check_url("postgresql://me@hub.example.org:6432/koroku?sslmode=require", "s3cret")
    assert address.display() == "me@hub.example.org:6432/koroku"
