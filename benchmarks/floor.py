"""What every benchmark shares: timed rollouts of an env, and CartPole timed the same way as the floor of per-step
overhead on this machine (import it from a benchmark script run as ``python benchmarks/bench_X.py``)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import gymnasium as gym


def timed_rollouts(env: gym.Env, episodes: int, action: Callable[[int, int], Any], *, per_episode: int = 1_000_000,
                   options: Callable[[int], dict | None] = lambda i: None) -> tuple[float, float]:
    """(steps/s, mean reset ms) over ``episodes``; ``action(i, j)`` is step j of episode i; only steps are timed."""
    step_time = reset_time = 0.0
    steps = 0
    for i in range(episodes):
        t0 = time.perf_counter()
        env.reset(seed=i, options=options(i))
        reset_time += time.perf_counter() - t0
        for j in range(per_episode):
            chosen = action(i, j)
            t0 = time.perf_counter()
            _, _, terminated, truncated, _ = env.step(chosen)
            step_time += time.perf_counter() - t0
            steps += 1
            if terminated or truncated:
                break
    return steps / step_time, 1000 * reset_time / episodes


def cartpole(episodes: int) -> tuple[float, float]:
    """CartPole-v1 through ``gym.make`` (with its checker wrappers), as our envs are measured."""
    return timed_rollouts(gym.make("CartPole-v1"), episodes, lambda i, j: i % 2)
