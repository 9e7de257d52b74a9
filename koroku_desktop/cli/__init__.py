"""The `koroku` command: terminal front end over the same core as the desktop app."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from koroku_desktop import __version__
from koroku_desktop.cli import desktop
from koroku_desktop.domain.errors import ConfigError, KorokuError

EXIT_OK, EXIT_API, EXIT_USAGE = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    """argparse that exits 2 with a one-line message (no traceback) on bad usage."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"koroku: {message}\n")


def build_parser(
    start_desktop: desktop.DesktopStarter = desktop.no_desktop,
) -> argparse.ArgumentParser:
    """All sub-commands (`start_desktop` runs the desktop app, see `koroku_desktop.launcher`)."""
    parser = _Parser(prog="koroku", description="Koroku: a tray assistant with total recall.")
    parser.add_argument("--version", action="version", version=f"koroku {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log to stderr")
    parser.add_argument(
        "--self-check",
        action="store_true",
        help="start the app offscreen, build every window, and exit",
    )
    from koroku_desktop.cli import (  # here: `koroku search` starts without them (see main)
        admin,
        conversation,
        conversations_command,
        doctor,
        install,
        mcp_commands,
        memory_command,
        recall_commands,
        records,
        sync_command,
        tasks_command,
    )

    sub = parser.add_subparsers(dest="command", parser_class=_Parser)
    conversation.register(sub)
    conversations_command.register(sub)
    records.register(sub)
    recall_commands.register(sub)
    memory_command.register(sub)
    admin.register(sub)
    desktop.register(sub, start_desktop)
    install.register(sub)
    mcp_commands.register(sub)
    doctor.register(sub)
    sync_command.register(sub)
    tasks_command.register(sub)
    return parser


def main(
    argv: Sequence[str] | None = None,
    start_desktop: desktop.DesktopStarter = desktop.no_desktop,
) -> int:
    """Run a `koroku` command; with none, `start_desktop` (the entry point is `launcher.main`).

    `koroku search ...` is parsed on its own, so that it imports only what a search needs
    (a cold start of a few hundred milliseconds; see cli/search_command.py)."""
    words = list(sys.argv[1:] if argv is None else argv)
    if words[:1] == ["search"]:
        return _search(words[1:])
    if words == ["tasks", "run-due"]:  # every minute from a timer: nothing else imported
        return _run_due()
    parser = build_parser(start_desktop)
    args = parser.parse_args(words)
    # Without -v no log record reaches the terminal: failures are told in one friendly line
    # by the command itself (a raw `WARNING koroku_desktop...` line reads like a crash).
    level = logging.INFO if args.verbose else logging.CRITICAL + 1
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    if args.command is None:
        return start_desktop(self_check=args.self_check)
    try:
        code: int = args.handler(args)
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's last flush
    except KeyboardInterrupt:
        print(file=sys.stderr)
        return 130
    except KorokuError as exc:  # one the command did not turn into its own message
        print(f"koroku: {exc}", file=sys.stderr)
        return exit_code(exc)
    except BrokenPipeError:
        return _pipe_closed()
    return code


def _search(argv: list[str]) -> int:
    from koroku_desktop.cli.search_command import add_arguments, cmd_search

    parser = _Parser(
        prog="koroku search",
        description="search everything ever said, ranked by keywords and meaning",
    )
    add_arguments(parser)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.CRITICAL + 1, format="%(levelname)s %(name)s: %(message)s")
    try:
        if args.status or args.backfill:  # through the full runtime (see recall_commands)
            from koroku_desktop.cli.recall_commands import cmd_status

            return cmd_status(args)
        return cmd_search(args)
    except KeyboardInterrupt:
        print(file=sys.stderr)
        return 130
    except BrokenPipeError:
        return _pipe_closed()


def _run_due() -> int:
    from koroku_desktop.cli.tasks_due import run_due

    logging.basicConfig(level=logging.CRITICAL + 1, format="%(levelname)s %(name)s: %(message)s")
    try:
        from koroku_desktop.app.task_peek import task_clock

        return run_due(task_clock())
    except KeyboardInterrupt:
        print(file=sys.stderr)
        return 130
    except KorokuError as exc:
        print(f"koroku tasks: {exc}", file=sys.stderr)
        return exit_code(exc)


def exit_code(exc: KorokuError) -> int:
    """A terminal command's exit code for an error: 2 for what the user must set up
    differently (settings, a hub URL, a key), 1 for everything else."""
    return 2 if isinstance(exc, ConfigError) else 1


def _pipe_closed() -> int:
    """The reader of stdout went away (`koroku history --all | head`): end quietly, as
    `cat` does, with no traceback and no second error when Python flushes stdout at exit."""
    from koroku_desktop.cli.terminal import EXIT_PIPE, stdout_to_devnull

    stdout_to_devnull()
    return EXIT_PIPE
