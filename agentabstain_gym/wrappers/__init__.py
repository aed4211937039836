"""Gymnasium wrappers of the suite (SPEC 7), grouped by what they do.

* :mod:`.reward` - abstention-shaped rewards.
* :mod:`.stopping_rules` - the five deterministic stopping rules, enforced or advised.
"""

from agentabstain_gym.wrappers.reward import AbstentionReward
from agentabstain_gym.wrappers.stopping_rules import StoppingRulesWrapper

__all__ = ["AbstentionReward", "StoppingRulesWrapper"]
