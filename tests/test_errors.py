"""One root for Koroku's errors: every error type of the package is a `KorokuError` of one
of the kinds the front ends turn into messages, and the hub's errors are Koroku's own."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import psycopg
import pytest

import koroku_desktop
from koroku_desktop.cli import exit_code
from koroku_desktop.domain.errors import (
    ConfigError,
    KorokuError,
    RefusedError,
    StorageError,
    SyncError,
)
from koroku_desktop.sync.config import HubAddress, check_url
from koroku_desktop.sync.hub import HubError, PostgresHub
from tests.sync.pg_server import free_port

INTERNAL = {
    "koroku_desktop.cli.session.CliExit": "an exit code on its way out, already printed",
    "koroku_desktop.agent.embedding.EmbeddingStopped": "stops the background worker",
    "koroku_desktop.domain.upcasting.UpcastError": "a row that cannot be read is damage",
    "koroku_desktop.maintenance.tutorial_parts.PartShapeError": "a tutorial row is skipped",
    "koroku_desktop.maintenance.tutorial_import._Skip": "a tutorial row is skipped",
    "koroku_desktop.cli.mcp_elicit._Stop": "the person declined or cancelled a server's form",
}
"""Exceptions that never reach a person as an error: control flow inside one module."""


def error_types() -> dict[str, type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(koroku_desktop.__path__, "koroku_desktop."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__ == info.name
            ):
                found[f"{info.name}.{name}"] = value
    return found


def test_every_error_of_the_package_is_a_koroku_error() -> None:
    types = error_types()
    assert set(INTERNAL) <= set(types)  # the exceptions named still exist
    strays = sorted(
        n for n, t in types.items() if n not in INTERNAL and not issubclass(t, KorokuError)
    )
    assert strays == []


def test_the_kinds_keep_their_builtin_bases() -> None:
    from koroku_desktop.agent.turn_gate import TurnBusyError
    from koroku_desktop.app.config import SettingsError
    from koroku_desktop.blobs.blob_store import MissingBlob
    from koroku_desktop.store.db_errors import DatabaseUnavailable

    assert issubclass(SettingsError, ConfigError) and issubclass(SettingsError, ValueError)
    assert issubclass(DatabaseUnavailable, StorageError)
    assert issubclass(MissingBlob, StorageError) and issubclass(MissingBlob, LookupError)
    assert issubclass(TurnBusyError, RefusedError) and issubclass(TurnBusyError, RuntimeError)
    assert exit_code(SettingsError("bad")) == 2
    assert exit_code(DatabaseUnavailable("gone")) == 1


def test_an_unreachable_hub_raises_koroku_own_error_with_psycopgs_as_cause() -> None:
    address: HubAddress = check_url(f"postgresql://me@127.0.0.1:{free_port()}/koroku")
    hub = PostgresHub(address, "device-a")
    with pytest.raises(HubError) as caught:
        hub.last_seq()
    assert isinstance(caught.value, SyncError) and not isinstance(caught.value, psycopg.Error)
    assert isinstance(caught.value.__cause__, psycopg.OperationalError)
    assert str(caught.value)  # the reason, for the status bar and `koroku sync`
    hub.close()
