"""Attaching an MCP resource: read through the manager into attachments (server-everything
over stdio and streamable HTTP), URI templates expanded, and how each type is sent to Gemini."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from google import genai

from koroku_desktop.domain.attachment import AttachmentRefused
from koroku_desktop.domain.events import MessageEvent
from koroku_desktop.domain.parts import AttachmentPart
from koroku_desktop.llm.attachments import AttachmentSender
from koroku_desktop.mcp import McpManager
from koroku_desktop.mcp.uri_template import expand, variables
from tests.mcp.conftest import everything_entry, write_config

DOC = "demo://resource/static/document/architecture.md"


async def _ready(manager: McpManager) -> None:
    await manager.start()
    await manager.wait_settled(60)
    assert [s.state for s in manager.statuses()] == ["ready"], manager.statuses()


@pytest.fixture(params=["stdio", "http"])
async def ev_manager(
    request: pytest.FixtureRequest,
    koroku_home: Path,
    manager_factory: Callable[..., McpManager],
) -> McpManager:
    """A started manager with server-everything as `ev`, over stdio or streamable HTTP."""
    entry: dict[str, Any] = (
        everything_entry()
        if request.param == "stdio"
        else {"url": request.getfixturevalue("everything_http")}
    )
    write_config(koroku_home / "mcp.json", {"ev": entry})
    manager = manager_factory()
    await _ready(manager)
    return manager


async def test_resources_are_read_into_attachments(ev_manager: McpManager) -> None:
    manager = ev_manager
    listed = {r.uri: r for r in manager.resources()}
    assert DOC in listed and listed[DOC].mime_type == "text/markdown"
    template = listed["demo://resource/dynamic/text/{resourceId}"]
    assert template.template

    (doc,) = await manager.read_attachments("ev", DOC, "architecture.md")
    assert (doc.server, doc.uri, doc.name, doc.mime_type) == ("ev", DOC, "architecture.md",
                                                              "text/markdown")  # fmt: skip
    assert doc.data.decode().strip()

    uri = expand(template.uri, {"resourceId": "3"})
    (text,) = await manager.read_attachments("ev", uri, "Dynamic Text Resource — 3")
    assert text.data.decode().startswith("Resource 3: This is a plaintext resource")
    blob_uri = "demo://resource/dynamic/blob/4"
    (blob,) = await manager.read_attachments("ev", blob_uri, "blob")
    assert blob.data.decode().startswith("Resource 4: This is a base64 blob")  # decoded bytes

    assert await manager.complete_template(template, "resourceId", "7", {}) == ["7"]
    with pytest.raises(AttachmentRefused, match="MCP server 'nope' is not running"):
        await manager.read_attachments("nope", DOC, "x")
    with pytest.raises(AttachmentRefused, match="MCP server 'ev': "):
        await manager.read_attachments("ev", "demo://resource/dynamic/text/zero", "x")


def test_uri_templates_expand_their_variables() -> None:
    assert variables("demo://r/{id}/{+path}{?q,lang}") == ["id", "path", "q", "lang"]
    assert expand("demo://r/{id}", {"id": "a b/c"}) == "demo://r/a%20b%2Fc"
    assert expand("file:///{+path}", {"path": "a b/c"}) == "file:///a%20b/c"
    assert expand("s://x{?q,lang}", {"q": "tea"}) == "s://x?q=tea"
    assert expand("s://x{/a,b}", {"a": "1", "b": "2"}) == "s://x/1/2"


async def test_resources_go_to_gemini_as_text_inline_data_or_a_name() -> None:
    """Text types as a text part headed by the URI; media inline; other binaries named."""
    blobs = {"t" * 64: b'{"a": 1}', "p" * 64: b"%PDF-1.4 fake", "z" * 64: b"\x00\x01"}

    def part(sha: str, mime: str) -> AttachmentPart:
        size = len(blobs[sha])
        return AttachmentPart(sha256=sha, mime_type=mime, name="r", size=size, server="ev",
                              uri=f"demo://{mime}")  # fmt: skip

    parts = [
        part("t" * 64, "application/json"),
        part("p" * 64, "application/pdf"),
        part("z" * 64, "application/zip"),
    ]
    message = MessageEvent(role="user", origin="person", parts=parts)
    sender = AttachmentSender(blobs.__getitem__, None)
    resolved = await sender.resolve(genai.Client(api_key="unused"), "k", [message])
    text = resolved["t" * 64].text
    assert text == "[MCP resource demo://application/json of server 'ev', application/json]\n" \
        '{"a": 1}'  # fmt: skip
    inline = resolved["p" * 64].inline_data
    assert inline is not None and inline.data == blobs["p" * 64]
    assert inline.mime_type == "application/pdf"
    note = resolved["z" * 64].text or ""
    assert note.endswith("2 bytes of a type the model cannot read; not sent.")
    assert base64.b64encode(b"\x00\x01").decode() not in note


def _function(manager: McpManager, tool: str) -> str:
    return next(s.name for s in manager.specs() if s.name.endswith(tool))


async def test_an_attached_resource_is_subscribed_and_its_updates_reported(
    ev_manager: McpManager,
) -> None:
    manager = ev_manager
    updated = asyncio.Event()
    seen: list[tuple[str, str]] = []

    def on_updated(server: str, uri: str) -> None:
        seen.append((server, uri))
        updated.set()

    manager.on_resource_updated.append(on_updated)
    assert await manager.subscribe("ev", DOC)
    assert not await manager.subscribe("nope", DOC)
    # server-everything sends updates to its subscribers once this tool switches them on
    response, _ = await manager.call(_function(manager, "toggle-subscriber-updates"), {})
    assert "error" not in response, response
    await asyncio.wait_for(updated.wait(), 60)
    assert seen[0] == ("ev", DOC)


async def test_a_list_change_lists_the_resources_again(
    koroku_home: Path, manager_factory: Callable[..., McpManager]
) -> None:
    """server-everything registers a session resource (and says its list changed) when its
    gzip tool runs; the manager's list has it without a restart."""
    write_config(koroku_home / "mcp.json", {"ev": everything_entry()})
    manager = manager_factory()
    await _ready(manager)
    uri = "demo://resource/session/hello.txt.gz"
    assert uri not in {r.uri for r in manager.resources()}
    listed = asyncio.Event()
    manager.on_status_changed.append(
        lambda: listed.set() if uri in {r.uri for r in manager.resources()} else None
    )
    data = "data:text/plain;base64," + base64.b64encode(b"hello").decode()
    args = {"name": "hello.txt.gz", "data": data}
    response, _ = await manager.call(_function(manager, "gzip-file-as-resource"), args)
    assert "error" not in response, response
    await asyncio.wait_for(listed.wait(), 60)
    (gz,) = await manager.read_attachments("ev", uri, "hello.txt.gz")
    assert gz.mime_type == "application/gzip" and gz.data[:2] == b"\x1f\x8b"


