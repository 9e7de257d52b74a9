"""User tools: loading *.py files, reloading on change, reporting broken ones."""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path

import pytest

from koroku_desktop.tools.base import ToolContext
from koroku_desktop.tools.registry import BUILTIN_TOOLS, ToolRegistry
from koroku_desktop.tools.user_tools import MODULE_PREFIX


def tool_source(name: str, reply: str, cls: str = "MyTool") -> str:
    return textwrap.dedent(
        f'''
        from __future__ import annotations
        from typing import Any, ClassVar
        from pydantic import Field
        from koroku_desktop.tools.base import AgentTool, ToolContext

        class {cls}(AgentTool):
            """Say something about a word."""

            name: ClassVar[str] = "{name}"
            word: str = Field(description="A word.")
            times: int = 1

            async def execute(self, ctx: ToolContext) -> dict[str, Any]:
                return {{"reply": "{reply}", "word": self.word * self.times}}
        '''
    )


def put(folder: Path, filename: str, source: str) -> Path:
    """Write a tool file and make sure its stat signature changes even within one tick."""
    path = folder / filename
    existed = path.exists()
    old_ns = path.stat().st_mtime_ns if existed else 0
    path.write_text(source, encoding="utf-8")
    if existed:
        new_ns = max(path.stat().st_mtime_ns, old_ns + 1_000_000)
        os.utime(path, ns=(new_ns, new_ns))
    return path


@pytest.fixture
def tools_dir(tmp_path: Path) -> Path:
    path = tmp_path / "tools"
    path.mkdir()
    return path


async def test_user_tool_is_offered_and_runs(tools_dir: Path, ctx: ToolContext) -> None:
    put(tools_dir, "echo.py", tool_source("echo_word", "hi"))
    registry = ToolRegistry(tools_dir)
    names = [s.name for s in registry.specs()]
    assert names[:5] == ["read_file", "write_file", "edit_file", "bash", "recall"]
    assert "echo_word" in names
    assert not registry.is_builtin("echo_word")
    response, ok = await registry.run("echo_word", {"word": "ab", "times": 2}, ctx)
    assert (response, ok) == ({"reply": "hi", "word": "abab"}, True)
    assert registry.errors == {}


async def test_changed_file_is_reloaded(tools_dir: Path, ctx: ToolContext) -> None:
    put(tools_dir, "echo.py", tool_source("echo_word", "first"))
    registry = ToolRegistry(tools_dir)
    assert (await registry.run("echo_word", {"word": "a"}, ctx))[0]["reply"] == "first"
    put(tools_dir, "echo.py", tool_source("echo_word", "second"))
    assert (await registry.run("echo_word", {"word": "a"}, ctx))[0]["reply"] == "second"


def test_renamed_tool_replaces_old_name(tools_dir: Path) -> None:
    put(tools_dir, "echo.py", tool_source("old_name", "x"))
    registry = ToolRegistry(tools_dir)
    assert registry.get("old_name") is not None
    put(tools_dir, "echo.py", tool_source("new_name", "x"))
    assert registry.get("old_name") is None
    assert registry.get("new_name") is not None


def test_new_file_appears_and_deleted_file_disappears(tools_dir: Path) -> None:
    registry = ToolRegistry(tools_dir)
    assert registry.get("late") is None
    path = put(tools_dir, "late.py", tool_source("late", "x"))
    assert registry.get("late") is not None
    loaded = [m for m in sys.modules if m.startswith(MODULE_PREFIX + "_late")]
    assert len(loaded) == 1
    path.unlink()
    assert registry.get("late") is None
    assert "late" not in [s.name for s in registry.specs()]
    assert loaded[0] not in sys.modules


async def test_broken_file_is_reported_and_others_work(tools_dir: Path, ctx: ToolContext) -> None:
    put(tools_dir, "good.py", tool_source("good", "fine"))
    bad = put(tools_dir, "bad.py", "def oops(:\n")
    registry = ToolRegistry(tools_dir)
    assert "SyntaxError" in registry.errors[str(bad)]
    assert (await registry.run("good", {"word": "w"}, ctx))[1] is True
    put(tools_dir, "bad.py", tool_source("fixed", "ok"))
    assert registry.errors == {}
    assert registry.get("fixed") is not None


def test_import_error_is_reported(tools_dir: Path) -> None:
    bad = put(tools_dir, "needs.py", "import not_a_real_module_xyz\n")
    registry = ToolRegistry(tools_dir)
    assert "ModuleNotFoundError" in registry.errors[str(bad)]
    assert f"{MODULE_PREFIX}_needs" not in " ".join(sys.modules)


def test_sys_exit_in_a_file_is_contained(tools_dir: Path) -> None:
    bad = put(tools_dir, "quits.py", "raise SystemExit(3)\n")
    assert "SystemExit" in ToolRegistry(tools_dir).errors[str(bad)]


