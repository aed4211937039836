"""Keep the episode record under an outer time limit, and keep the env's own turn budget authoritative.

``gym.make(id, max_episode_steps=k)`` puts a ``TimeLimit`` around the env, and Gymnasium 1.x gives the unwrapped env
a spec with ``max_episode_steps=None``: the env cannot see k, so with k below ``max_turns`` the wrapper truncated the
episode before the env wrote ``info["abstention"]``. Every registered id lists this wrapper in its spec's
``additional_wrappers``, which ``gym.make`` applies *outside* the ``TimeLimit``; from there the limit is public
(``TimeLimit.spec.max_episode_steps``) and is handed to the env, which then ends the episode itself on step k.

Every id also registers ``max_episode_steps`` equal to its family's default ``max_turns``, so tools that read
``gym.spec(id).max_episode_steps`` see the horizon. That registered value only restates the env's own budget: when
the env may run longer (``max_turns=30`` given to ``gym.make``, or terminal tasks of your own with a larger budget),
this wrapper removes the registered ``TimeLimit`` rather than let it cut the episode short. A ``max_episode_steps``
you pass that differs from the registered one always applies.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
from gymnasium.wrappers import TimeLimit


def registered_limit(env_id: str | None) -> int | None:
    """The ``max_episode_steps`` registered for ``env_id`` (None if the id is not registered or has none)."""
    spec = gym.registry.get(env_id) if env_id is not None else None
    return spec.max_episode_steps if spec is not None else None


class KeepRecordOnTimeLimit(gym.Wrapper[Any, Any, Any, Any], gym.utils.RecordConstructorArgs):
    """Tell the env the step limit of the wrappers below (``env.spec.max_episode_steps``), once, when built.

    Registered ids get it from ``gym.make``. For a ``TimeLimit`` you add by hand, put this wrapper around it:
    ``KeepRecordOnTimeLimit(TimeLimit(gym.make(id), k))`` (or pass ``max_turns=k``, the env's own budget). Only the
    public spec and the public ``env`` attribute of a ``TimeLimit`` are read, never a wrapper's private state; envs
    without ``set_step_limit`` pass through unchanged. A ``TimeLimit`` right below this wrapper whose limit is the
    registered one and is shorter than the env's :attr:`max_turns_bound` is removed (see the module docstring).

    Examples:
        >>> import gymnasium as gym
        >>> gym.spec("AbstainQA-v0").max_episode_steps  # the family's default turn budget
        10
        >>> gym.make("AbstainQA-v0").spec.max_episode_steps
        10
        >>> gym.make("AbstainQA-v0", max_turns=15).spec.max_episode_steps is None  # the env's own budget wins
        True
    """

    def __init__(self, env: gym.Env[Any, Any]) -> None:
        gym.utils.RecordConstructorArgs.__init__(self)
        spec = env.spec
        limit = spec.max_episode_steps if spec is not None else None
        bound = getattr(env.unwrapped, "max_turns_bound", None)
        if (isinstance(env, TimeLimit) and limit is not None and spec is not None
                and limit == registered_limit(spec.id) and isinstance(bound, int) and bound > limit):
            env, limit = env.env, None  # the registered horizon would cut what the env's own budget allows
        gym.Wrapper.__init__(self, env)
        self.step_limit: int | None = limit
        setter = getattr(env.unwrapped, "set_step_limit", None)
        if callable(setter) and self.step_limit is not None:  # no limit here: leave one set further out alone
            setter(self.step_limit)
