"""`koroku chat` and `koroku ask`: talking to Koroku in a terminal."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from koroku_desktop.agent.hooks import ContextMeter, TurnResult
from koroku_desktop.agent.loop import Agent
from koroku_desktop.agent.supersede import SupersedeError, last_turn
from koroku_desktop.agent.turn_gate import TurnBusyError
from koroku_desktop.app.runtime import AttachmentRefused, Runtime, read_attachment_file
from koroku_desktop.cli import collector, one_shot
from koroku_desktop.cli.attach_input import attach_command, keep_attachments
from koroku_desktop.cli.conversation_switch import (
    add_conversation_option,
    conversation_command,
    replay,
    settle_title,
    where_line,
)
from koroku_desktop.cli.keyboard import ctrl_c_stops
from koroku_desktop.cli.refusal import refused
from koroku_desktop.cli.session import CliExit, open_runtime
from koroku_desktop.cli.terminal import (
    EXIT_PIPE,
    TerminalApprover,
    compaction_progress,
    render_message,
    sources_text,
    stdout_to_devnull,
)
from koroku_desktop.cli.text_input import argument_text, stdin_text
from koroku_desktop.domain.attachment import PendingAttachment
from koroku_desktop.domain.events import CompactionEvent, MessageEvent, StoredEvent
from koroku_desktop.domain.lease import LockHolder
from koroku_desktop.domain.model_io import finish_notice
from koroku_desktop.domain.parts import (
    FunctionCallPart,
    FunctionResponsePart,
    visible_text,
)
from koroku_desktop.render.citations import cite
from koroku_desktop.render.text import mark, short_args

if TYPE_CHECKING:
    from koroku_desktop.cli.mcp_prompts import AskLine

EXIT_WORDS = {"exit", "quit", ":q"}


def register(sub: Any) -> None:
    """Add the conversation commands."""
    chat = sub.add_parser("chat", help="talk to Koroku in this terminal")
    chat.add_argument("--yes", action="store_true", help="approve every tool call")
    add_conversation_option(chat)
    chat.set_defaults(handler=cmd_chat)

    ask = sub.add_parser("ask", help="one turn; prints only the answer on stdout")
    ask.add_argument("--yes", action="store_true", help="approve every tool call")
    add_conversation_option(ask)
    ask.add_argument(
        "--no-wait",
        action="store_true",
        help="if another window or terminal is in a turn, fail at once (exit 3)",
    )
    ask.add_argument(
        "-a",
        "--attach",
        action="append",
        default=[],
        type=Path,
        metavar="PATH",
        help="attach a file (image, PDF, text or source, audio); repeatable",
    )
    ask.add_argument("text", nargs="+", help="the question; `-` reads it from stdin")
    ask.set_defaults(handler=cmd_ask)


def _progress_hooks(runtime: Runtime, out: Any) -> None:
    """Show tool calls as `→ name(args)` then ✓/✗ on `out`."""

    def on_call(call: FunctionCallPart) -> None:
        out.write(f"  → {call.name}({short_args(call.args)})\n")
        out.flush()

    def on_result(call: FunctionCallPart, part: FunctionResponsePart) -> None:
        detail = f" {part.response['error']}" if "error" in part.response else ""
        out.write(f"  {mark(part.failed)} {call.name}{detail}\n")
        out.flush()

    runtime.agent.hooks.on_tool_call.append(on_call)
    runtime.agent.hooks.on_tool_result.append(on_result)


def _waiting_notice(runtime: Runtime) -> None:
    """Say on stderr when the turn waits for another front end's (once per holder), and when
    a rate-limited request is tried again."""

    def on_wait(holder: LockHolder) -> None:
        print(
            f"waiting for the turn running in {holder.where()}...",
            file=sys.stderr,
            flush=True,
        )

    def on_retry(attempt: int, attempts: int, reason: str) -> None:
        print(f"retrying ({attempt} of {attempts}): {reason}", file=sys.stderr, flush=True)

    runtime.agent.hooks.on_turn_waiting.append(on_wait)
    runtime.agent.hooks.on_retry.append(on_retry)


def _show_others(runtime: Runtime) -> None:
    """Print what other front ends appended when this one catches up with the log (on the
    stdout of the moment: while the prompt waits, above it)."""
    agent = runtime.agent

    def on_event(stored: StoredEvent) -> None:
        out = sys.stdout
        if stored.turn_id == agent.current_turn_id:
            return  # our own turn: shown as it streams
        if isinstance(stored.event, MessageEvent):
            render_message(stored.event, out)
        elif isinstance(stored.event, CompactionEvent):
            out.write("(the conversation was compacted elsewhere)\n")
        else:
            out.write("(the conversation was cleared elsewhere)\n")
        out.flush()

    agent.hooks.on_event_appended.append(on_event)


def _read_question(words: list[str]) -> str:
    if words == ["-"]:
        return stdin_text().strip()
    return argument_text(words).strip()


def cmd_ask(args: argparse.Namespace) -> int:
    """One turn in the same conversation; exit 0 ok, 1 API failure, 2 usage or no key,
    3 another front end's turn is running and `--no-wait` was given."""
    try:  # every file is read and checked before anything is stored or sent
        pending = [read_attachment_file(path) for path in args.attach]
    except AttachmentRefused as exc:
        return refused("ask", exc)
    text = _read_question(args.text)
    if not text:
        print("koroku ask: nothing to ask", file=sys.stderr)
        return 2
    answered: list[str] = []
    pipe_closed: list[bool] = []

    def on_reply(reply: MessageEvent) -> None:
        collector.resume_frozen()  # start-up is over (the SDK is loaded)
        # The answer is printed as soon as it arrives: a compaction after the turn (a long
        # history) must not hold it back.
        if reply.function_calls or answered:
            return
        answered.append(visible_text(reply.parts))
        grounding = reply.grounding
        try:
            print(answered[0] if grounding is None else cite(answered[0], grounding), flush=True)
            if sources := sources_text(reply):
                print(sources, flush=True)
        except BrokenPipeError:  # `koroku ask … | head`: the turn still ends and is kept
            stdout_to_devnull()
            pipe_closed.append(True)
        notice = finish_notice(reply.finish_reason)
        if notice is not None:
            print(f"koroku: {notice}", file=sys.stderr, flush=True)

    try:
        approver = TerminalApprover(args.yes)
        with open_runtime(
            approver,
            need_key=True,
            front_end="ask",
            conversation=args.conversation,
            one_shot=True,  # without an mcp.json, no MCP modules are loaded
        ) as runtime:
            approver.workspace = runtime.agent.options.workspace
            _progress_hooks(runtime, sys.stderr)
            runtime.agent.hooks.on_model_response.append(on_reply)
            runtime.compactor.progress.append(compaction_progress)
            _waiting_notice(runtime)
            # No UI to keep responsive: the log's small reads and writes run inline.
            turn = _ask(runtime, text, wait=not args.no_wait, attached=pending)
            result = one_shot.run(turn)
    except CliExit as exc:
        return exc.code
    except TurnBusyError as exc:
        print(f"koroku ask: {exc}; not waiting (--no-wait)", file=sys.stderr)
        return 3
    if result.error is not None:
        print(f"koroku: {result.error.message}", file=sys.stderr)
        return 1
    if result.cancelled:
        return 130
    if pipe_closed:
        return EXIT_PIPE
    if not answered or answered[0] != result.text:
        print(result.text)
    return 0


