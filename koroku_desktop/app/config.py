"""Settings, data paths and the API key: where Koroku keeps things and how they are chosen."""

from __future__ import annotations

import logging
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from koroku_desktop.app.paths import Paths as Paths
from koroku_desktop.app.paths import data_dir as data_dir
from koroku_desktop.app.paths import default_paths as default_paths
from koroku_desktop.domain.errors import ConfigError

log = logging.getLogger(__name__)

KEYRING_SERVICE = "koroku"
KEYRING_USER = "api_key"
KEY_ENV_VARS = ("GOOGLE_API_KEY", "GEMINI_API_KEY")
KEYRING_ENV = "PYTHON_KEYRING_BACKEND"

ENV_OVERRIDES: dict[str, str] = {
    "model": "KOROKU_MODEL",
    "max_tool_calls": "KOROKU_MAX_TOOL_CALLS",
    "workspace": "KOROKU_WORKSPACE",
    "compact_at_tokens": "KOROKU_COMPACT_AT_TOKENS",
    "google_search": "KOROKU_GOOGLE_SEARCH",
    "url_context": "KOROKU_URL_CONTEXT",
    "sync_url": "KOROKU_SYNC_URL",
}


class SettingsError(ConfigError, ValueError):
    """A setting that cannot be used, with a message fit for a person."""


class Settings(BaseModel):
    """User settings (settings.json, kept by `SettingsStore`); core ones env-overridable."""

    model_config = ConfigDict(validate_assignment=True, extra="ignore")

    model: str = Field("gemini-3-flash-preview", min_length=1)
    max_tool_calls: int = Field(15, ge=1, le=500)
    workspace: str = ""
    """Folder for relative paths and shell commands; empty means the user's home."""
    compact_at_tokens: int = Field(100_000, ge=2_000, le=2_000_000)
    always_allow: list[str] = Field(default_factory=list)
    quick_ask_shortcut: str = "Ctrl+Alt+Space"
    global_shortcut_enabled: bool = True
    start_at_login: bool = False
    theme: Literal["system", "light", "dark"] = "system"
    welcomed: bool = False
    thinking_level: Literal["", "minimal", "low", "medium", "high"] = ""
    """Gemini's thinking level for chat turns ("" = the model's default)."""
    quick_ask_thinking_level: Literal["", "minimal", "low", "medium", "high"] = "low"
    """The thinking level of quick-ask turns: lower by default, for a faster answer."""
    quick_ask_into: Literal["quick_asks", "current"] = "quick_asks"
    """Where quick ask asks: its own conversation ("Quick asks") or the chat window's."""
    embedding_model: str = Field("gemini-embedding-001", min_length=1)
    """The model that embeds the log for search by meaning (a change re-embeds it)."""
    surface_memories: bool = True
    """Attach past passages related to each new message ("Remembered") to the turn."""
    remember_facts: bool = True
    """Keep facts about the user (the `remember` tool, each compaction's new facts) and send
    the live ones with every request; off: none are sent or gathered (stored ones stay)."""
    mcp_trust_read_only: bool = False
    """Run MCP tools their server marks read-only (`readOnlyHint`) without asking."""
    google_search: bool = False
    """Offer Gemini's Google Search grounding (billed per search query by Google)."""
    url_context: bool = False
    """Offer Gemini's URL context tool (reads the pages of URLs in the conversation)."""
    sync_url: str = ""
    """The sync hub (`postgresql://user@host:port/db`, no password); empty: no sync."""

    @field_validator("model")
    @classmethod
    def _strip_model(cls, value: str) -> str:
        value = value.strip()
        if not value:
            raise ValueError("the model name may not be empty")
        return value

    def web_tools(self) -> tuple[str, ...]:
        """Gemini's built-in web tools switched on (`google_search`, `url_context`)."""
        on = {"google_search": self.google_search, "url_context": self.url_context}
        return tuple(name for name, enabled in on.items() if enabled)

    def workspace_path(self) -> Path:
        """The workspace as a path (home when unset)."""
        return Path(self.workspace).expanduser() if self.workspace else Path.home()


def apply_env(settings: Settings) -> Settings:
    """A copy of `settings` with the KOROKU_* environment variables applied."""
    data: dict[str, Any] = settings.model_dump()
    for field_name, var in ENV_OVERRIDES.items():
        if var in os.environ:
            data[field_name] = os.environ[var]
    try:
        return Settings.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{ENV_OVERRIDES.get(str(e['loc'][0]), e['loc'][0])}: {e['msg']}" for e in exc.errors()
        )
        raise SettingsError(f"invalid setting from the environment: {problems}") from exc


# -- API key ----------------------------------------------------------------------------


class KeyringUnavailable(ConfigError, RuntimeError):
    """No usable OS keyring backend."""


@dataclass(frozen=True)
class ApiKey:
    """The key in use and where it came from (the value is never logged)."""

    value: str
    source: str

    def __repr__(self) -> str:
        return f"ApiKey(source={self.source!r})"


NO_KEYRING_BACKEND = "keyring.backends.fail.Keyring"
"""`PYTHON_KEYRING_BACKEND` naming this (tests, CI, a headless box) turns the keyring off."""


