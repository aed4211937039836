"""Training and running stopping policies.

:mod:`.vector` (Gymnasium vector envs built right for text spaces) needs nothing beyond Gymnasium; :mod:`.train`
(PPO on a ``*-Stop-v*`` env, the comparison table, the learning curve) needs the ``rl`` extra (torch,
stable-baselines3) and is imported on use.
"""

from agentabstain_gym.rl.vector import make_vector_env

__all__ = ["make_vector_env"]