def _mcp_notice(line: str) -> None:
    """A server that fails or crashes is reported on stderr."""
    print(f"koroku: {line}", file=sys.stderr)


async def _ask(
    runtime: Runtime, text: str, *, wait: bool, attached: list[PendingAttachment] | None = None
) -> TurnResult:
    """One turn with the MCP servers up (waiting briefly for them to start) and then stopped.

    `wait=False`: `TurnBusyError` at once if another front end's turn is running.
    """
    try:
        if runtime.mcp is not None:
            from koroku_desktop.cli.mcp_commands import follow_progress, mcp_start_wait

            await runtime.start_mcp(mcp_start_wait(), _mcp_notice)
            follow_progress(runtime.mcp)
        parts = await keep_attachments(runtime, attached or [])
        await runtime.sync_memory(wait=wait)  # files edited while Koroku was closed
        result = await runtime.agent.run_turn(text, wait=wait, attachments=parts)
    finally:
        await runtime.stop_mcp()
    await wind_down(runtime)
    return result


async def wind_down(runtime: Runtime) -> None:
    """What a terminal session finishes before it exits: a compaction it started, a new
    conversation's title, and the embedding of what it wrote (about a second; the rest is
    picked up by the next process that searches, or by the app)."""
    await finish_compaction(runtime)
    await settle_title(runtime)
    if runtime.background_embedder is not None and runtime.model.has_key:
        await runtime.background_embedder.settle()


