"""Task-augmented tool calls (2025-11-25 tasks): create, poll, fetch the result, cancel.

A tool that declares `execution.taskSupport: "required"` cannot be called plainly; Koroku
sends the call with a `task` field, polls `tasks/get` at the server's interval (reporting
each status and message), then reads the result with `tasks/result`. Cancelling the call
(Stop) sends `tasks/cancel` before the cancellation goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

import anyio
from mcp import Client
from mcp_types import (
    CallToolRequest,
    CallToolRequestParams,
    CallToolResult,
    CancelTaskRequest,
    CancelTaskRequestParams,
    CancelTaskResult,
    CreateTaskResult,
    GetTaskPayloadRequest,
    GetTaskPayloadRequestParams,
    GetTaskRequest,
    GetTaskRequestParams,
    GetTaskResult,
    ServerCapabilities,
    Task,
    TaskMetadata,
)

TASK_TTL_MS = 15 * 60 * 1000
"""How long the server should keep a task Koroku created (it asks for the result sooner)."""

POLL_DEFAULT_S = 1.0
POLL_BOUNDS_S = (0.2, 10.0)

OnStatus = Callable[[str, str | None], None]
"""Called with a task's status (working, input_required, completed...) and its message."""


def can_call_tasks(capabilities: ServerCapabilities) -> bool:
    """Whether the server takes task-augmented `tools/call` requests."""
    tasks = capabilities.tasks
    requests = tasks.requests if tasks is not None else None
    tools = requests.tools if requests is not None else None
    return tools is not None and tools.call is not None


async def _create(client: Client, request: CallToolRequest) -> CreateTaskResult:
    """Send a task-augmented `tools/call`, whose answer is a task, not a tool result.

    The SDK checks every `tools/call` answer as a `CallToolResult` and has no client side
    of tasks, so this one request goes through its dispatcher directly.
    """
    data = request.model_dump(by_alias=True, mode="json", exclude_none=True)
    dispatcher: Any = getattr(client.session, "_dispatcher")  # noqa: B009 - no public path
    raw = await dispatcher.send_raw_request(data["method"], data.get("params"), {})
    return CreateTaskResult.model_validate(raw, by_name=False)


def _interval(task: Task) -> float:
    if task.poll_interval is None:
        return POLL_DEFAULT_S
    low, high = POLL_BOUNDS_S
    return min(high, max(low, task.poll_interval / 1000))


async def call_as_task(
    client: Client, tool: str, args: dict[str, object], on_status: OnStatus
) -> CallToolResult:
    """Run `tool` as a task and return its result; cancelling sends `tasks/cancel`."""
    session = client.session
    params = CallToolRequestParams(name=tool, arguments=args, task=TaskMetadata(ttl=TASK_TTL_MS))
    task: Task = (await _create(client, CallToolRequest(params=params))).task
    try:
        on_status(task.status, task.status_message)
        # input_required: tasks/result carries the server's question (answered by our
        # callbacks) and then the result, so it is read as soon as the task stops working.
        while task.status == "working":
            await asyncio.sleep(_interval(task))
            ask = GetTaskRequest(params=GetTaskRequestParams(task_id=task.task_id))
            task = await session.send_request(ask, GetTaskResult)
            on_status(task.status, task.status_message)
        fetch = GetTaskPayloadRequest(params=GetTaskPayloadRequestParams(task_id=task.task_id))
        return await session.send_request(fetch, CallToolResult)
    except BaseException:
        if task.status in ("working", "input_required"):
            with (
                anyio.CancelScope(shield=True),
                anyio.move_on_after(5),
                contextlib.suppress(Exception),
            ):
                stop = CancelTaskRequest(params=CancelTaskRequestParams(task_id=task.task_id))
                await session.send_request(stop, CancelTaskResult)
                on_status("cancelled", "cancelled by Koroku")
        raise
