"""Gymnasium wrappers of the suite (docs/design.md, section 7), grouped by what they do.

* :mod:`.reward` - abstention-shaped rewards.
* :mod:`.stopping_rules` - the five deterministic stopping rules, enforced or advised.
* :mod:`.time_limit` - keeps ``info["abstention"]`` when an outer ``TimeLimit`` ends an episode.
"""

from agentabstain_gym.wrappers.reward import AbstentionReward
from agentabstain_gym.wrappers.stopping_rules import StoppingRulesWrapper
from agentabstain_gym.wrappers.time_limit import KeepRecordOnTimeLimit

__all__ = ["AbstentionReward", "KeepRecordOnTimeLimit", "StoppingRulesWrapper"]
