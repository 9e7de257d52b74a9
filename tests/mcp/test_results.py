"""Results, hints and logs against real servers: rich_server.py and server-everything."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Callable
from pathlib import Path

from koroku_desktop.mcp import McpManager
from koroku_desktop.tools.approval import ApprovalPolicy
from koroku_desktop.tools.registry import ToolRegistry
from tests.mcp.conftest import PNG_B64, everything_entry, rich_entry, write_config

Factory = Callable[..., McpManager]


async def until(predicate: Callable[[], bool], seconds: float = 60.0) -> None:
    """Poll the loop until `predicate` holds (a deadline, not a timing assert)."""
    for _ in range(int(seconds / 0.05)):
        if predicate():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("condition not reached")


async def _ready(factory: Factory, home: Path, servers: dict[str, object]) -> McpManager:
    write_config(home / "mcp.json", servers)
    manager = factory()
    await manager.start()
    await manager.wait_settled(60)
    assert all(s.state == "ready" for s in manager.statuses()), manager.statuses()
    manager.specs()
    return manager


async def test_blobs_are_text_media_or_named_by_type(
    manager_factory: Factory, koroku_home: Path
) -> None:
    manager = await _ready(manager_factory, koroku_home, {"r": rich_entry()})
    response, media = await manager.call("r_blobs", {})
    by_uri = {r["uri"]: r for r in response["resources"]}
    assert by_uri["data://config.json"]["text"] == '{"a": 1}'
    assert by_uri["data://table.csv"] == {
        "uri": "data://table.csv", "mime_type": "text/csv", "text": "name,n\nå,1\n"
    }  # fmt: skip
    zipped = by_uri["data://bundle.zip"]
    assert zipped["size"] == 64 and "not sent" in zipped["note"] and "text" not in zipped
    assert by_uri["data://dot.png"]["attached"] is True
    assert [(m.mime_type, m.data) for m in media] == [("image/png", PNG_B64)]


async def test_structured_content_is_checked_against_the_output_schema(
    manager_factory: Factory, koroku_home: Path
) -> None:
    manager = await _ready(manager_factory, koroku_home, {"r": rich_entry()})
    response, _ = await manager.call("r_liar", {})
    assert "Invalid structured content" in response["error"]
    assert "'many' is not of type 'integer'" in response["error"]


async def test_hints_reach_the_card_and_the_policy(
    manager_factory: Factory, koroku_home: Path
) -> None:
    manager = await _ready(manager_factory, koroku_home, {"r": rich_entry()})
    registry = ToolRegistry(koroku_home / "tools")
    registry.add_source(manager)
    registry.specs()
    assert "marked destructive" in (registry.describe("r_wipe") or "")
    assert "marked open-world" in (registry.describe("r_lookup") or "")
    policy = ApprovalPolicy(always=["r_wipe", "r_lookup"])
    assert policy.needs_asking("r_wipe", registry)  # destructive: asked every time
    assert not policy.needs_asking("r_lookup", registry)  # granted, not destructive
    policy.grant("r_wipe", "session")
    assert policy.needs_asking("r_wipe", registry)


async def test_log_notifications_go_to_the_servers_log(
    manager_factory: Factory, koroku_home: Path
) -> None:
    manager = await _ready(
        manager_factory, koroku_home, {"r": rich_entry(), "ev": everything_entry()}
    )
    response, _ = await manager.call("r_chatter", {})
    assert response["result"] == "said it"
    rich_log = manager.log_path("r")
    assert rich_log is not None
    await until(lambda: "INFO server] chatter is thinking" in rich_log.read_text("utf-8"))
    response, _ = await manager.call("ev_toggle-simulated-logging", {})
    assert "Started simulated" in response["result"]
    ev_log = manager.log_path("ev")
    assert ev_log is not None
    await until(lambda: "-level message" in ev_log.read_text("utf-8"))
    assert "Debug-level message" not in ev_log.read_text("utf-8")  # we asked for info and up


async def test_server_everything_over_stdio_and_http(
    manager_factory: Factory, koroku_home: Path, everything_http: str
) -> None:
    manager = await _ready(
        manager_factory,
        koroku_home,
        {"ev": everything_entry(), "evh": {"url": everything_http}, "r": rich_entry()},
    )
    protocols = {s.name: s.protocol for s in manager.statuses()}
    assert protocols == {"ev": "2025-11-25", "evh": "2025-11-25", "r": "2026-07-28"}
    for server in ("ev", "evh"):
        response, _ = await manager.call(
            f"{server}_get-resource-reference", {"resourceType": "Blob", "resourceId": 2}
        )
        (resource,) = response["resources"]
        assert resource["uri"] == "demo://resource/dynamic/blob/2"
        assert resource["text"].startswith("Resource 2: This is a base64 blob")
        response, _ = await manager.call(
            f"{server}_get-structured-content", {"location": "Chicago"}
        )
        assert set(response["structured"]) == {"temperature", "conditions", "humidity"}
        response, media = await manager.call(f"{server}_get-tiny-image", {})
        assert [m.mime_type for m in media] == ["image/png"]
        base64.b64decode(media[0].data, validate=True)
