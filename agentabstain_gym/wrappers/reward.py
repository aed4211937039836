"""Abstention-shaped rewards, kept out of the base envs so each researcher picks a reward explicitly."""

from __future__ import annotations

from typing import Any, SupportsFloat

import gymnasium as gym

from agentabstain_gym.core import outcome as outcomes


class AbstentionReward(gym.Wrapper[str, str, str, str], gym.utils.RecordConstructorArgs):
    """Replace the final reward with one that values *when* the agent stops.

    At the end of an episode (read from ``info["abstention"]``, nothing private):

    * justified ABSTAIN (tau >= w): ``justified`` times ``w / tau`` when ``spl_weighted`` (the SPL term), else
      ``justified``;
    * premature ABSTAIN (tau < w): ``premature``;
    * no ABSTAIN on a should-abstain task: ``missed``;
    * ABSTAIN on a solvable task: ``over_abstain``;
    * otherwise on a solvable task: ``task_scale`` times the family's task reward.

    Every non-final step earns ``step_cost`` (0 by default; a negative value charges for turns). The unshaped
    reward stays available as ``info["task_reward"]`` on the final step.

    Examples:
        >>> import gymnasium as gym
        >>> env = AbstentionReward(gym.make("AbstainQA-v0"), premature=-0.5)
        >>> env.shaped({"outcome": "late", "w": 2, "tau": 4})  # justified, two turns late: w / tau
        0.5
        >>> env.shaped({"outcome": "premature", "w": 2, "tau": 1})
        -0.5
    """

    def __init__(self, env: gym.Env[str, str], *, justified: float = 1.0, spl_weighted: bool = True,
                 premature: float = -0.5, missed: float = 0.0, over_abstain: float = -1.0,
                 task_scale: float = 1.0, step_cost: float = 0.0) -> None:
        gym.utils.RecordConstructorArgs.__init__(
            self, justified=justified, spl_weighted=spl_weighted, premature=premature, missed=missed,
            over_abstain=over_abstain, task_scale=task_scale, step_cost=step_cost)
        gym.Wrapper.__init__(self, env)
        self.justified, self.spl_weighted = justified, spl_weighted
        self.premature, self.missed, self.over_abstain = premature, missed, over_abstain
        self.task_scale, self.step_cost = task_scale, step_cost

    def step(self, action: str) -> tuple[str, SupportsFloat, bool, bool, dict[str, Any]]:
        """Step the env; on the final step, replace the reward by :meth:`shaped` and keep the original in
        ``info["task_reward"]``.
        """
        observation, reward, terminated, truncated, info = self.env.step(action)
        record = info.get("abstention")
        if record is None:
            return observation, self.step_cost, terminated, truncated, info
        info = dict(info)
        info["task_reward"] = float(reward)
        return observation, self.shaped(record), terminated, truncated, info

    def shaped(self, record: dict[str, Any]) -> float:
        """The shaped reward of a finished episode's record."""
        kind = record["outcome"]
        if kind in (outcomes.TIMELY, outcomes.LATE):
            w, tau = record["w"], record["tau"]
            return self.justified * (w / max(tau, w) if self.spl_weighted else 1.0)
        if kind == outcomes.PREMATURE:
            return self.premature
        if kind == outcomes.MISSED:
            return self.missed
        if kind == outcomes.OVER_ABSTAIN:
            return self.over_abstain
        return self.task_scale * float(record["task_reward"])
