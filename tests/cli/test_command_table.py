"""`koroku <command>` imports only that command's module; the table saying which module
registers which command matches what the modules register, and `--help` lists them all."""

from __future__ import annotations

import argparse

import pytest

from koroku_desktop.cli import COMMANDS, build_parser, command_word, register_module
from koroku_desktop.cli.desktop import no_desktop
from tests.packaging.conftest import run_python


def _registered(module: str) -> set[str]:
    sub = argparse.ArgumentParser().add_subparsers()
    register_module(sub, module, no_desktop)
    return set(sub.choices)


@pytest.mark.parametrize("module", sorted(set(COMMANDS.values())))
def test_each_module_registers_the_commands_the_table_gives_it(module: str) -> None:
    assert _registered(module) == {c for c, m in COMMANDS.items() if m == module}


def test_the_full_parser_lists_every_command_in_the_tables_order() -> None:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert list(sub.choices) == list(COMMANDS)


def test_a_known_command_registers_only_its_module() -> None:
    sub = next(
        a for a in build_parser(command="ask")._actions if isinstance(a, argparse._SubParsersAction)
    )
    assert set(sub.choices) == {"chat", "ask"}


def test_the_command_word_skips_the_top_level_options() -> None:
    assert command_word(["-v", "ask", "--yes", "hi"]) == "ask"
    assert command_word(["--help"]) is None
    assert command_word([]) is None


def test_ask_does_not_import_the_other_commands_modules() -> None:
    code = (  # every other module of the table, so a command added later is covered too
        "import sys\n"
        "from koroku_desktop.cli import build_parser\n"
        "args = build_parser(command='ask').parse_args(['ask', 'hello'])\n"
        "assert args.command == 'ask'\n"
        "from koroku_desktop.cli import COMMANDS\n"
        # desktop: imported by the cli package itself; mcp_commands: by the conversation's
        "others = set(COMMANDS.values()) - {'conversation', 'desktop', 'mcp_commands'}\n"
        "loaded = [m for m in others if 'koroku_desktop.cli.' + m in sys.modules]\n"
        "assert not loaded, loaded\n"
    )
    result = run_python(["-c", code])
    assert result.returncode == 0, result.stderr
