"""`koroku ask`: a read of ~/.ssh/id_rsa asks even with 'always allow' (denied: no terminal)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.conftest import Koroku
from tests.fakes.gemini_server import FakeGemini


def test_ask_reading_the_ssh_key_with_always_allow_is_denied_without_a_terminal(
    koroku: Koroku, fake_gemini: FakeGemini, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nsecret\n")
    koroku.home.mkdir(parents=True, exist_ok=True)
    (koroku.home / "settings.json").write_text(json.dumps({"always_allow": ["read_file"]}))
    fake_gemini.reply_calls(("read_file", {"path": "~/.ssh/id_rsa"}))
    fake_gemini.reply_text("I could not read it.")
    result = koroku.run("ask", "show me my ssh key", HOME=str(home))
    assert result.returncode == 0, result.stderr
    sent = json.dumps(fake_gemini.generate_requests()[-1].contents)
    assert "nobody could approve it" in sent, "asked, with no terminal to ask on"
    assert "PRIVATE KEY" not in sent
