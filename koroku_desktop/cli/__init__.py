"""The `koroku` command: terminal front end over the same core as the desktop app."""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Sequence
from typing import Any

from koroku_desktop import __version__
from koroku_desktop.cli import collector, desktop
from koroku_desktop.domain.errors import ConfigError, KorokuError

EXIT_OK, EXIT_API, EXIT_USAGE = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    """argparse that exits 2 with a one-line message (no traceback) on bad usage."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"koroku: {message}\n")


COMMANDS: dict[str, str] = {
    "chat": "conversation",
    "ask": "conversation",
    "conversations": "conversations_command",
    "history": "history_command",
    "import": "records",
    "compact": "recall_commands",
    "search": "recall_commands",
    "export": "recall_commands",
    "memory": "memory_command",
    "login": "admin",
    "grants": "admin",
    "quick-ask": "desktop",
    "install-desktop": "install",
    "mcp": "mcp_commands",
    "doctor": "doctor",
    "sync": "sync_command",
    "tasks": "tasks_command",
}
"""Each sub-command and the module of `koroku_desktop.cli` that registers it, in `--help`'s
order: a command's module is imported only when that command runs (or for the full list)."""


def build_parser(
    start_desktop: desktop.DesktopStarter = desktop.no_desktop,
    command: str | None = None,
) -> argparse.ArgumentParser:
    """The `koroku` parser (`start_desktop` runs the desktop app, see `koroku_desktop.launcher`).

    `command` names the sub-command about to run: only its module is imported (`koroku ask`
    starts without the others' imports). None, or a word that names none, registers them all,
    so `--help` and the `invalid choice` error list every command."""
    parser = _Parser(prog="koroku", description="Koroku: a tray assistant with total recall.")
    parser.add_argument("--version", action="version", version=f"koroku {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log to stderr")
    parser.add_argument(
        "--self-check",
        action="store_true",
        help="start the app offscreen, build every window, and exit",
    )
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)
    chosen = COMMANDS.get(command or "")
    for name in dict.fromkeys(COMMANDS.values()):  # each module once, in the table's order
        if chosen is None or name == chosen:
            register_module(sub, name, start_desktop)
    return parser


def register_module(sub: Any, name: str, start_desktop: desktop.DesktopStarter) -> None:
    """Import `koroku_desktop.cli.<name>` and add its sub-commands to `sub`."""
    if name == "desktop":
        desktop.register(sub, start_desktop)
        return
    module = importlib.import_module(f"koroku_desktop.cli.{name}")
    module.register(sub)


def command_word(words: Sequence[str]) -> str | None:
    """The sub-command `words` run (the first word that is not an option; the top-level
    options take no value), or None."""
    return next((w for w in words if not w.startswith("-")), None)


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
    command = command_word(words)
    with collector.paused(command == "ask"):  # until its first reply (see cli/collector.py)
        return _run(words, command, start_desktop)


def _run(words: list[str], command: str | None, start_desktop: desktop.DesktopStarter) -> int:
    parser = build_parser(start_desktop, command)
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
