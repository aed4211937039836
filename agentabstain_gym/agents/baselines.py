"""Baselines that need no family knowledge: random actions and constant stopping policies."""

from __future__ import annotations

from typing import Any

import numpy as np

from agentabstain_gym.core.actions import ABSTAIN


class AlwaysAbstainAgent:
    """Abstains at the first turn: the floor of over-abstention (1.0) and the ceiling of request-based recall."""

    name = "always-abstain"

    def reset(self) -> None:
        """Nothing to forget: the agent has no state."""
        pass

    def act(self, observation: str, info: dict[str, Any]) -> str:
        """ABSTAIN at once, whatever the task (the over-abstention baseline)."""
        return ABSTAIN


class RandomAgent:
    """Picks uniformly among a few actions of the family's grammar, ABSTAIN included; seeded, so runs repeat."""

    name = "random"

    def __init__(self, actions: list[str], seed: int = 0) -> None:
        if not actions:
            raise ValueError("RandomAgent needs at least one action to choose from")
        self.actions = list(actions)
        self.seed = seed
        self._rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        """Re-seed the agent's generator when ``seed`` is given, so runs repeat."""
        if seed is not None:
            self._rng = np.random.default_rng(seed)

    def act(self, observation: str, info: dict[str, Any]) -> str:
        """A uniformly drawn valid action: a button or search of the page (web), else one of the family's
        actions, ABSTAIN included.
        """
        available = info.get("available_actions")
        if isinstance(available, dict):  # a page of buttons, and a search bar on some pages
            choices = [f"click[{c}]" for c in available.get("clickables", [])] + [ABSTAIN]
            if available.get("has_search_bar"):
                choices += [a for a in self.actions if a.startswith("search[")]
        else:
            choices = self.actions
        return choices[int(self._rng.integers(len(choices)))]
