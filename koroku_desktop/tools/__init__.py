"""Tools the model can call: the AgentTool base, built-ins, user tools, approval policy."""

from koroku_desktop.tools.approval import ApprovalPolicy, GrantScope
from koroku_desktop.tools.base import AgentTool, RecallSearch, ToolContext, tool_error
from koroku_desktop.tools.registry import BUILTIN_TOOLS, ToolRegistry

__all__ = [
    "BUILTIN_TOOLS",
    "AgentTool",
    "ApprovalPolicy",
    "GrantScope",
    "RecallSearch",
    "ToolContext",
    "ToolRegistry",
    "tool_error",
]