NOTES_SERVER = Path(__file__).resolve().parent / "servers" / "notes_server.py"


async def test_a_2026_server_reports_updates_and_list_changes_through_listen(
    koroku_home: Path, manager_factory: Callable[..., McpManager]
) -> None:
    """The SDK's own server speaks 2026-07-28: no resources/subscribe; a listen stream."""
    entry = {"command": sys.executable, "args": [str(NOTES_SERVER)]}
    write_config(koroku_home / "mcp.json", {"notes": entry})
    manager = manager_factory()
    await _ready(manager)
    assert manager.statuses()[0].protocol == "2026-07-28"
    seen: list[tuple[str, str]] = []
    updated = asyncio.Event()
    manager.on_resource_updated.append(lambda s, u: (seen.append((s, u)), updated.set()))
    (note,) = await manager.read_attachments("notes", "note://today", "today")
    assert note.data == b"Buy tea."
    assert await manager.subscribe("notes", "note://today")
    listed = asyncio.Event()
    manager.on_status_changed.append(
        lambda: listed.set() if "note://later" in {r.uri for r in manager.resources()} else None
    )

    # A tool call may race the stream opened again with the new URI: edit until it is seen.
    async def edit_until_seen() -> None:
        while not updated.is_set():
            await manager.call(_function(manager, "edit"), {"text": "Buy more tea."})
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(updated.wait(), 2)

    await asyncio.wait_for(edit_until_seen(), 60)
    assert seen[0] == ("notes", "note://today")
    await manager.call(_function(manager, "add"), {"name": "later", "text": "Call Bo."})
    await asyncio.wait_for(listed.wait(), 60)