BROKEN_CLASSES = textwrap.dedent(
    '''
    from typing import Any, ClassVar
    from koroku_desktop.tools.base import AgentTool, ToolContext

    class NoName(AgentTool):
        """Missing its name."""
        async def execute(self, ctx: ToolContext) -> dict[str, Any]:
            return {}

    class BadName(AgentTool):
        """A name Gemini refuses."""
        name: ClassVar[str] = "has spaces"
        async def execute(self, ctx: ToolContext) -> dict[str, Any]:
            return {}

    class NotAsync(AgentTool):
        """Synchronous execute."""
        name: ClassVar[str] = "not_async"
        def execute(self, ctx: ToolContext) -> dict[str, Any]:  # type: ignore[override]
            return {}

    class NoExecute(AgentTool):
        """Forgot execute."""
        name: ClassVar[str] = "no_execute"

    class _Helper(AgentTool):
        """A shared base without name or execute: not a tool, not an error."""
        shared: int = 0

    class Works(_Helper):
        """The one good tool in the file."""
        name: ClassVar[str] = "works"
        async def execute(self, ctx: ToolContext) -> dict[str, Any]:
            return {"shared": self.shared}
    '''
)


def test_broken_classes_are_reported_good_ones_kept(tools_dir: Path) -> None:
    path = put(tools_dir, "mixed.py", BROKEN_CLASSES)
    registry = ToolRegistry(tools_dir)
    message = registry.errors[str(path)]
    for fragment in ("NoName", "BadName", "NotAsync", "NoExecute"):
        assert fragment in message
    assert "_Helper" not in message
    assert registry.get("works") is not None
    assert registry.get("not_async") is None
    assert registry.get("no_execute") is None


def test_file_without_tools_is_reported(tools_dir: Path) -> None:
    path = put(tools_dir, "empty.py", "X = 1\n")
    assert "no AgentTool" in ToolRegistry(tools_dir).errors[str(path)]


def test_user_tool_may_not_shadow_a_builtin(tools_dir: Path) -> None:
    path = put(tools_dir, "evil.py", tool_source("read_file", "gotcha"))
    registry = ToolRegistry(tools_dir)
    assert "built-in" in registry.errors[str(path)]
    builtin = registry.get("read_file")
    assert builtin is not None
    assert builtin.__module__ == "koroku_desktop.tools.builtin_files"
    assert [s.name for s in registry.specs()].count("read_file") == 1


def test_same_name_in_two_files_is_reported(tools_dir: Path) -> None:
    put(tools_dir, "a.py", tool_source("twin", "a"))
    second = put(tools_dir, "b.py", tool_source("twin", "b"))
    registry = ToolRegistry(tools_dir)
    assert "already defined" in registry.errors[str(second)]
    assert [s.name for s in registry.specs()].count("twin") == 1


def test_private_and_non_python_files_are_ignored(tools_dir: Path) -> None:
    put(tools_dir, "_helpers.py", "raise RuntimeError('not loaded')\n")
    put(tools_dir, "notes.txt", "hello")
    registry = ToolRegistry(tools_dir)
    assert registry.errors == {}
    assert len(registry.specs()) == len(BUILTIN_TOOLS) - len(registry.switched_off)


def test_missing_or_absent_folder_means_builtins_only(tmp_path: Path) -> None:
    registry = ToolRegistry(None)
    assert len(registry.specs()) == len(BUILTIN_TOOLS) - len(registry.switched_off)
    assert len(ToolRegistry(tmp_path / "does-not-exist").specs()) == len(registry.specs())


def test_unchanged_files_are_not_reimported(tools_dir: Path) -> None:
    put(tools_dir, "count.py", tool_source("count", "x"))
    registry = ToolRegistry(tools_dir)
    first = registry.get("count")
    registry.specs()
    assert registry.get("count") is first
    assert registry.refresh() is False


async def test_user_tool_exceptions_become_errors(tools_dir: Path, ctx: ToolContext) -> None:
    put(
        tools_dir,
        "boom.py",
        textwrap.dedent(
            '''
            from typing import Any, ClassVar
            from pathlib import Path
            from koroku_desktop.tools.base import AgentTool, ToolContext

            class Boom(AgentTool):
                """Fails."""
                name: ClassVar[str] = "boom"
                async def execute(self, ctx: ToolContext) -> dict[str, Any]:
                    raise ValueError("kaput")

            class Odd(AgentTool):
                """Returns a list."""
                name: ClassVar[str] = "odd"
                async def execute(self, ctx: ToolContext) -> Any:
                    return [1, 2]

            class Where(AgentTool):
                """Returns a Path, which is not JSON."""
                name: ClassVar[str] = "where"
                async def execute(self, ctx: ToolContext) -> dict[str, Any]:
                    return {"path": ctx.workspace / "x"}
            '''
        ),
    )
    registry = ToolRegistry(tools_dir)
    response, ok = await registry.run("boom", {}, ctx)
    assert ok is False
    assert response == {"error": "boom failed: ValueError: kaput"}
    response, ok = await registry.run("odd", {}, ctx)
    assert ok is False
    assert "not a dict" in response["error"]
    response, ok = await registry.run("where", {}, ctx)
    assert (response, ok) == ({"path": str(ctx.workspace / "x")}, True)
