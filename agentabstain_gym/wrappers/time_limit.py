"""Keep the episode record under an outer time limit.

``gym.make(id, max_episode_steps=k)`` puts a ``TimeLimit`` around the env, and Gymnasium 1.x gives the unwrapped env
a spec with ``max_episode_steps=None``: the env cannot see k, so with k below ``max_turns`` the wrapper truncated the
episode before the env wrote ``info["abstention"]``. Every registered id lists this wrapper in its spec's
``additional_wrappers``, which ``gym.make`` applies *outside* the ``TimeLimit``; from there the limit is public
(``TimeLimit.spec.max_episode_steps``) and is handed to the env, which then ends the episode itself on step k.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym


class KeepRecordOnTimeLimit(gym.Wrapper[Any, Any, Any, Any], gym.utils.RecordConstructorArgs):
    """Tell the env the step limit of the wrappers below (``env.spec.max_episode_steps``), once, when built.

    Registered ids get it from ``gym.make``. For a ``TimeLimit`` you add by hand, put this wrapper around it:
    ``KeepRecordOnTimeLimit(TimeLimit(gym.make(id), k))`` (or pass ``max_turns=k``, the env's own budget). Only the
    public spec is read, never a wrapper's private state; envs without ``set_step_limit`` pass through unchanged.
    """

    def __init__(self, env: gym.Env[Any, Any]) -> None:
        gym.utils.RecordConstructorArgs.__init__(self)
        gym.Wrapper.__init__(self, env)
        spec = env.spec
        self.step_limit: int | None = spec.max_episode_steps if spec is not None else None
        setter = getattr(env.unwrapped, "set_step_limit", None)
        if callable(setter) and self.step_limit is not None:  # no limit here: leave one set further out alone
            setter(self.step_limit)
