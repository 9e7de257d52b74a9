"""Check a built bundle: run the frozen `koroku` the way a user and CI would, and time it.

    uv run python packaging/smoke_check.py [--binary dist/koroku/koroku] [--compare-source]

Checks, each in a fresh temporary KOROKU_HOME with QT_QPA_PLATFORM=offscreen and no keyring:
`--version`; `--self-check` (database, every window, google.genai); `ask` answered by the fake
Gemini server from tests/fakes (the frozen SDK's real HTTP path, with the certifi fallback
for a machine without CA certificates); and `install-desktop` / `--uninstall` into a temporary
XDG_DATA_HOME (the bundled resources); `mcp list` against a real stdio MCP server (the bundled
MCP SDK); a search by meaning (embeddings through the fake Gemini, numpy's vector index).
Prints PASS/FAIL per check and the start times; exits 1 if any check fails.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TIMEOUT_S = 120


class CheckFailed(Exception):
    """A check's reason for failing."""


def base_env(home: Path) -> dict[str, str]:
    """The environment every run gets: offscreen Qt, its own data dir, no key, no keyring."""
    env = dict(os.environ)
    for var in ("GOOGLE_API_KEY", "GEMINI_API_KEY", "GOOGLE_GEMINI_BASE_URL", "KOROKU_MODEL"):
        env.pop(var, None)
    env.update(
        QT_QPA_PLATFORM="offscreen",
        KOROKU_HOME=str(home),
        KOROKU_WORKSPACE=str(home),
        PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring",
    )
    return env


def run(
    command: Sequence[str],
    env_extra: dict[str, str] | None = None,
    stdin: str = "",
    prepare: Callable[[Path], None] | None = None,
) -> tuple[subprocess.CompletedProcess[str], float]:
    """Run `command` in a fresh data dir (`prepare` may fill it first); the result and its
    wall time in seconds."""
    with tempfile.TemporaryDirectory(prefix="koroku-smoke-") as tmp:
        if prepare is not None:
            prepare(Path(tmp))
        env = base_env(Path(tmp))
        env.update(env_extra or {})
        started = time.perf_counter()
        result = subprocess.run(
            list(command), input=stdin, capture_output=True, text=True, env=env,
            cwd=tmp, timeout=TIMEOUT_S, check=False,
        )  # fmt: skip
        return result, time.perf_counter() - started


def expect(result: subprocess.CompletedProcess[str], code: int, stdout_has: str) -> None:
    """Raise CheckFailed unless the exit code and stdout are as expected."""
    if result.returncode != code or stdout_has not in result.stdout:
        tail = (result.stdout + result.stderr).strip().splitlines()[-15:]
        raise CheckFailed(
            f"exit {result.returncode} (wanted {code}), stdout lacks {stdout_has!r}:\n    "
            + "\n    ".join(tail)
        )


def version() -> str:
    """The source tree's version."""
    from koroku_desktop import __version__

    return __version__


def check_version(koroku: list[str]) -> float:
    """`koroku --version` prints the version."""
    result, seconds = run([*koroku, "--version"])
    expect(result, 0, f"koroku {version()}")
    return seconds


def check_self_check(koroku: list[str]) -> float:
    """`koroku --self-check` exits 0 and says ok."""
    result, seconds = run([*koroku, "--self-check"])
    expect(result, 0, "koroku self-check: ok")
    return seconds


def check_ask(koroku: list[str]) -> float:
    """`koroku ask` gets its answer from the fake Gemini server through the bundled SDK.

    The machine is made to look as if it had no CA certificates, so the bundled certifi
    fallback runs too.
    """
    from tests.fakes.fixtures import TEST_API_KEY
    from tests.fakes.gemini_server import FakeGemini

    with FakeGemini() as fake, tempfile.TemporaryDirectory(prefix="koroku-no-cas-") as no_cas:
        fake.reply_text("Hello from the fake Gemini.")
        env = {
            "GEMINI_API_KEY": TEST_API_KEY,
            "GOOGLE_GEMINI_BASE_URL": fake.base_url,
            "SSL_CERT_FILE": str(Path(no_cas) / "missing.pem"),
            "SSL_CERT_DIR": no_cas,
        }
        result, seconds = run([*koroku, "--verbose", "ask", "--yes", "Say hello"], env)
        expect(result, 0, "Hello from the fake Gemini.")
        if not fake.generate_requests():
            raise CheckFailed("the fake Gemini server got no request")
        if "using certifi's bundle" not in result.stderr:
            raise CheckFailed(f"the certifi fallback did not run:\n{result.stderr[-800:]}")
    return seconds


