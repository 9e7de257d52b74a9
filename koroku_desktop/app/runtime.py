"""Composition: wires the real event log, Gemini adapter, tools and agent for a front end.

Both front ends (`cli`, `ui.app`) build their agent here, so the wiring exists once. The
Gemini SDK is imported lazily, on the first request, so windows can appear before it loads.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from koroku_desktop.agent.compaction import Compactor
from koroku_desktop.agent.conversations import ConversationBook
from koroku_desktop.agent.embedding import BackgroundEmbedder
from koroku_desktop.agent.facts import FactBook
from koroku_desktop.agent.loop import Agent, AgentOptions
from koroku_desktop.agent.ports import Approver, ChatModel
from koroku_desktop.agent.recall import HybridSearch
from koroku_desktop.agent.titles import Titler
from koroku_desktop.app.agent_pool import AgentKit, AgentPool, follow_settings
from koroku_desktop.app.config import (
    ApiKey,
    KeyringSecrets,
    Paths,
    Settings,
    default_paths,
    resolve_api_key,
)
from koroku_desktop.app.conversation_wiring import (
    opening_conversation,
)
from koroku_desktop.app.lazy_model import LazyGeminiModel
from koroku_desktop.app.memory_sync import sync_memory_held
from koroku_desktop.app.recall_wiring import (
    LazyGeminiEmbedder,
    build_recall,
    progress_text,
)
from koroku_desktop.app.recall_wiring import recall_search as recall_search
from koroku_desktop.app.settings_store import SettingsStore, add_grant
from koroku_desktop.app.sync_wiring import SyncRuntime, SyncSwitch
from koroku_desktop.blobs.attachments import AttachmentRefused as AttachmentRefused
from koroku_desktop.blobs.attachments import AttachmentStore as AttachmentStore
from koroku_desktop.blobs.attachments import read_attachment_file as read_attachment_file
from koroku_desktop.blobs.blob_store import BlobStore
from koroku_desktop.blobs.blob_store import MissingBlob as MissingBlob
from koroku_desktop.domain.conversations import DEFAULT_CONVERSATION, Conversation
from koroku_desktop.domain.ids import writer_name
from koroku_desktop.domain.queries import SearchHit
from koroku_desktop.domain.recall import MemoryMatch
from koroku_desktop.maintenance.doctor import diagnose as check_database
from koroku_desktop.maintenance.doctor import recover as recover_database
from koroku_desktop.maintenance.tutorial_import import ImportReport, import_tutorial_db
from koroku_desktop.store import SqliteEventLog
from koroku_desktop.store.db_errors import (
    DB_ERRORS,
    DatabaseUnavailable,
    explain,
    open_event_log,
)
from koroku_desktop.store.local_lease import SqliteTurnLock
from koroku_desktop.tools.approval import ApprovalPolicy
from koroku_desktop.tools.registry import ToolRegistry

if TYPE_CHECKING:  # re-exported for the front ends; loaded on first use (`__getattr__`)
    from koroku_desktop.mcp import McpElicitAnswer as McpElicitAnswer
    from koroku_desktop.mcp import McpElicitation as McpElicitation
    from koroku_desktop.mcp import McpManager as McpManager
    from koroku_desktop.mcp import McpProgress as McpProgress
    from koroku_desktop.mcp import McpPromptError as McpPromptError
    from koroku_desktop.mcp import McpPromptInfo as McpPromptInfo
    from koroku_desktop.mcp import McpResourceInfo as McpResourceInfo
    from koroku_desktop.mcp import ServerStatus as ServerStatus
    from koroku_desktop.mcp import SignInFailed as SignInFailed
    from koroku_desktop.mcp import SignInTimeout as SignInTimeout
    from koroku_desktop.mcp import UrlOpener as UrlOpener
    from koroku_desktop.mcp import elicit_form as elicit_form
    from koroku_desktop.mcp import prompt_commands as prompt_commands
    from koroku_desktop.mcp import uri_template as uri_template

_MCP_MODULES = ("elicit_form", "prompt_commands", "uri_template")


def __getattr__(name: str) -> object:
    """The MCP client's names, re-exported for the front ends, loaded when first asked for:
    `koroku ask` without an mcp.json never loads the MCP modules (~10-20 ms)."""
    if name in _MCP_MODULES:
        return importlib.import_module(f"koroku_desktop.mcp.{name}")
    if name[:1].isupper():  # a class of the MCP client's, if it has one by that name
        mcp = importlib.import_module("koroku_desktop.mcp")
        if name in mcp.__all__:
            return getattr(mcp, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


log = logging.getLogger(__name__)

__all__ = [
    "DB_ERRORS",
    "DatabaseUnavailable",
    "check_database",
    "explain",
    "recover_database",
]  # re-exported for the front ends

CONVERSATION_ID = DEFAULT_CONVERSATION
"""The log's first conversation (the one a fresh data dir starts in)."""


