"""Stable-Baselines3-ready forms of the suite's envs: numeric observations, discrete actions.

* :class:`StoppingPolicyEnv` - a family's solver acts, the policy chooses continue or ABSTAIN (``*-Stop-v*`` ids).
* :class:`DiscreteActions`, :class:`HashedTextObservation` and :class:`DiscreteActionEnv` - ABSTAIN + search +
  clickable slots with ``action_masks()`` for MaskablePPO, over hashed text (``*-Discrete-v0`` ids).
* :class:`StoppingFeatures` - the feature extractor both the stopping env and the saved-policy agent use.

Only Gymnasium and NumPy are needed here; training (torch, SB3) lives in :mod:`agentabstain_gym.rl`.
"""

from agentabstain_gym.wrappers.rl.discrete import DiscreteActionEnv, DiscreteActions, HashedTextObservation
from agentabstain_gym.wrappers.rl.features import StoppingFeatures
from agentabstain_gym.wrappers.rl.stopping_env import StoppingPolicyEnv

__all__ = ["DiscreteActionEnv", "DiscreteActions", "HashedTextObservation", "StoppingFeatures", "StoppingPolicyEnv"]
