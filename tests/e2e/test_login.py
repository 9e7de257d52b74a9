"""`koroku login` as a user runs it: a real process, no OS keyring."""

from __future__ import annotations

from tests.e2e.conftest import Koroku


def test_login_without_a_keyring_says_so_before_asking_for_the_key(koroku: Koroku) -> None:
    # The session's keyring is keyring's `fail` backend (tests/conftest.py), as on a
    # machine without Secret Service or KWallet.
    result = koroku.run("login", stdin="AIzaSy-typed-for-nothing-0123456789\n")
    assert result.returncode == 2
    assert "no OS keyring" in result.stderr and "GEMINI_API_KEY" in result.stderr
    assert "Gemini API key (input hidden)" not in result.stderr + result.stdout
    assert "Traceback" not in result.stderr
