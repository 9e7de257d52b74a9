"""The runner of due tasks for the desktop, on the runtime's model and tools."""

from __future__ import annotations

from koroku_desktop.agent.loop import Agent
from koroku_desktop.agent.ports import Approver, Notifier
from koroku_desktop.agent.task_runs import TaskRunner, agent_factory
from koroku_desktop.app.runtime import Runtime


def build_task_runner(runtime: Runtime, approver: Approver, notifier: Notifier) -> TaskRunner:
    """Runs due tasks on the runtime's model and tools, each turn by an agent of its own in
    the task's conversation under the cross-process turn lease; `approver` hears the calls a
    task was not granted."""
    agent = runtime.agent

    def setup(run_agent: Agent) -> None:
        run_agent.calls.recall = agent.calls.recall
        run_agent.facts = agent.facts

    make = agent_factory(
        runtime.log,
        agent.model,
        runtime.tools,
        agent.options,
        turn_lock=runtime.turn_lock,
        clock=lambda: agent.clock(),
        setup=setup,
    )
    return TaskRunner(
        runtime.log,
        make,
        notifier,
        lambda: agent.clock(),
        turn_lock=runtime.turn_lock,
        approver=approver,
    )
