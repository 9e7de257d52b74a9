"""CA certificates: certifi's bundle is used when (and only when) the system store is empty."""

from __future__ import annotations

import json
import os
from pathlib import Path

import certifi
import pytest

from koroku_desktop.llm import certs
from tests.fakes.fixtures import TEST_API_KEY
from tests.fakes.gemini_server import FakeGemini
from tests.packaging.conftest import run_python

REPORT = (
    "import json, os\n"
    "from koroku_desktop.llm.certs import system_store_has_cas, use_certifi_if_store_empty\n"
    "before = system_store_has_cas()\n"
    "chosen = use_certifi_if_store_empty()\n"
    "print(json.dumps({'before': before, 'chosen': chosen, 'after': system_store_has_cas(),\n"
    "                  'file': os.environ.get('SSL_CERT_FILE'),\n"
    "                  'dir': os.environ.get('SSL_CERT_DIR')}))\n"
)


def empty_store_env(tmp_path: Path) -> dict[str, str]:
    """SSL_CERT_FILE/DIR pointing where there are no certificates: an empty system store."""
    empty_dir = tmp_path / "no-certs"
    empty_dir.mkdir()
    return {"SSL_CERT_FILE": str(tmp_path / "missing.pem"), "SSL_CERT_DIR": str(empty_dir)}


def test_an_empty_system_store_falls_back_to_certifi(tmp_path: Path) -> None:
    result = run_python(["-c", REPORT], empty_store_env(tmp_path))
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["before"] is False
    assert report["chosen"] == certifi.where()
    assert report["file"] == certifi.where()
    assert report["after"] is True


def test_a_store_with_cas_is_left_alone(tmp_path: Path) -> None:
    # certifi's own file stands in for a system bundle with CAs in it.
    env = {"SSL_CERT_FILE": certifi.where(), "SSL_CERT_DIR": str(tmp_path)}
    result = run_python(["-c", REPORT], env)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report == {
        "before": True, "chosen": None, "after": True,
        "file": certifi.where(), "dir": str(tmp_path),
    }  # fmt: skip


def test_the_gemini_client_is_built_after_the_fallback(tmp_path: Path) -> None:
    """A request on a machine without CAs still sets SSL_CERT_FILE before the SDK client."""
    code = (
        "import asyncio, os, sys\n"
        "from koroku_desktop.llm.gemini import GeminiChatModel\n"
        "model = GeminiChatModel(sys.argv[1], base_url=sys.argv[2], retry_attempts=1)\n"
        "print(asyncio.run(model.check_connection('gemini-test')))\n"
        "print(os.environ['SSL_CERT_FILE'])\n"
    )
    with FakeGemini() as fake:
        result = run_python(["-c", code, TEST_API_KEY, fake.base_url], empty_store_env(tmp_path))
    assert result.returncode == 0, result.stderr
    said, cert_file = result.stdout.strip().splitlines()
    assert said.startswith("Connected to Gemini")
    assert cert_file == certifi.where()


def test_a_missing_cert_dir_is_dropped_an_existing_one_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "missing.pem"))
    monkeypatch.setenv("SSL_CERT_DIR", str(tmp_path / "missing-dir"))
    assert certs.use_certifi_if_store_empty() == certifi.where()
    assert "SSL_CERT_DIR" not in os.environ

    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "missing.pem"))
    monkeypatch.setenv("SSL_CERT_DIR", str(tmp_path))
    assert certs.use_certifi_if_store_empty() == certifi.where()
    assert os.environ["SSL_CERT_DIR"] == str(tmp_path)


def test_a_hashed_cert_dir_counts_as_a_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """OpenSSL reads a CA directory lazily, so its hashed file names are what count."""
    (tmp_path / "README").write_text("not a certificate")
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "missing.pem"))
    monkeypatch.setenv("SSL_CERT_DIR", str(tmp_path))
    assert certs.system_store_has_cas() is False
    (tmp_path / "5ad8a5d6.0").write_text("a hashed CA link")
    assert certs.system_store_has_cas() is True


def test_a_file_without_certificates_is_an_empty_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    junk = tmp_path / "junk.pem"
    junk.write_text("no PEM here\n")
    monkeypatch.setenv("SSL_CERT_FILE", str(junk))
    monkeypatch.setenv("SSL_CERT_DIR", str(tmp_path))
    assert certs.system_store_has_cas() is False


def test_a_bundle_is_read_up_to_its_first_ca(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A damaged block before the CAs is passed over; a file of damaged blocks has none."""
    damaged = "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydA==\n-----END CERTIFICATE-----\n"
    only_damaged = tmp_path / "damaged.pem"
    only_damaged.write_text(damaged * 2)
    bundle = tmp_path / "bundle.pem"
    bundle.write_text(damaged + Path(certifi.where()).read_text(encoding="utf-8"))
    monkeypatch.setenv("SSL_CERT_DIR", str(tmp_path))
    monkeypatch.setenv("SSL_CERT_FILE", str(only_damaged))
    assert certs.system_store_has_cas() is False
    monkeypatch.setenv("SSL_CERT_FILE", str(bundle))
    assert certs.system_store_has_cas() is True
