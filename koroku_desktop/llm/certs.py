"""Trusted CA certificates for the SDK: the system store, or certifi's bundle when it is empty.

google-genai trusts only OpenSSL's default locations (`SSL_CERT_FILE` / `SSL_CERT_DIR` when set,
else the paths compiled into OpenSSL). A minimal install without `ca-certificates`, or a frozen
app whose OpenSSL looks in another distribution's folders, has none there, and every request
fails with CERTIFICATE_VERIFY_FAILED. Then `SSL_CERT_FILE` is pointed at certifi's bundle before
the client is built, which the SDK (and httpx) honour.
"""

from __future__ import annotations

import logging
import os
import re
import ssl

import certifi

log = logging.getLogger(__name__)

_HASHED_CERT = re.compile(r"[0-9a-fA-F]{8}\.\d+")


_PEM_CERT = re.compile(r"-----BEGIN CERTIFICATE-----.+?-----END CERTIFICATE-----", re.DOTALL)


def _has_ca(cafile: str | None = None, cadata: str | None = None) -> bool:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    try:
        ctx.load_verify_locations(cafile=cafile, cadata=cadata)
    except (OSError, ssl.SSLError, ValueError):
        return False
    return int(ctx.cert_store_stats()["x509_ca"]) > 0


def _file_has_ca(cafile: str) -> bool:
    """Whether OpenSSL finds a CA in the file. Its PEM blocks are tried one by one first, up
    to the first CA (a system bundle starts with one: ~0.1 ms, where loading the whole
    bundle takes ~20 ms of every start); a file where none of them is a CA is loaded whole,
    as OpenSSL reads it (other PEM kinds, such as `TRUSTED CERTIFICATE`, included)."""
    try:
        with open(cafile, encoding="ascii", errors="replace") as file:
            text = file.read()
    except OSError:
        return False
    if any(_has_ca(cadata=block.group()) for block in _PEM_CERT.finditer(text)):
        return True
    return _has_ca(cafile=cafile)


def _dir_has_ca(capath: str) -> bool:
    # OpenSSL reads a CA directory lazily, by subject hash: count the hashed names instead.
    try:
        return any(_HASHED_CERT.fullmatch(name) for name in os.listdir(capath))
    except OSError:
        return False


def system_store_has_cas() -> bool:
    """True when OpenSSL's default verify locations (SSL_CERT_FILE/DIR included) hold a CA."""
    paths = ssl.get_default_verify_paths()
    if paths.cafile and _file_has_ca(paths.cafile):
        return True
    return bool(paths.capath) and _dir_has_ca(str(paths.capath))


def use_certifi_if_store_empty() -> str | None:
    """Point SSL_CERT_FILE at certifi's bundle when the system store is empty; the file, or None.

    Call before building the SDK client. A working system store (or a user's own SSL_CERT_FILE
    holding CAs) is left alone, so corporate CAs installed there keep working.
    """
    if system_store_has_cas():
        return None
    bundle = certifi.where()
    os.environ["SSL_CERT_FILE"] = bundle
    cert_dir = os.environ.get("SSL_CERT_DIR")
    if cert_dir is not None and not os.path.isdir(cert_dir):
        del os.environ["SSL_CERT_DIR"]
    log.info("no CA certificates in the system store; using certifi's bundle %s", bundle)
    return bundle
