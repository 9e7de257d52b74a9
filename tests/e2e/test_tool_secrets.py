"""`CALL bash env` must not put the API key or other secrets into the log or the request."""

from __future__ import annotations

import json

from koroku_desktop.tools.env import is_secret_variable, tool_environment
from tests.e2e.conftest import Koroku
from tests.fakes.gemini_server import FakeGemini


def test_bash_env_leaves_out_keys_tokens_and_koroku_settings(
    koroku: Koroku, fake_gemini: FakeGemini
) -> None:
    fake_gemini.reply_calls(("bash", {"command": "env"}))
    fake_gemini.reply_text("Here is the environment.")
    result = koroku.run(
        "ask",
        "--yes",
        "run env",
        GOOGLE_API_KEY="google-secret-value",
        GITHUB_TOKEN="ghp-secret-value",
        DB_PASSWORD="hunter2-secret",
        my_aws_secret_access="aws-secret-value",
        HARMLESS_SETTING="visible-value",
    )
    assert result.returncode == 0, result.stderr
    sent = json.dumps(fake_gemini.generate_requests()[-1].contents)
    assert "visible-value" in sent  # the command really ran and printed the environment
    assert "PATH=" in sent
    for secret in (
        "test-key",
        "google-secret-value",
        "ghp-secret-value",
        "hunter2-secret",
        "aws-secret-value",
    ):
        assert secret not in sent
    assert "KOROKU_WORKSPACE" not in sent and "KOROKU_HOME" not in sent
    stored = koroku.sql("SELECT CAST(payload AS BLOB) FROM events")
    assert all(b"test-key" not in bytes(row[0]) for row in stored)  # type: ignore[arg-type]


def test_the_rule_by_name() -> None:
    assert is_secret_variable("GEMINI_API_KEY") and is_secret_variable("google_api_key")
    assert is_secret_variable("AWS_SESSION_TOKEN") and is_secret_variable("KOROKU_MODEL")
    assert not is_secret_variable("PATH") and not is_secret_variable("LANG")
    env = tool_environment({"PATH": "/bin", "API_TOKEN": "x"}, PAGER="cat")
    assert env == {"PATH": "/bin", "PAGER": "cat"}
