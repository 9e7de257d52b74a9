"""The base of every stored pydantic value (events, parts, grounding): immutable once read,
its validator built on first use rather than at import (so `koroku` starts fast)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Frozen(BaseModel):
    """A stored value: frozen, built lazily. Subclasses add to `model_config`, never undo it."""

    model_config = ConfigDict(frozen=True, defer_build=True)