def check_ask_with_attachment(koroku: list[str]) -> float:
    """`koroku ask -a shot.png`: the frozen app reads the file, sniffs its type from its bytes
    (the name says .dat) and sends exactly those bytes inline."""
    from tests.fakes.fixtures import TEST_API_KEY
    from tests.fakes.gemini_replies import decode_b64
    from tests.fakes.gemini_server import FakeGemini

    picture = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8
    with FakeGemini() as fake:
        fake.reply_text("A small picture.")
        env = {"GEMINI_API_KEY": TEST_API_KEY, "GOOGLE_GEMINI_BASE_URL": fake.base_url}
        result, seconds = run(
            [*koroku, "ask", "-a", "shot.dat", "what is this?"],
            env,
            prepare=lambda home: (home / "shot.dat").write_bytes(picture),
        )
        expect(result, 0, "A small picture.")
        sent = [
            (blob.get("mimeType") or blob.get("mime_type"), decode_b64(blob["data"]))
            for request in fake.generate_requests()
            for content in request.body["contents"]
            for part in content["parts"]
            if (blob := part.get("inlineData"))
        ]
        if sent != [("image/png", picture)]:
            raise CheckFailed(f"the attachment was not sent as an inline PNG: {sent!r:.200}")
    return seconds


def check_sync_reaches_libpq(koroku: list[str]) -> float:
    """`koroku sync` with a hub on a closed local port: psycopg and its bundled libpq load,
    and the connection error is told in one line (exit 1)."""
    env = {"KOROKU_SYNC_URL": "postgresql://me@127.0.0.1:9/koroku", "PGPASSWORD": "smoke"}
    result, seconds = run([*koroku, "sync"], env)
    # Koroku's one line is made from libpq's "Connection refused": libpq loaded and ran.
    if result.returncode != 1 or "nothing listens there" not in result.stderr:
        raise CheckFailed(f"exit {result.returncode}: {(result.stdout + result.stderr)[-600:]}")
    return seconds


def check_search_by_meaning(koroku: list[str]) -> float:
    """Embeddings and the vector index (numpy's OpenBLAS) work in the frozen app: an answer is
    stored, `search --backfill` embeds it through the fake Gemini, and a question sharing no
    word with it finds it by meaning."""
    from tests.fakes.fixtures import TEST_API_KEY
    from tests.fakes.gemini_server import FakeGemini

    with FakeGemini() as fake, tempfile.TemporaryDirectory(prefix="koroku-smoke-") as tmp:
        env = base_env(Path(tmp))
        env.update(GEMINI_API_KEY=TEST_API_KEY, GOOGLE_GEMINI_BASE_URL=fake.base_url)
        fake.reply_text("Noted: your car is painted crimson.")
        started = time.perf_counter()
        for args in (["ask", "my car is painted crimson"], ["search", "--backfill"]):
            result = subprocess.run(
                [*koroku, *args], capture_output=True, text=True, env=env, cwd=tmp,
                timeout=TIMEOUT_S, check=False,
            )  # fmt: skip
            expect(result, 0, "")
        found = subprocess.run(
            [*koroku, "search", "automobile colour"], capture_output=True, text=True, env=env,
            cwd=tmp, timeout=TIMEOUT_S, check=False,
        )  # fmt: skip
        expect(found, 0, "crimson")
        if not fake.embed_requests():
            raise CheckFailed("nothing was embedded through the fake Gemini")
        return time.perf_counter() - started


def check_mcp(koroku: list[str]) -> float:
    """`koroku mcp list` starts a real stdio MCP server through the bundled `mcp` SDK.

    The server is tests/mcp/servers/tool_server.py run by this Python (which has the SDK);
    the frozen app must connect to it, list its tools and stop it.
    """
    server = ROOT / "tests" / "mcp" / "servers" / "tool_server.py"

    def write_config(home: Path) -> None:
        config = {"mcpServers": {"smoke": {"command": sys.executable, "args": [str(server)]}}}
        (home / "mcp.json").write_text(json.dumps(config), encoding="utf-8")

    result, seconds = run([*koroku, "mcp", "list", "--json", "--wait", "60"], prepare=write_config)
    expect(result, 0, '"name": "smoke"')
    servers = json.loads(result.stdout)["servers"]
    tools = {t["name"] for t in servers[0]["tools"]}
    if servers[0]["status"] != "ready" or "echo" not in tools:
        raise CheckFailed(f"the MCP server did not come up in the frozen app: {servers[0]}")
    return seconds


