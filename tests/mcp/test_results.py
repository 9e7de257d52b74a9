"""Results, hints and logs against real servers: rich_server.py and server-everything."""

from __future__ import annotations

import base64
from collections.abc import Callable
from pathlib import Path

from koroku_desktop.mcp import McpManager
from koroku_desktop.tools.approval import ApprovalPolicy
from koroku_desktop.tools.registry import ToolRegistry
from tests.e2e.conftest import Koroku
from tests.fakes.gemini_server import FakeGemini
from tests.mcp.conftest import PNG_B64, everything_entry, rich_entry, write_config
from tests.mcp.test_cli_mcp import _responses
from tests.mcp.test_manager import until

Factory = Callable[..., McpManager]


async def ready_manager(factory: Factory, home: Path, servers: dict[str, object]) -> McpManager:
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
    manager = await ready_manager(manager_factory, koroku_home, {"r": rich_entry()})
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
    manager = await ready_manager(manager_factory, koroku_home, {"r": rich_entry()})
    response, _ = await manager.call("r_liar", {})
    assert "Invalid structured content" in response["error"]
    assert "'many' is not of type 'integer'" in response["error"]


async def test_hints_reach_the_card_and_the_policy(
    manager_factory: Factory, koroku_home: Path
) -> None:
    manager = await ready_manager(manager_factory, koroku_home, {"r": rich_entry()})
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
    manager = await ready_manager(
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
    manager = await ready_manager(
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


async def test_resources_are_listed_and_the_model_may_read_a_linked_one(
    manager_factory: Factory, koroku_home: Path
) -> None:
    manager = await ready_manager(manager_factory, koroku_home, {"ev": everything_entry()})
    (status,) = manager.statuses()
    uris = {r.uri for r in status.resources if not r.template}
    templates = {r.uri for r in status.resources if r.template}
    assert "demo://resource/static/document/architecture.md" in uris
    assert "demo://resource/dynamic/text/{resourceId}" in templates
    spec = next(s for s in manager.specs() if s.name == "read_mcp_resource")
    assert "'ev'" in spec.description and manager.is_read_only("read_mcp_resource")
    response, _ = await manager.call("ev_get-resource-links", {"count": 2})
    link = next(r for r in response["resources"] if r.get("link"))
    response, _ = await manager.call("read_mcp_resource", {"server": "ev", "uri": link["uri"]})
    (content,) = response["contents"]
    assert content["uri"] == link["uri"] and (content.get("text") or content.get("attached"))
    response, _ = await manager.call("read_mcp_resource", {"server": "nope", "uri": "x://y"})
    assert "no MCP server 'nope' with resources (servers: 'ev')" in response["error"]
    response, _ = await manager.call(
        "read_mcp_resource", {"server": "ev", "uri": "demo://resource/missing/zzz"}
    )
    assert response["error"].startswith("MCP server 'ev': ")


def test_ask_reads_a_resource_as_a_read_only_step(koroku: Koroku, fake_gemini: FakeGemini) -> None:
    write_config(koroku.home / "mcp.json", {"ev": everything_entry()})
    uri = "demo://resource/static/document/features.md"
    fake_gemini.reply_calls(("read_mcp_resource", {"server": "ev", "uri": uri}))
    fake_gemini.reply_text("read it")
    listing = koroku.run("mcp", "list", "--wait", "60")
    assert "resources: " in listing.stdout and "protocol: 2025-11-25" in listing.stdout
    result = koroku.run(
        "ask", "--yes", "what does the features doc say?", timeout=120, KOROKU_MCP_WAIT="60"
    )
    assert result.returncode == 0, result.stderr
    assert "read_mcp_resource" in fake_gemini.generate_requests()[0].tool_names
    (response,) = _responses(fake_gemini)
    (content,) = response["response"]["contents"]
    assert content["uri"] == uri and "Features" in content["text"]
