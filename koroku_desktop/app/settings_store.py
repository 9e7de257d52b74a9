"""SettingsStore: the one reader and writer of settings.json.

It holds two views of the settings: the user's own values (what the file says) and the
effective ones (those plus the KOROKU_* environment overrides), and only ever writes the
user's values. Every change is a read-modify-write of the file as it is now, so a change
another process made meanwhile (`koroku grants --revoke`, an "always allow" granted in a
`koroku chat`) is kept, not clobbered. Listeners (the runtime) hear the new effective
settings after each change and apply them live.

Qt-specific window state (popup size, "hint shown" flags) lives in `ui.ini` instead, written
by QSettings in the desktop app: it is not a setting a person chooses, the terminal front end
has no use for it, and keeping it out means the core never needs to know about it.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from koroku_desktop.app.config import ENV_OVERRIDES, Paths, Settings, apply_env
from koroku_desktop.fsutil import atomic_write

log = logging.getLogger(__name__)

Change = Mapping[str, Any] | Callable[[Settings], Mapping[str, Any]]
"""New values by field name, or a function from the stored settings (as now on disk) to them."""

SettingsListener = Callable[[Settings], None]


def read_settings_file(file: Path) -> Settings:
    """The settings as saved in `file` (no environment overrides).

    A corrupt file is kept aside as `settings.json.bad` and defaults are used.
    """
    if not file.exists():
        return Settings()
    try:
        return Settings.model_validate(json.loads(file.read_text(encoding="utf-8")))
    except (OSError, ValueError, ValidationError) as exc:
        log.warning("%s is unreadable (%s); using defaults", file.name, exc)
        with contextlib.suppress(OSError):
            os.replace(file, file.with_suffix(file.suffix + ".bad"))
        return Settings()


def overriding_variable(field_name: str) -> str | None:
    """The environment variable that decides `field_name` now, if one is set."""
    var = ENV_OVERRIDES.get(field_name)
    return var if var is not None and var in os.environ else None


class SettingsStore:
    """The user's settings (settings.json) and the effective ones (plus the environment).

    Raises `SettingsError` when built if an environment override is invalid.
    """

    def __init__(self, file: Path) -> None:
        self.file = file
        self._stored = read_settings_file(file)
        self._effective = apply_env(self._stored)
        self._listeners: list[SettingsListener] = []

    @classmethod
    def open(cls, paths: Paths) -> SettingsStore:
        """The store of the data dir at `paths`."""
        return cls(paths.settings_file)

    @property
    def stored(self) -> Settings:
        """The user's own values, as last read or written (a copy)."""
        return self._stored.model_copy(deep=True)

    @property
    def effective(self) -> Settings:
        """The values in use: the user's, with the environment's overrides (a copy)."""
        return self._effective.model_copy(deep=True)

    def subscribe(self, listener: SettingsListener) -> None:
        """Call `listener` with the effective settings after every change or reload."""
        self._listeners.append(listener)

    def reload(self) -> Settings:
        """Read the file again (another process may have changed it); the effective settings."""
        self._take(read_settings_file(self.file))
        return self.effective

    def update(self, change: Change) -> Settings:
        """Apply `change` to the file as it is now, save the user's values, tell the listeners.

        Fields the environment decides are left as stored (their overrides never reach the
        file). Raises pydantic's `ValidationError` for a bad value (nothing is saved) and
        `OSError` when the file cannot be written. Returns the new effective settings.
        """
        current = read_settings_file(self.file)
        values = change(current) if callable(change) else change
        user_values = {k: v for k, v in values.items() if overriding_variable(k) is None}
        updated = Settings.model_validate({**current.model_dump(), **user_values})
        text = json.dumps(updated.model_dump(mode="json"), indent=2, sort_keys=True)
        atomic_write(self.file, text + "\n")
        self._take(updated)
        return self.effective

    def _take(self, stored: Settings) -> None:
        self._stored = stored
        self._effective = apply_env(stored)
        for listener in list(self._listeners):
            listener(self.effective)


def add_grant(tool: str) -> Callable[[Settings], Mapping[str, Any]]:
    """A change that adds an 'always allow' grant for `tool` (kept once)."""

    def change(stored: Settings) -> Mapping[str, Any]:
        grants = stored.always_allow
        return {"always_allow": grants if tool in grants else [*grants, tool]}

    return change


def remove_grants(tools: set[str] | None) -> Callable[[Settings], Mapping[str, Any]]:
    """A change that revokes the 'always allow' grants of `tools` (None: every one)."""

    def change(stored: Settings) -> Mapping[str, Any]:
        keep = [] if tools is None else [t for t in stored.always_allow if t not in tools]
        return {"always_allow": keep}

    return change