@dataclass
class Runtime:
    """Everything a front end needs, wired."""

    paths: Paths
    settings_store: SettingsStore
    log: SqliteEventLog
    tools: ToolRegistry
    policy: ApprovalPolicy
    model: LazyGeminiModel
    """The Gemini adapter and the key it uses (the agent's model unless another was handed
    to `build_runtime`)."""
    agent: Agent
    compactor: Compactor = field(default_factory=Compactor)
    mcp: McpManager | None = None
    """The MCP servers of mcp.json (start them with `start_mcp`, stop with `stop_mcp`)."""
    turn_lock: SqliteTurnLock | None = None
    """The cross-process turn lease (None for a read-only runtime, which runs no turns)."""
    search: HybridSearch | None = None
    """The one search (keywords and meaning) every front end uses."""
    background_embedder: BackgroundEmbedder | None = None
    attachments: AttachmentStore | None = None
    """Koroku's copies of attached files (the blob store)."""
    facts: FactBook | None = None
    """What Koroku knows about the user, read from the log (`koroku memory`, Settings)."""
    conversations: ConversationBook | None = None
    """Every conversation of the log (the agent talks in one of them at a time)."""
    titler: Titler | None = None
    """Names a new conversation after its first exchange (None for a read-only runtime)."""

    pool: AgentPool | None = None
    """The agent of each conversation with work under way (`agent` is the shown one's)."""

    @property
    def kit(self) -> AgentKit:
        """How this runtime's agents are built (each conversation's, quick ask's, a task's)."""
        assert self.pool is not None, "build_runtime always makes the pool"
        return self.pool.kit

    async def switch_to(self, conversation: Conversation) -> None:
        """Talk in `conversation` from the next turn on; a turn running in the one shown
        goes on there (see `AgentPool.show`)."""
        if self.pool is None:
            raise RuntimeError("this runtime talks in one conversation")
        self.agent = await self.pool.show(conversation)
        self.compactor = self.pool.compactor

    def connect_clients(self) -> None:
        """Build the SDK clients (the chat model's, the embedder's) now, on the loop's thread,
        after `model.prepare`: built on first use, the embedder's TLS contexts stalled the
        loop for 60-90 ms at the start of a turn (it surfaces memories before answering)."""
        self.model.connect()
        if self.search is not None and isinstance(self.search.embedder, LazyGeminiEmbedder):
            self.search.embedder.connect()

    sync: SyncRuntime | None = None
    """Sync with the hub (None: no hub configured); the app starts it through `sync_switch`."""
    sync_switch: SyncSwitch | None = None
    """Follows the settings' hub URL while the app runs (None for a read-only runtime)."""

    @property
    def api_key(self) -> ApiKey | None:
        """The key the model uses (see `LazyGeminiModel.api_key`)."""
        return self.model.api_key

    @property
    def settings(self) -> Settings:
        """The effective settings in use (see `SettingsStore.effective`)."""
        return self.settings_store.effective

    def apply_settings(self, settings: Settings) -> None:
        """Take settings into use now (the next turn sees them); the store calls it on change."""
        follow_settings(self.agent.options, settings)  # every conversation's agent's
        self.remember_facts(settings.remember_facts)
        self.policy.set_always(settings.always_allow)
        self.policy.trust_read_only = settings.mcp_trust_read_only
        if self.mcp is not None:
            self.mcp.reload_if_changed()
        if self.background_embedder is not None:
            self.background_embedder.embedder.model = settings.embedding_model
        if self.sync_switch is not None and self.sync_switch.apply(settings):
            self.sync = self.sync_switch.current  # a new hub URL, or sync turned on or off

    def remember_facts(self, on: bool) -> None:
        """Turn the facts about the user on or off for the next request (the `remember`
        tool is offered only while on); the stored facts stay either way."""
        self.agent.options.remember_facts = on
        if on:
            self.tools.switched_off.discard("remember")
        else:
            self.tools.switched_off.add("remember")

    async def find(
        self, query: str, limit: int
    ) -> tuple[list[SearchHit], str | None, list[MemoryMatch]]:
        """The one search (a `Finder`): by keywords and meaning, or keywords only with a note;
        and the memory files' pieces close in meaning.

        Keyword-only is the full-text search (every word, newest first), off the loop.
        """
        memory: list[MemoryMatch] = []
        if self.search is not None:
            result = await self.search.search(query, limit)
            memory = result.memory
            if result.mode == "hybrid" and result.hits:
                return [h.hit for h in result.hits], None, memory
            note = result.note
        else:
            note = "keyword search only"
        return await asyncio.to_thread(self.log.search, query, limit), note, memory

    async def embedding_progress(self) -> str:
        """A line on how much of the log is embedded for search by meaning ('' if unknown)."""
        worker = self.background_embedder
        if worker is None or self.model.api_key is None:
            return ""
        model, dims = worker.embedder.model, worker.embedder.dimensions
        status = await asyncio.to_thread(self.log.vectors.status, model, dims)
        return progress_text(status, worker.last_error)

    def persist_always_grant(self, tool: str) -> None:
        """Record an 'always allow' grant in settings.json (keeping others' changes)."""
        self.settings_store.update(add_grant(tool))

    def set_mcp_trust_read_only(self, trust: bool) -> None:
        """Let read-only MCP tools run without asking (or not), now and in settings.json."""
        self.settings_store.update({"mcp_trust_read_only": trust})

    async def sync_memory(self, *, wait: bool = True) -> bool:
        """Take memory files changed while Koroku was closed into the log, then write every
        file from the log, under the turn lease (see app/memory_sync.py). False when skipped:
        a read-only runtime, or another front end's turn runs and `wait` is False. Front
        ends call it before their first turn (the app once its window is up)."""
        if self.log.read_only:
            return False
        return await sync_memory_held(self.agent, self.log, self.paths.home, wait=wait)

    async def start_mcp(
        self, wait_s: float = 0.0, notice: Callable[[str], object] | None = None
    ) -> None:
        """Start the MCP servers in the background; wait up to `wait_s` for them (the CLI does).

        `notice` gets one line whenever a server fails or mcp.json is bad. The desktop app
        calls this once the window is up, never waiting. It never raises.
        """
        if self.mcp is None:
            return
        if notice is not None:
            self.mcp.notices.append(notice)
        try:
            await self.mcp.start()
            if wait_s > 0:
                await self.mcp.wait_settled(wait_s)
        except Exception:  # start_mcp never raises: a server's failure is its status
            log.warning("the MCP servers could not be started", exc_info=True)

    async def stop_mcp(self) -> None:
        """Stop every MCP server (stdio processes terminated and reaped)."""
        if self.mcp is not None:
            await self.mcp.stop()

    def close(self) -> None:
        """Give back the turn lease (if held), stop background embedding, close the database."""
        if self.background_embedder is not None:
            self.background_embedder.cancel()
        if self.sync_switch is not None:
            self.sync_switch.close()
        if self.turn_lock is not None:
            self.turn_lock.close()
        if self.attachments is not None:
            self.attachments.discard_copies()
        self.log.close()


