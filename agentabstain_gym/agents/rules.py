"""The stopping-rules agent (docs/design.md, section 8): any agent, with the five deterministic rules watching its run."""

from __future__ import annotations

from typing import Any

from agentabstain_gym.agents.base import Agent
from agentabstain_gym.core.stopping_rules import StopDecision, StoppingRules


class RulesAgent:
    """Lets ``inner`` act until a rule fires on what it has seen, then abstains with the rule's reason.

    The rules read only the observations the agent received, so this is an agent, not an oracle; the last decision
    is kept in :attr:`decision` (the structured ABSTAIN record: action, rule, reason, steps_taken, elapsed_seconds) for logs.
    """

    def __init__(self, inner: Agent, rules: StoppingRules | None = None) -> None:
        self.inner = inner
        self.rules = rules or StoppingRules()
        self.name = "rules"
        self.decision: StopDecision | None = None
        self._last_action: str | None = None

    def reset(self) -> None:
        """Reset the inner agent and the rules for a new episode."""
        self.inner.reset()
        self.rules.reset()
        self.decision = None
        self._last_action = None

    def act(self, observation: str, info: dict[str, Any]) -> str:
        """The inner agent's action, or the rules' ABSTAIN once a rule has fired on what was seen."""
        if self._last_action is None:
            self.rules.reset(observation=observation)
            decision = self.rules.check_timeout()
        else:
            decision = self.rules.observe(self._last_action, observation)
        if decision is not None:
            self.decision = decision
            return decision.to_action()
        self._last_action = self.inner.act(observation, info)
        return self._last_action
