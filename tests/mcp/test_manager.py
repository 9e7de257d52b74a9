"""McpManager against real MCP servers: listing, results, crashes, hangs, live config edits."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Callable
from pathlib import Path

from koroku_desktop.mcp import McpManager, McpTiming
from tests.mcp.conftest import (
    FAST,
    PNG_B64,
    hang_entry,
    my_children,
    pid_alive,
    recorded_calls,
    stdio_entry,
    write_config,
)

Factory = Callable[..., McpManager]


async def until(predicate: Callable[[], bool], seconds: float = 30.0) -> None:
    """Poll the loop until `predicate` holds (a deadline, not a timing assert)."""
    for _ in range(int(seconds / 0.05)):
        if predicate():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("condition not reached")


def state(manager: McpManager, name: str) -> str:
    return next(s.state for s in manager.statuses() if s.name == name)


async def test_stdio_and_http_tools_are_offered_with_gemini_names(
    manager_factory: Factory, koroku_home: Path, calls_file: Path, http_server: str
) -> None:
    write_config(
        koroku_home / "mcp.json",
        {"local": stdio_entry(calls_file), "web side": {"url": http_server}},
    )
    manager = manager_factory()
    await manager.start()
    await manager.wait_settled(30)
    assert [s.state for s in manager.statuses()] == ["ready", "ready"]
    specs = {s.name: s for s in manager.specs(reserved=["read_file"])}
    assert "local_echo" in specs and "web_side_echo" in specs
    assert "local_weird_name_with_chars_" in specs
    weird = specs["local_weird_name_with_chars_"]
    assert "MCP server 'local'" in weird.description
    # The raw schema passes through (anyOf with null, defaults), typed as an object.
    tags = weird.parameters["properties"]["tags"]
    assert tags["anyOf"][1] == {"type": "null"} and weird.parameters["type"] == "object"
    assert manager.is_read_only("local_peek") and not manager.is_read_only("local_echo")
    assert manager.describe("web_side_echo") == "MCP server 'web side', tool 'echo'"

    response, media = await manager.call("web_side_echo", {"text": "over http"})
    assert response["result"] == "echo: over http" and media == []
    response, media = await manager.call("local_weird_name_with_chars_", {"count": 2})
    assert response["result"] == "weird 2 None"
    assert [c["tool"] for c in recorded_calls(calls_file)] == ["echo", "weird name/with:chars!"]


async def test_results_text_image_resource_and_error(
    manager_factory: Factory, koroku_home: Path, calls_file: Path
) -> None:
    write_config(koroku_home / "mcp.json", {"s": stdio_entry(calls_file)})
    manager = manager_factory()
    await manager.start()
    await manager.wait_settled(30)
    manager.specs()
    response, media = await manager.call("s_snapshot", {})
    assert "error" not in response
    assert [(m.mime_type, base64.b64decode(m.data)) for m in media] == [
        ("image/png", base64.b64decode(PNG_B64))
    ]
    response, _ = await manager.call("s_document", {})
    assert response["resources"] == [
        {"uri": "memo://one", "mime_type": "text/plain", "text": "memo text"}
    ]
    response, _ = await manager.call("s_explode", {})
    assert "explode" in response["error"] and "result" not in response


async def test_a_crashed_server_is_restarted_and_works_again(
    manager_factory: Factory, koroku_home: Path, calls_file: Path
) -> None:
    write_config(koroku_home / "mcp.json", {"s": stdio_entry(calls_file)})
    manager = manager_factory()
    notices: list[str] = []
    manager.notices.append(notices.append)
    await manager.start()
    await manager.wait_settled(30)
    manager.specs()
    response, _ = await manager.call("s_crash", {})
    assert "error" in response
    first_pid = recorded_calls(calls_file)[-1]["pid"]
    await until(lambda: state(manager, "s") == "failed" or bool(notices))
    await until(lambda: state(manager, "s") == "ready")
    assert any("'s' stopped" in n for n in notices)
    assert manager.statuses()[0].restarts >= 1
    manager.specs()
    response, _ = await manager.call("s_echo", {"text": "back"})
    assert response == {"result": "echo: back", "structured": {"result": "echo: back"}}
    assert recorded_calls(calls_file)[-1]["pid"] != first_pid
    assert not pid_alive(first_pid)


async def test_a_hanging_call_times_out_and_the_server_stays_usable(
    manager_factory: Factory, koroku_home: Path, calls_file: Path
) -> None:
    write_config(koroku_home / "mcp.json", {"s": stdio_entry(calls_file)})
    manager = manager_factory(McpTiming(**{**FAST.__dict__, "call_timeout": 2.0}))
    await manager.start()
    await manager.wait_settled(30)
    manager.specs()
    response, _ = await manager.call("s_slow", {"seconds": 60})
    assert "did not answer within 2 s" in response["error"]
    response, _ = await manager.call("s_echo", {"text": "still here"})
    assert response["result"] == "echo: still here"


async def test_broken_servers_are_reported_and_the_others_keep_working(
    manager_factory: Factory, koroku_home: Path, calls_file: Path
) -> None:
    write_config(
        koroku_home / "mcp.json",
        {
            "never": hang_entry(),
            "missing": {"command": str(koroku_home / "no-such-program")},
            "dies": {"command": "sh", "args": ["-c", "echo boom >&2; exit 3"]},
            "typo": {"comand": "x"},
            "good": stdio_entry(calls_file),
        },
    )
    manager = manager_factory(McpTiming(**{**FAST.__dict__, "start_timeout": 6.0}))
    notices: list[str] = []
    manager.notices.append(notices.append)
    await manager.start()
    await until(lambda: state(manager, "good") == "ready")
    await until(lambda: state(manager, "never") == "slow")  # still starting, said why
    assert "(initializing)" in (manager.statuses()[0].last_error or "")
    await until(lambda: state(manager, "never") == "failed")
    await until(lambda: all(s.last_error for s in manager.statuses() if s.name != "good"))
    by_name = {s.name: s for s in manager.statuses()}
    assert "did not answer within 6 s (initializing)" in (by_name["never"].last_error or "")
    assert "no-such-program" in (by_name["missing"].last_error or "")
    assert "boom" in (by_name["dies"].last_error or "")
    assert by_name["typo"].state == "invalid" and "'typo'" in (by_name["typo"].last_error or "")
    assert all(any(f"'{n}'" in line for line in notices) for n in ("never", "missing", "typo"))
    names = {s.name for s in manager.specs()}
    assert "good_echo" in names and not any(n.startswith(("never", "dies")) for n in names)
    response, _ = await manager.call("good_echo", {"text": "fine"})
    assert response["result"] == "echo: fine"


async def test_mcp_json_edits_apply_without_a_restart(
    manager_factory: Factory, koroku_home: Path, calls_file: Path
) -> None:
    config = koroku_home / "mcp.json"
    write_config(config, {"a": stdio_entry(calls_file)})
    manager = manager_factory()
    await manager.start()
    await manager.wait_settled(30)
    manager.specs()
    await manager.call("a_echo", {"text": "1"})
    a_pid = recorded_calls(calls_file)[-1]["pid"]

    write_config(
        config, {"a": {**stdio_entry(calls_file), "enabled": False}, "b": stdio_entry(calls_file)}
    )
    await manager.refresh()
    await manager.wait_settled(30)
    assert {s.name: s.state for s in manager.statuses()} == {"a": "disabled", "b": "ready"}
    names = {s.name for s in manager.specs()}
    assert "b_echo" in names and "a_echo" not in names
    await until(lambda: not pid_alive(a_pid))

    config.write_text("{ half written", encoding="utf-8")
    await manager.refresh()
    assert manager.config_error is not None and "not valid JSON" in manager.config_error
    assert {s.name for s in manager.specs()} == names  # b keeps running


async def test_stop_terminates_stdio_servers_and_leaves_no_zombies(
    manager_factory: Factory, koroku_home: Path, calls_file: Path
) -> None:
    before = set(my_children())
    write_config(koroku_home / "mcp.json", {"a": stdio_entry(calls_file), "h": hang_entry()})
    manager = manager_factory()
    await manager.start()
    await until(lambda: state(manager, "a") == "ready")
    assert len(set(my_children()) - before) == 2  # both servers run as our children
    manager.specs()
    await manager.call("a_echo", {"text": "x"})
    pid = recorded_calls(calls_file)[-1]["pid"]
    await manager.stop()
    assert not pid_alive(pid)
    assert set(my_children()) - before == set()  # none left running, none left unreaped
    assert manager.specs() == []


async def test_a_server_that_dies_on_its_own_is_noticed_and_restarted(
    manager_factory: Factory, koroku_home: Path, calls_file: Path
) -> None:
    pids = koroku_home / "pids.txt"
    env = {"MCP_EXIT_AFTER": "3", "MCP_PID_FILE": str(pids)}
    write_config(koroku_home / "mcp.json", {"s": stdio_entry(calls_file, env=env)})
    manager = manager_factory(McpTiming(**{**FAST.__dict__, "health_interval": 0.3}))
    notices: list[str] = []
    manager.notices.append(notices.append)
    await manager.start()
    await until(lambda: state(manager, "s") == "ready")
    await until(lambda: any("MCP server 's'" in n for n in notices))
    await until(lambda: state(manager, "s") == "ready" and len(pids.read_text().split()) >= 2)
    assert manager.statuses()[0].restarts >= 1


async def test_http_headers_from_mcp_json_are_sent(
    manager_factory: Factory, koroku_home: Path, http_server: str
) -> None:
    entry = {"url": http_server, "headers": {"X-Koroku-Token": "sekret"}}
    write_config(koroku_home / "mcp.json", {"web": entry})
    manager = manager_factory()
    await manager.start()
    await manager.wait_settled(30)
    manager.specs()
    response, _ = await manager.call("web_headers", {})
    assert response["structured"]["x-koroku-token"] == "sekret"