async def finish_compaction(runtime: Runtime) -> None:
    """Finish a compaction the turn started (the answer is already out), saying so.

    Finished here rather than left for the next process: with one `ask` at a time, a
    compaction left behind would be started and dropped again by every run. It runs outside
    the turn lease (other front ends' turns go on) and Ctrl-C stops it with nothing written.
    """
    compactor = runtime.compactor
    if not compactor.running:
        return
    print(
        "koroku: compacting the history in the background (other turns may run meanwhile; "
        "Ctrl-C stops it safely and the next turn starts it again)",
        file=sys.stderr,
        flush=True,
    )
    if await compactor.wait() is None and compactor.last_problem:
        print(f"koroku: not compacted: {compactor.last_problem}", file=sys.stderr)


def _meter_text(meter: ContextMeter) -> str:
    left = max(0.0, 1.0 - meter.fraction) * 100
    return f"[{left:.0f}% context left before compaction]"


async def _chat_loop(runtime: Runtime) -> None:
    # prompt_toolkit and rich are chat's own: `koroku ask` starts without them (and the MCP
    # commands' modules, loaded by `ask` only when it has MCP servers).
    from koroku_desktop.cli import repl
    from koroku_desktop.cli.markdown_out import AnswerStream
    from koroku_desktop.cli.mcp_commands import follow_progress, mcp_start_wait
    from koroku_desktop.cli.mcp_elicit import terminal_elicitor

    agent = runtime.agent
    await runtime.sync_memory()  # files edited while Koroku was closed, before any turn
    await replay(runtime)
    print(f"\nKoroku ({runtime.settings.model}). {repl.WELCOME}")
    if where := where_line(runtime):
        print(where)
    answer = AnswerStream(sys.stdout, rich_terminal=sys.stdout.isatty())

    def on_finished(result: TurnResult) -> None:
        answer.finish()
        if result.error is not None:
            print(f"✗ {result.error.message}", file=sys.stderr)
        elif result.cancelled:
            print("(stopped)", file=sys.stderr)
        elif result.notice is not None:
            print(f"⚠ {result.notice}", file=sys.stderr)

    def on_reply(reply: MessageEvent) -> None:
        if sources := sources_text(reply):
            sys.stdout.write(f"\n{sources}" if answer.open else sources)
            answer.interrupted()

    agent.hooks.on_text_delta.append(answer.write)
    agent.hooks.on_tool_call.append(lambda _call: answer.interrupted())
    agent.hooks.on_model_response.append(on_reply)
    agent.hooks.on_turn_finished.append(on_finished)
    agent.hooks.on_context_meter.append(lambda m: print(_meter_text(m), file=sys.stderr))
    _progress_hooks(runtime, sys.stdout)
    _waiting_notice(runtime)
    _show_others(runtime)
    history = runtime.agent.options.data_dir / "chat_history"
    reader = repl.line_reader(agent, runtime.mcp, history)
    if runtime.mcp is not None:  # servers may ask for input in the chat
        runtime.mcp.elicitor = terminal_elicitor(reader.read, stop_turn=agent.cancel)
    try:
        await runtime.start_mcp(mcp_start_wait(), _mcp_notice)
        follow_progress(runtime.mcp)
        await _repl(runtime, reader.read)
    finally:
        await runtime.stop_mcp()
    await wind_down(runtime)


