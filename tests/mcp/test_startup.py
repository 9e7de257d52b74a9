"""Start-up stays cheap: the MCP SDK is imported only when servers start, never before."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_building_the_runtime_does_not_import_the_mcp_sdk(tmp_path: Path) -> None:
    (tmp_path / "mcp.json").write_text('{"mcpServers": {"x": {"command": "true"}}}')
    code = (
        "import sys\nfrom pathlib import Path\n"
        "from koroku_desktop.app.config import Paths\n"
        "from koroku_desktop.app.runtime import build_runtime\n"
        "from koroku_desktop.cli import build_parser\n"
        "from tests.mcp.test_agent_mcp import ScriptedApprover\n"
        f"runtime = build_runtime(ScriptedApprover(), Paths(Path({str(tmp_path)!r})).ensure())\n"
        "build_parser()\n"
        "assert runtime.tools.specs()  # built-ins; the MCP server is not started\n"
        "bad = sorted(n for n in sys.modules if n.split('.')[0] in ('mcp', 'mcp_types'))\n"
        "assert not bad, bad\n"
        "runtime.close()\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
