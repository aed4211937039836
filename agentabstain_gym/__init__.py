"""agentabstain-gym: Gymnasium environments in which stopping is an action.

Importing the package registers every environment id (see :mod:`agentabstain_gym.registration`)::

    import gymnasium as gym
    import agentabstain_gym
    env = gym.make("AbstainQA-v0")
"""

from agentabstain_gym.core.actions import ABSTAIN, abstain, tool_call
from agentabstain_gym.registration import ENV_IDS, SB3_ENV_IDS, register_envs

__version__ = "0.1.0"

register_envs()

__all__ = ["ABSTAIN", "ENV_IDS", "SB3_ENV_IDS", "__version__", "abstain", "register_envs", "tool_call"]
