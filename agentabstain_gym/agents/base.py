"""The agent protocol: anything with ``reset()`` and ``act(observation, info) -> action string``."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class Agent(Protocol):
    """What the runner drives. Agents see only observations and ``info``; they never read a task's label."""

    name: str

    def reset(self) -> None:
        """Forget the previous episode."""

    def act(self, observation: str, info: dict[str, Any]) -> str:
        """The next action, as a string of the env's grammar."""
        ...
