"""The environment a tool's subprocess gets: the user's, minus secrets and Koroku's settings.

The rule (also in the README): a variable is left out when its name
- is an API key variable Koroku or the SDK reads (`GEMINI_API_KEY`, `GOOGLE_API_KEY`),
- contains `KEY`, `TOKEN`, `SECRET`, `PASSWORD`, `PASSWD` or `CREDENTIAL` (any case), or
- starts with `KOROKU_` (Koroku's own settings: data dir, model, workspace, ...).
Everything else is passed on, so `PATH`, `HOME`, `LANG` and the like still work. Whatever a
command prints lands in the log, the search index and the model's context: a secret that a
tool could read from its environment would be sent to the cloud with the next request.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

API_KEY_VARIABLES = frozenset({"GEMINI_API_KEY", "GOOGLE_API_KEY"})
SECRET_MARKERS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL")
KOROKU_PREFIX = "KOROKU_"


def is_secret_variable(name: str) -> bool:
    """Whether `name` is left out of a tool's environment (see the module docstring)."""
    upper = name.upper()
    if upper in API_KEY_VARIABLES or upper.startswith(KOROKU_PREFIX):
        return True
    return any(marker in upper for marker in SECRET_MARKERS)


def tool_environment(base: Mapping[str, str] | None = None, /, **extra: str) -> dict[str, str]:
    """`base` (default: this process's environment) without secret variables, plus `extra`."""
    source = os.environ if base is None else base
    env = {name: value for name, value in source.items() if not is_secret_variable(name)}
    env.update(extra)
    return env