async def _repl(runtime: Runtime, read_line: AskLine) -> None:
    from koroku_desktop.cli import mcp_prompts, repl

    agent = runtime.agent
    attached: list[PendingAttachment] = []
    while True:
        try:
            line = await read_line("\nyou> ")
        except EOFError:
            print()
            return
        except KeyboardInterrupt:  # Ctrl-C at an empty prompt: leave, winding down as /exit
            print("(bye)")
            return
        text = line.strip()
        if not text:
            continue
        if text.lower() in EXIT_WORDS or text == "/exit":
            return
        if text in ("/help", "/?"):
            print(repl.help_text(runtime.mcp))
            continue
        if text.lower() in ("clear", "/clear"):
            await agent.clear()
            print("(cleared: the conversation starts afresh; nothing was deleted)")
            continue
        if text == "/attach" or text.startswith("/attach "):
            print(attach_command(text, attached))
            continue
        if text == "/prompts":
            print(mcp_prompts.list_text(runtime.mcp))
            continue
        if await conversation_command(runtime, text):  # /new, /switch, /conversations
            continue
        prompt = mcp_prompts.is_prompt_command(runtime.mcp, text)
        if prompt is None and (why := mcp_prompts.unknown_prompt(runtime.mcp, text)):
            print(why, file=sys.stderr)
            continue
        if prompt is not None and runtime.mcp is not None:
            sent = await mcp_prompts.prompt_message(runtime.mcp, prompt, text, read_line)
            if sent is None:
                continue
            print(f"(the prompt /{prompt.server}:{prompt.name} says:)\n{sent}")
            text = sent
        command = text.split(maxsplit=1)[0]
        running = _replace_last(agent, text) if command in ("/retry", "/edit") else None
        if running is None:
            parts = await keep_attachments(runtime, attached)
            attached.clear()
            running = agent.run_turn(text, attachments=parts)
        turn = asyncio.create_task(running)
        with ctrl_c_stops(agent.cancel):  # Ctrl-C: this turn stops, the prompt comes back
            try:
                await asyncio.shield(turn)
            except asyncio.CancelledError:
                agent.cancel()
                await turn
                raise


async def _replace_last(agent: Agent, line: str) -> TurnResult | None:
    """`/retry` regenerates the last turn, `/edit <text>` replaces its message (the old turn
    stays in the log; see agent/supersede.py)."""
    command, _, rest = line.partition(" ")
    await agent.catch_up()
    turn = last_turn(agent.view)
    if turn is None:
        print("(nothing to replace: no turn of yours in the live conversation)", file=sys.stderr)
        return None
    if command == "/edit" and not rest.strip():
        print(f"(usage: /edit <new message>; your last message was: {turn.text})", file=sys.stderr)
        return None
    try:
        return await agent.run_turn(rest.strip() or None, replacing=turn.turn_id)
    except SupersedeError as exc:
        print(f"✗ {exc}", file=sys.stderr)
        return None


def cmd_chat(args: argparse.Namespace) -> int:
    """The REPL: replays the visible history, then streams answers."""
    try:
        approver = TerminalApprover(args.yes, out=sys.stdout)
        with open_runtime(
            approver, need_key=True, front_end="chat", conversation=args.conversation
        ) as runtime:
            approver.workspace = runtime.agent.options.workspace
            try:
                asyncio.run(_chat_loop(runtime))
            except KeyboardInterrupt:
                print("\n(bye)")
    except CliExit as exc:
        return exc.code
    return 0
