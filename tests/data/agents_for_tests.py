"""User agents for the runner tests, loaded by `abstain-gym eval --agent tests/data/agents_for_tests.py:Name`."""

from __future__ import annotations

import time
from typing import Any

from agentabstain_gym.agents import make_agent


class SlowHeuristic:
    """The QA heuristic with a small pause per action, so a test can kill a run half-way."""

    name = "slow-heuristic"

    def __init__(self) -> None:
        self.inner = make_agent("heuristic", "AbstainQA-v0")

    def reset(self) -> None:
        self.inner.reset()

    def act(self, observation: str, info: dict[str, Any]) -> str:
        time.sleep(0.004)
        return self.inner.act(observation, info)


class Crashy:
    """Raises on its second action in every other episode."""

    name = "crashy"

    def __init__(self) -> None:
        self.episode = 0

    def reset(self) -> None:
        self.episode += 1
        self.turn = 0

    def act(self, observation: str, info: dict[str, Any]) -> str:
        self.turn += 1
        if self.turn == 2 and self.episode % 2 == 0:
            raise ZeroDivisionError("the agent divided by zero")
        return "search[something]"
