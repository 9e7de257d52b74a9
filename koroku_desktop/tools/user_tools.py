"""Loading the user's own tools: `AgentTool` subclasses in `*.py` files of a folder.

Files are re-imported when they change (checked with cheap `stat`s whenever the registry is
asked for tools), so a user can edit a tool while Koroku runs. A file that fails to import,
or a class that is not a usable tool, is reported and skipped; the others keep working.
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import itertools
import json
import logging
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

from koroku_desktop.tools.base import AgentTool

log = logging.getLogger(__name__)

MODULE_PREFIX = "koroku_user_tools"
TOOL_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]{0,63}$")
"""What Gemini accepts as a function name."""

_counter = itertools.count()

FileSignature = tuple[int, int, int]


@dataclass
class LoadedFile:
    """One user-tool file as last imported: its stat signature, tools and problems."""

    signature: FileSignature
    module_name: str | None = None
    tools: dict[str, type[AgentTool]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


def _signature(path: Path) -> FileSignature | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def check_tool_class(cls: type[AgentTool]) -> str | None:
    """Why `cls` is not a usable tool, or None when it is."""
    name = getattr(cls, "name", None)
    if not isinstance(name, str) or not TOOL_NAME.match(name):
        return f"{cls.__name__}: `name` must be a string of letters, digits, _ . - (got {name!r})"
    if cls.execute is AgentTool.execute:
        return f"{cls.__name__} ({name}): does not implement `async def execute(self, ctx)`"
    if not inspect.iscoroutinefunction(cls.execute):
        return f"{cls.__name__} ({name}): `execute` must be `async def`"
    try:
        json.dumps(cls.spec().parameters)
    except Exception as exc:  # noqa: BLE001 — user code: any failure to describe its arguments is shown as a problem
        return f"{cls.__name__} ({name}): cannot describe its arguments: {exc}"
    return None


def _is_tool_base(cls: type[AgentTool]) -> bool:
    """A helper base class in a user file: no name and no execute of its own."""
    return not hasattr(cls, "name") and "execute" not in vars(cls)


def _import(path: Path) -> ModuleType:
    """Import `path` under a fresh, unique module name, always from its current source."""
    digest = hashlib.sha1(str(path).encode()).hexdigest()[:10]
    module_name = f"{MODULE_PREFIX}_{path.stem}_{digest}_{next(_counter)}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    # Compile the source ourselves: cached bytecode keyed on whole-second mtimes could hide
    # an edit made within the same second, and the user's folder gets no __pycache__.
    source = importlib.util.decode_source(path.read_bytes())
    code = compile(source, str(path), "exec", dont_inherit=True)
    sys.modules[module_name] = module  # pydantic resolves annotations through sys.modules
    try:
        exec(code, module.__dict__)
    except BaseException:
        sys.modules.pop(module_name, None)
        raise
    return module


def _load(path: Path, signature: FileSignature) -> LoadedFile:
    loaded = LoadedFile(signature=signature)
    try:
        module = _import(path)
    except (Exception, SystemExit) as exc:  # noqa: BLE001 — importing user code may raise anything; shown as a problem
        loaded.problems.append(f"failed to import: {type(exc).__name__}: {exc}")
        return loaded
    loaded.module_name = module.__name__
    for obj in vars(module).values():
        if not (isinstance(obj, type) and issubclass(obj, AgentTool)) or obj is AgentTool:
            continue
        if obj.__module__ != module.__name__ or _is_tool_base(obj):
            continue  # imported from elsewhere, or an abstract helper
        problem = check_tool_class(obj)
        if problem is not None:
            loaded.problems.append(problem)
        elif obj.name in loaded.tools:
            loaded.problems.append(f"{obj.__name__}: tool name {obj.name!r} defined twice")
        else:
            loaded.tools[obj.name] = obj
    if not loaded.tools and not loaded.problems:
        loaded.problems.append("defines no AgentTool subclass with a name")
    return loaded


class UserToolLoader:
    """Keeps the tools of one folder's `*.py` files current, reloading files that change."""

    def __init__(self, directory: Path | None, reserved: Iterable[str] = ()) -> None:
        self.directory = directory
        self.reserved = frozenset(reserved)
        self._files: dict[Path, LoadedFile] = {}
        self._tools: dict[str, type[AgentTool]] = {}
        self._errors: dict[str, str] = {}

    @property
    def tools(self) -> dict[str, type[AgentTool]]:
        """Usable tools by name, as of the last refresh."""
        return dict(self._tools)

    @property
    def errors(self) -> dict[str, str]:
        """File path -> what is wrong with it, as of the last refresh."""
        return dict(self._errors)

    def _scan(self) -> dict[Path, FileSignature]:
        if self.directory is None or not self.directory.is_dir():
            return {}
        found: dict[Path, FileSignature] = {}
        for path in sorted(self.directory.glob("*.py")):
            if path.name.startswith((".", "_")):
                continue
            sig = _signature(path)
            if sig is not None:
                found[path] = sig
        return found

    def refresh(self) -> bool:
        """Re-stat the folder; import new or changed files, forget removed ones.

        Returns whether anything changed.
        """
        current = self._scan()
        changed = False
        for path in list(self._files):
            if path not in current:
                self._forget(path)
                log.info("user tool file removed: %s", path)
                changed = True
        for path, sig in current.items():
            previous = self._files.get(path)
            if previous is not None and previous.signature == sig:
                continue
            if previous is not None:
                self._forget(path)
            self._files[path] = _load(path, sig)
            changed = True
        if changed:
            self._rebuild()
        return changed

    def _forget(self, path: Path) -> None:
        old = self._files.pop(path, None)
        if old is not None and old.module_name:
            sys.modules.pop(old.module_name, None)

    def _rebuild(self) -> None:
        tools: dict[str, type[AgentTool]] = {}
        problems: dict[Path, list[str]] = {}
        for path, loaded in sorted(self._files.items()):
            problems[path] = list(loaded.problems)
            for name, cls in loaded.tools.items():
                if name in self.reserved:
                    problems[path].append(f"{cls.__name__}: may not replace built-in tool {name!r}")
                elif name in tools:
                    problems[path].append(
                        f"{cls.__name__}: tool {name!r} is already defined by another file"
                    )
                else:
                    tools[name] = cls
        errors = {str(p): "; ".join(msgs) for p, msgs in problems.items() if msgs}
        for where, message in errors.items():
            if self._errors.get(where) != message:
                log.warning("user tool file %s skipped in part or whole: %s", where, message)
        self._tools = tools
        self._errors = errors
