"""Which attachments Gemini's Files API already holds: `<data dir>/uploads.json`.

Keyed by the blob's SHA-256 and a fingerprint of the API key (uploaded files belong to the
key's project), each entry keeps the file's name, URI and expiry, so a later turn (in any
process) sends the same URI while the file lives and uploads Koroku's copy again once it has
expired. It is only a cache: lost or unreadable, the next turn uploads again. Deliberately
not a table in the event log: nothing here is history, and it must not sync across devices.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from dataclasses import asdict, dataclass
from pathlib import Path

from koroku_desktop.fsutil import PRIVATE, atomic_write

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class UploadedFile:
    """A file in the Files API: its resource name (`files/abc`), URI and expiry (epoch s)."""

    name: str
    uri: str
    mime_type: str
    expires_at: float


def key_fingerprint(api_key: str) -> str:
    """A short, one-way name for an API key (uploads are per key; the key is never stored)."""
    return hashlib.sha256(api_key.encode("utf-8")).hexdigest()[:16]


class UploadCache:
    """The uploads.json file: read fresh on every lookup, rewritten atomically on change."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    def _load(self) -> dict[str, dict[str, object]]:
        try:
            raw = json.loads(self.path.read_bytes())
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            log.warning("ignoring unreadable %s: %s", self.path, exc)
            return {}
        return raw if isinstance(raw, dict) else {}

    def get(self, sha256: str, key: str) -> UploadedFile | None:
        """The upload of this blob under this key, if one is recorded (it may have expired)."""
        entry = self._load().get(f"{key}:{sha256}")
        if not isinstance(entry, dict):
            return None
        try:
            return UploadedFile(
                name=str(entry["name"]),
                uri=str(entry["uri"]),
                mime_type=str(entry["mime_type"]),
                expires_at=float(entry["expires_at"]),  # type: ignore[arg-type]
            )
        except (KeyError, TypeError, ValueError):
            return None

    def put(self, sha256: str, key: str, upload: UploadedFile, now: float) -> None:
        """Record an upload (and forget entries that have expired by `now`)."""
        with self._lock:
            entries = self._load()
            entries[f"{key}:{sha256}"] = asdict(upload)
            self._write(
                {
                    k: v
                    for k, v in entries.items()
                    if isinstance(v, dict) and float(v.get("expires_at", 0)) > now  # type: ignore[arg-type]
                }
            )

    def forget(self, uris: set[str]) -> None:
        """Drop the entries of these URIs (the service said the files are gone)."""
        with self._lock:
            entries = self._load()
            kept = {
                k: v
                for k, v in entries.items()
                if not (isinstance(v, dict) and v.get("uri") in uris)
            }
            if len(kept) != len(entries):
                self._write(kept)

    def _write(self, entries: dict[str, dict[str, object]]) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            data = json.dumps(entries, indent=1, sort_keys=True).encode("utf-8")
            atomic_write(self.path, data, mode=PRIVATE)
        except OSError as exc:  # only a cache: the next turn uploads again
            log.warning("could not write %s: %s", self.path, exc)
