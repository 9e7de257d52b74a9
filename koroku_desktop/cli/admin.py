"""`koroku login` and `koroku grants`: the key and the standing tool permissions."""

from __future__ import annotations

import argparse
import getpass
import sys
from typing import Any

from koroku_desktop.app.config import (
    KeyringUnavailable,
    SettingsError,
    default_paths,
    keyring_backend_name,
    store_api_key,
)
from koroku_desktop.app.settings_store import SettingsStore, remove_grants
from koroku_desktop.cli.refusal import refused


def register(sub: Any) -> None:
    """Add the admin commands."""
    login = sub.add_parser("login", help="store a Gemini API key in the OS keyring")
    login.set_defaults(handler=cmd_login)

    grants = sub.add_parser("grants", help="list or revoke 'always allow' tool grants")
    grants.add_argument(
        "--revoke",
        metavar="TOOL",
        action="append",
        default=[],
        help="revoke the grant for TOOL (repeatable; `all` for every one)",
    )
    grants.set_defaults(handler=cmd_grants)


def cmd_login(args: argparse.Namespace) -> int:
    """Ask for the key without echo and store it in the keyring (checked for first)."""
    if keyring_backend_name() is None:
        print(
            "koroku login: no OS keyring is available here, so the key cannot be stored safely"
            " (Koroku never writes it to a file). Set GEMINI_API_KEY (or GOOGLE_API_KEY) in"
            " your environment instead, for example in ~/.profile.",
            file=sys.stderr,
        )
        return 2
    try:
        key = getpass.getpass("Gemini API key (input hidden): ")
    except (EOFError, KeyboardInterrupt):
        print("\nkoroku login: no key given", file=sys.stderr)
        return 2
    if not key.strip():
        print("koroku login: no key given", file=sys.stderr)
        return 2
    try:
        store_api_key(key)
    except KeyringUnavailable as exc:
        return refused("login", exc)
    print("Key stored in your OS keyring (service 'koroku').")
    return 0


def cmd_grants(args: argparse.Namespace) -> int:
    """List the 'always allow' grants, or revoke some."""
    try:
        store = SettingsStore.open(default_paths())
    except SettingsError as exc:
        return refused("grants", exc)
    settings = store.stored
    if args.revoke:
        revoke = set(args.revoke)
        before = set(settings.always_allow)
        after = store.update(remove_grants(None if "all" in revoke else revoke))
        for tool in sorted(before - set(after.always_allow)):
            print(f"revoked: {tool}")
        unknown = revoke - before - {"all"}
        for tool in sorted(unknown):
            print(f"no grant for {tool}", file=sys.stderr)
        return 0
    if not settings.always_allow:
        print("No tool is always allowed. (Grant one with 'Always allow' when Koroku asks.)")
    for tool in settings.always_allow:
        print(tool)
    return 0