def mcp_manager(paths: Paths) -> McpManager:
    """The MCP servers of `<data dir>/mcp.json`, their stderr logged under `<data dir>/logs`."""
    from koroku_desktop.mcp import McpManager

    return McpManager(paths.mcp_config, paths.logs, secrets=KeyringSecrets())


def build_runtime(
    approver: Approver,
    paths: Paths | None = None,
    *,
    read_only: bool = False,
    front_end: str = "app",
    model: ChatModel | None = None,
    clock: Callable[[], datetime] | None = None,
    settings_store: SettingsStore | None = None,
    event_log: SqliteEventLog | None = None,
    conversation: str | None = None,
    one_shot: bool = False,
) -> Runtime:
    """Open the data dir and wire the agent. Raises `SettingsError` for bad settings and
    `DatabaseUnavailable` for a database that cannot be used (`read_only`: see
    `open_event_log`).

    `front_end` (app, ask, chat, compact...) is recorded on every event written and on the
    turn lease, so another front end can say whose turn it is waiting for. The rest replace
    what would be built from `paths`: `model` the agent's chat model (Gemini; tests hand in a
    `FakeChatModel`), `clock` the time a turn is sent at, `settings_store` the settings,
    `event_log` an open log of `paths.db`. `conversation` names the conversation to talk in
    (an id, id prefix or title; None: the most recently active one); a name that matches
    none or several raises `UnknownConversation` / `AmbiguousConversation`. `one_shot`: a
    command that runs one turn and exits (`koroku ask`) reads mcp.json once, so without one
    it has no MCP manager (`mcp` is None) and loads none of the MCP modules.
    """
    paths = paths or default_paths()
    settings_store = settings_store or SettingsStore.open(paths)
    settings = settings_store.effective
    opened = event_log is None
    if event_log is None:
        event_log = open_event_log(paths.db, read_only=read_only, writer=writer_name(front_end))
    book = ConversationBook(event_log)
    try:
        chosen = opening_conversation(book, conversation, writable=not event_log.read_only)
    except BaseException:
        if opened:  # a log handed in stays its owner's to close
            event_log.close()
        raise
    turn_lock = None if event_log.read_only else SqliteTurnLock(paths.db, front_end)
    switch = None if turn_lock is None else SyncSwitch(event_log, paths, settings, turn_lock)
    sync = switch.current if switch is not None else None
    tools = ToolRegistry(paths.tools)
    mcp = None if one_shot and not paths.mcp_config.exists() else mcp_manager(paths)
    if mcp is not None:
        tools.add_source(mcp)
    # With a hub, the blob store fetches an attachment made on another device on first need.
    attachments = AttachmentStore(switch.blobs if switch else BlobStore(paths.blobs))
    gemini = LazyGeminiModel(resolve_api_key(), attachments.read, paths.home / "uploads.json")
    policy = ApprovalPolicy(always=settings.always_allow)
    policy.trust_read_only = settings.mcp_trust_read_only
    options = AgentOptions(settings.model, settings.max_tool_calls, Path(), paths.home)
    follow_settings(options, settings)  # the workspace and the rest
    kit = AgentKit(
        event_log,
        gemini if model is None else model,
        tools,
        policy,
        approver,
        options,
        switch.lock if switch is not None else turn_lock,
        clock=clock,
    )
    search, background = build_recall(  # one SDK client a process: the chat model's
        event_log,
        lambda: gemini.api_key,
        settings.embedding_model,
        paths.memory,
        gemini.sdk_client,
    )
    kit.search, kit.embedder, kit.facts = search, background, FactBook(event_log)
    if turn_lock is not None:
        kit.titler = Titler(book, kit.model, lambda: options.model)
    agent, compactor = kit.build(chosen)
    pool = AgentPool(kit, agent, compactor)
    pool.single = front_end != "app"  # a terminal talks in one conversation at a time
    # A retry is told in the conversation shown (the model does not say whose request it is).
    gemini.on_retry.append(lambda *args: runtime.agent.hooks.on_retry(*args))
    runtime = Runtime(
        paths,
        settings_store,
        event_log,
        tools,
        policy,
        gemini,
        agent,
        compactor,
        mcp=mcp,
        turn_lock=turn_lock,
        attachments=attachments,
        sync=sync,
        sync_switch=switch,
        search=search,
        background_embedder=background,
        facts=kit.facts,
        conversations=book,
        titler=kit.titler,
        pool=pool,
    )
    runtime.remember_facts(settings.remember_facts)
    policy.on_always_granted = runtime.persist_always_grant
    settings_store.subscribe(runtime.apply_settings)
    return runtime


def import_tutorial(runtime: Runtime, path: Path) -> ImportReport:
    """Import a tutorial SessionManager database into this conversation."""
    return import_tutorial_db(path, runtime.log, runtime.agent.conversation_id)
