"""Gymnasium vector envs of the suite's ids, built so text observations survive the trip between processes.

``AsyncVectorEnv`` with its default ``shared_memory=True`` returns every Text observation (also Text inside a Dict)
as a placeholder string such as ``'000...0'``, silently (FACTS.md). Everything in this package that builds vector
envs goes through :func:`make_vector_env`, which turns shared memory off whenever a space holds Text.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import gymnasium as gym
from gymnasium import spaces
from gymnasium.vector import AsyncVectorEnv, SyncVectorEnv, VectorEnv


def has_text(space: spaces.Space[Any]) -> bool:
    """Whether ``space`` is, or contains, a Text space."""
    if isinstance(space, spaces.Text):
        return True
    if isinstance(space, spaces.Dict):
        return any(has_text(s) for s in space.spaces.values())
    if isinstance(space, spaces.Tuple):
        return any(has_text(s) for s in space.spaces)
    return False


def make_vector_env(env_id: str, n: int, *, asynchronous: bool = False, shared_memory: bool | None = None,
                    **env_kwargs: Any) -> VectorEnv:
    """``n`` copies of ``env_id`` in one vector env (sub-processes when ``asynchronous``).

    ``shared_memory`` defaults to False for ids with Text observations (where True silently corrupts them) and
    True otherwise; passing True for a Text id raises rather than corrupt observations.
    """
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    fns = [partial(gym.make, env_id, **env_kwargs) for _ in range(n)]
    if not asynchronous:
        return SyncVectorEnv(fns)
    probe = gym.make(env_id, **env_kwargs)
    text = has_text(probe.observation_space)
    probe.close()
    if shared_memory is None:
        shared_memory = not text
    elif shared_memory and text:
        raise ValueError(f"{env_id} has Text observations: shared_memory=True would return placeholder strings")
    return AsyncVectorEnv(fns, shared_memory=shared_memory)
