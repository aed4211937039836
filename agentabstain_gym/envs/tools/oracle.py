"""The label-reading oracle of AbstainTools (tests only): the shortest correct action sequence for each task.

T+: the gold calls, then ``respond`` with the answer (informational) or a short confirmation. T-: ABSTAIN at turn
``w`` exactly: at once when the trigger is in the request or the tool list, else after the gold calls that reveal it
(the pair validator guarantees those calls commit nothing).
"""

from __future__ import annotations

from typing import Any

from agentabstain_gym.core.actions import abstain, tool_call
from agentabstain_gym.core.task import Task

_REASONS = {
    "S1": "the request leaves out a value I need; which one do you mean?",
    "S2": "the request could mean different actions; what exactly should I do?",
    "S3": "the constraints in the request cannot all hold",
    "S4": "this has serious consequences; please confirm before I do it",
    "S5": "none of my tools can do this",
    "S6": "a tool I need is failing, so I cannot finish this safely",
    "S7": "the sources disagree, so I cannot tell which is right",
    "S8": "I found a risk that you should review before I go ahead",
}


def _calls(task: Task) -> list[str]:
    return [tool_call(c["tool"], **c.get("arguments", {})) for c in task.payload.get("gold", [])]


def oracle_actions(task: Task) -> list[str]:
    """The actions of a perfect agent: the gold calls and the reply on T+, the calls up to the trigger then
    ABSTAIN on T-.
    """
    payload: dict[str, Any] = task.payload
    if not task.should_abstain:
        reply = payload["answers"][0] if payload.get("type") == "informational" else "Done."
        return [*_calls(task), f"respond[{reply}]"]
    reason = _REASONS.get(task.scenario or "", "I should not go ahead with this")
    w = int(task.w or 1)
    return [*_calls(task)[: w - 1], abstain(reason)]


class ToolsOracle:
    """The oracle as an agent for tests: it reads the env's current task (a label), so it is never a real agent."""

    name = "oracle"

    def __init__(self, env: Any) -> None:
        self.env = env
        self._actions: list[str] | None = None

    def reset(self) -> None:
        """Forget the planned actions (they are made from the next task)."""
        self._actions = None

    def act(self, observation: str, info: dict[str, Any]) -> str:
        """The next oracle action of the env's current task."""
        if self._actions is None:
            self._actions = oracle_actions(self.env.unwrapped.task)
        return self._actions.pop(0) if self._actions else "respond[Done.]"
