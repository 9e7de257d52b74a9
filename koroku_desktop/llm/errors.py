"""Every failure of the SDK or the network -> a `ModelError` fit to show a person.

Messages never include a traceback or the API key (any occurrence is scrubbed).
"""

from __future__ import annotations

import asyncio
from typing import Any

from google.genai import errors

from koroku_desktop.domain.model_io import ModelError, ModelErrorKind

_NETWORK_MODULES = ("httpx", "httpx2", "httpcore", "httpcore2", "h11", "h2", "aiohttp", "anyio")
_AUTH_REASONS = ("API_KEY_INVALID", "API_KEY_EXPIRED", "API_KEY_SERVICE_BLOCKED")


def scrub(text: str, secret: str | None) -> str:
    """`text` with every occurrence of `secret` replaced."""
    if secret:
        text = text.replace(secret, "[api key]")
    return text


def _details_text(details: Any) -> str:
    return str(details) if details is not None else ""


def _api_error(exc: errors.APIError) -> ModelError:
    code = int(exc.code or 0)
    service = (exc.message or exc.status or "").strip()
    detail = f": {service}" if service else "."
    reasons = _details_text(exc.details)
    kind: ModelErrorKind
    if code in (400, 403, 404) and "access the file" in service.lower():
        kind = "bad_request"  # an uploaded attachment expired or was deleted: not the key
        message = f"Gemini no longer holds a file this conversation sent (HTTP {code}){detail}"
    elif code in (401, 403) or any(r in reasons for r in _AUTH_REASONS):
        kind = "auth"
        message = f"Gemini did not accept the API key (HTTP {code}){detail}"
    elif code == 400 and "input token count" in service.lower():
        kind = "too_large"
        message = f"The request is too large for the model{detail}"
    elif code == 429:
        kind = "quota"
        message = f"Gemini's quota or rate limit was reached (HTTP 429){detail}"
    elif 400 <= code < 500 and code != 408:
        kind = "bad_request"
        message = f"Gemini rejected the request (HTTP {code}){detail}"
    elif code == 408 or code >= 500:
        kind = "unavailable"
        message = f"Gemini is unavailable right now (HTTP {code}){detail}"
    else:
        kind = "unknown"
        message = f"Gemini answered with an unexpected error (HTTP {code}){detail}"
    return ModelError(kind, message, code or None)


def _is_network_error(exc: BaseException) -> bool:
    if isinstance(exc, OSError | TimeoutError | asyncio.TimeoutError | EOFError):
        return True
    return any(cls.__module__.split(".")[0] in _NETWORK_MODULES for cls in type(exc).__mro__)


def _network_message(exc: BaseException, timeout_s: float) -> str:
    name = type(exc).__name__
    if "Timeout" in name or isinstance(exc, TimeoutError):
        return f"Gemini did not answer within {timeout_s:g} s (timed out)."
    if "Connect" in name or isinstance(exc, ConnectionRefusedError):
        return f"Could not connect to Gemini ({name}). Check the network connection."
    return f"The connection to Gemini was lost ({name}). Check the network connection."


_RETRY_INFO = "type.googleapis.com/google.rpc.RetryInfo"


def retry_delay_s(exc: BaseException) -> float | None:
    """The delay a 429's `RetryInfo` asks for (`"retryDelay": "15s"`), in seconds, or None."""
    if not isinstance(exc, errors.APIError) or not isinstance(exc.details, dict):
        return None
    error = exc.details.get("error", exc.details)
    details = error.get("details") if isinstance(error, dict) else None
    for item in details if isinstance(details, list) else []:
        if isinstance(item, dict) and item.get("@type") == _RETRY_INFO:
            raw = str(item.get("retryDelay", "")).strip()
            try:
                return max(0.0, float(raw.removesuffix("s")))
            except ValueError:
                return None
    return None


def to_model_error(exc: BaseException, *, api_key: str | None, timeout_s: float) -> ModelError:
    """Classify any exception raised while talking to Gemini."""
    if isinstance(exc, ModelError):
        error = exc
    elif isinstance(exc, errors.APIError):
        error = _api_error(exc)
    elif _is_network_error(exc):
        error = ModelError("network", _network_message(exc, timeout_s))
    elif isinstance(exc, errors.UnknownApiResponseError):
        error = ModelError("unavailable", "Gemini sent a response that could not be read.")
    else:
        reason = (str(exc).strip() or "no details")[:300]
        error = ModelError(
            "unknown", f"Unexpected error while talking to Gemini ({type(exc).__name__}: {reason})"
        )
    return ModelError(error.kind, scrub(error.message, api_key), error.status)