def _keyring_off() -> bool:
    """Whether the environment turns the keyring off in a process that has not loaded it
    (keyring would answer "no keyring": ~20-30 ms of imports to learn it). Once loaded, the
    backend it holds is asked (a test may have set one in-process)."""
    return "keyring" not in sys.modules and os.environ.get(KEYRING_ENV) == NO_KEYRING_BACKEND


def _keyring_get() -> str | None:
    if _keyring_off():
        return None
    try:
        import keyring
        from keyring.errors import KeyringError

        try:
            value = keyring.get_password(KEYRING_SERVICE, KEYRING_USER)
        except KeyringError:
            return None
        return str(value) if value else None
    except Exception:  # a broken backend must never stop the app
        log.debug("keyring lookup failed", exc_info=True)
        return None


def resolve_api_key() -> ApiKey | None:
    """The OS keyring (service `koroku`) first, then GOOGLE_API_KEY / GEMINI_API_KEY."""
    stored = _keyring_get()
    if stored:
        return ApiKey(stored, "keyring")
    for var in KEY_ENV_VARS:
        value = os.environ.get(var, "").strip()
        if value:
            return ApiKey(value, var)
    return None


def keyring_backend_name() -> str | None:
    """The keyring backend's name, or None when there is no usable one."""
    try:
        import keyring
        from keyring.backends import fail

        backend = keyring.get_keyring()
        if isinstance(backend, fail.Keyring):
            return None
        return type(backend).__name__
    except Exception:  # noqa: BLE001 — a backend may fail in any way: no keyring
        return None


def store_api_key(value: str) -> None:
    """Save the key in the OS keyring; raises KeyringUnavailable (never falls back to a file)."""
    value = value.strip()
    if not value:
        raise ValueError("the API key is empty")
    _store_secret(KEYRING_USER, value, "key", "GEMINI_API_KEY")


def _store_secret(user: str, value: str, what: str, env_var: str) -> None:
    """Save a secret in the OS keyring under `user`, or raise KeyringUnavailable naming the
    environment variable to use instead (a secret never falls back to a file)."""
    if keyring_backend_name() is None:
        raise KeyringUnavailable(
            f"no OS keyring is available; set {env_var} in your environment instead"
        )
    import keyring
    from keyring.errors import KeyringError

    try:
        keyring.set_password(KEYRING_SERVICE, user, value)
    except KeyringError as exc:
        raise KeyringUnavailable(
            f"the OS keyring refused the {what}: {type(exc).__name__}"
        ) from exc


class KeyringSecrets:
    """The OS keyring (service `koroku`) as the MCP client's `SecretStore`: the OAuth tokens
    of HTTP servers, one entry per server and kind. Never a file."""

    def usable(self) -> bool:
        """Whether there is a keyring to store in."""
        return keyring_backend_name() is not None

    def get(self, key: str) -> str | None:
        """The stored value (None when absent or when the keyring cannot be read)."""
        try:
            import keyring

            value = keyring.get_password(KEYRING_SERVICE, key)
        except Exception:
            log.debug("keyring lookup failed", exc_info=True)
            return None
        return str(value) if value else None

    def set(self, key: str, value: str) -> None:
        """Store `value`; raises KeyringUnavailable (never falls back to a file)."""
        if not self.usable():
            raise KeyringUnavailable(
                "no OS keyring is available; Koroku keeps MCP sign-ins only there"
            )
        import keyring
        from keyring.errors import KeyringError

        try:
            keyring.set_password(KEYRING_SERVICE, key, value)
        except KeyringError as exc:
            why = type(exc).__name__
            raise KeyringUnavailable(f"the OS keyring refused the sign-in: {why}") from exc

    def delete(self, key: str) -> None:
        """Forget `key` (nothing stored, or no keyring: nothing to do)."""
        try:
            import keyring

            keyring.delete_password(KEYRING_SERVICE, key)
        except Exception:
            log.debug("keyring delete of an MCP sign-in: nothing removed", exc_info=True)


NO_KEY_HELP = (
    "Koroku needs a Gemini API key. Get one at https://aistudio.google.com/apikey, then either\n"
    "  run `koroku login` to store it in your OS keyring, or\n"
    "  set GEMINI_API_KEY (or GOOGLE_API_KEY) in your environment."
)


# -- sync hub password ------------------------------------------------------------------

SYNC_KEYRING_USER = "sync_hub_password"
SYNC_PASSWORD_ENV = "PGPASSWORD"


def resolve_sync_password() -> str | None:
    """The hub password: the OS keyring (service `koroku`) first, then PGPASSWORD; never a file."""
    try:
        import keyring
        from keyring.errors import KeyringError

        try:
            stored = keyring.get_password(KEYRING_SERVICE, SYNC_KEYRING_USER)
        except KeyringError:
            stored = None
    except Exception:  # no usable backend
        log.debug("keyring lookup failed", exc_info=True)
        stored = None
    return stored or os.environ.get(SYNC_PASSWORD_ENV) or None


def store_sync_password(value: str) -> None:
    """Save the hub password in the OS keyring; raises KeyringUnavailable (never a file)."""
    _store_secret(SYNC_KEYRING_USER, value, "password", SYNC_PASSWORD_ENV)