def check_install_desktop(koroku: list[str]) -> float:
    """`install-desktop` writes a launcher running this binary and the icons; --uninstall."""
    with tempfile.TemporaryDirectory(prefix="koroku-xdg-") as xdg:
        data = Path(xdg)
        result, seconds = run([*koroku, "install-desktop"], {"XDG_DATA_HOME": xdg})
        expect(result, 0, "Installed the launcher")
        launcher = data / "applications" / "koroku.desktop"
        text = launcher.read_text(encoding="utf-8") if launcher.is_file() else ""
        if f"Exec={koroku[0]}\n" not in text or f"Exec={koroku[0]} quick-ask\n" not in text:
            raise CheckFailed(f"{launcher} does not run {koroku[0]}:\n{text}")
        icons = sorted(data.glob("icons/hicolor/*/apps/koroku.*"))
        if len(icons) != 9:
            raise CheckFailed(f"expected 8 PNG sizes and the SVG, found {len(icons)}")
        result, _ = run([*koroku, "install-desktop", "--uninstall"], {"XDG_DATA_HOME": xdg})
        expect(result, 0, "removed")
        if launcher.exists() or any(data.glob("icons/hicolor/*/apps/koroku.*")):
            raise CheckFailed("--uninstall left files behind")
    return seconds


CHECKS: list[tuple[str, Callable[[list[str]], float]]] = [
    ("--version", check_version),
    ("--self-check", check_self_check),
    ("ask (fake Gemini)", check_ask),
    ("ask -a (an attachment sniffed and sent inline)", check_ask_with_attachment),
    ("sync (psycopg and libpq load)", check_sync_reaches_libpq),
    ("search by meaning (embeddings, numpy)", check_search_by_meaning),
    ("mcp list (a stdio server)", check_mcp),
    ("install-desktop", check_install_desktop),
]


def median_time(koroku: list[str], args: list[str], times: int, env: dict[str, str]) -> float:
    """The median wall time of `times` runs of `koroku args` (after one warm-up run)."""
    samples = []
    for _ in range(times + 1):
        result, seconds = run([*koroku, *args], env)
        if result.returncode != 0:
            raise CheckFailed(f"{args} failed: {result.stderr.strip()[-400:]}")
        samples.append(seconds)
    return statistics.median(samples[1:])


def timings(binary: Path, compare_source: bool, times: int) -> None:
    """Print start times of the frozen app (and of the source tree, in the same run)."""
    _print_times("frozen", [str(binary)], {}, times)
    if compare_source:
        # From source as an installed user has it: bytecode compiled once, then reused.
        with tempfile.TemporaryDirectory(prefix="koroku-pyc-") as pyc:
            env = {
                "PYTHONPYCACHEPREFIX": pyc,
                "PYTHONDONTWRITEBYTECODE": "",
                "PYTHONPATH": str(ROOT),
            }
            _print_times("source", [sys.executable, "-m", "koroku_desktop"], env, times)


def _print_times(label: str, koroku: list[str], env: dict[str, str], times: int) -> None:
    version_s = median_time(koroku, ["--version"], times, env)
    check_s = median_time(koroku, ["--self-check"], times, env)
    print(f"time   {label:7} --version {version_s:5.2f} s   --self-check {check_s:5.2f} s")


def main(argv: list[str] | None = None) -> int:
    """Run every check on the binary; 0 when all pass."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--binary", type=Path, default=ROOT / "dist" / "koroku" / "koroku")
    parser.add_argument(
        "--compare-source",
        action="store_true",
        help="also time `python -m koroku_desktop` from this tree",
    )
    parser.add_argument("--times", type=int, default=3, help="timed runs per command")
    args = parser.parse_args(argv)
    binary = args.binary.resolve()
    if not os.access(binary, os.X_OK):
        print(f"FAIL   no executable at {binary}; build it first", file=sys.stderr)
        return 1
    failed = 0
    for name, check in CHECKS:
        try:
            seconds = check([str(binary)])
        except (CheckFailed, subprocess.TimeoutExpired, OSError) as exc:
            failed += 1
            print(f"FAIL   {name}: {exc}")
        else:
            print(f"PASS   {name} ({seconds:.2f} s)")
    if not failed and args.times > 0:
        try:
            timings(binary, args.compare_source, args.times)
        except CheckFailed as exc:
            failed += 1
            print(f"FAIL   timing: {exc}")
    print("smoke check: " + ("FAILED" if failed else "passed"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
