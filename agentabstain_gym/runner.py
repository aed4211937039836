"""Evaluate an agent on an env: one episode per task, one JSONL record per finished episode.

Records are appended as each episode ends (flushed and fsynced), and a re-run with the same output file skips the
episodes already recorded, so an interrupted run resumes without losing or repeating work.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import gymnasium as gym

import agentabstain_gym  # noqa: F401  (registers the ids)
from agentabstain_gym.agents.base import Agent
from agentabstain_gym.core.record import append_records, iter_records


def episode_seed(seed: int, env_id: str, task_id: str) -> int:
    """A per-episode seed that depends only on the run seed and the task, so order and workers do not matter."""
    digest = hashlib.sha256(f"{seed}:{env_id}:{task_id}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


def plan_tasks(env: gym.Env, *, split: str | None, episodes: int | None, seed: int) -> list[str]:
    """Task ids to run: every task of ``split`` (or all), or the first ``episodes`` of a seeded permutation."""
    import numpy as np

    tasks = env.unwrapped.tasks(split=split)
    ids = [t.task_id for t in tasks]
    if episodes is not None:
        order = np.random.default_rng(seed).permutation(len(ids))
        ids = [ids[i] for i in order[:episodes]]
    return ids


def run_episode(env: gym.Env, agent: Agent, task_id: str, seed: int) -> dict[str, Any]:
    """Play one episode and return its record (``agent`` filled in)."""
    agent.reset()
    observation, info = env.reset(seed=seed, options={"task_id": task_id})
    while True:
        action = agent.act(observation, info)
        observation, _reward, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            record = dict(info["abstention"])
            record["agent"] = agent.name
            return record


def evaluate(env_id: str, make_agent: Callable[[], Agent], *, split: str | None = None,
             episodes: int | None = None, seed: int = 0, out: str | Path | None = None,
             env_kwargs: dict[str, Any] | None = None,
             progress: Callable[[dict[str, Any]], None] | None = None) -> list[dict[str, Any]]:
    """Run ``make_agent()`` on the planned tasks of ``env_id``; returns every record of this run (old and new)."""
    env = gym.make(env_id, **(env_kwargs or {}))
    agent = make_agent()
    done: dict[str, dict[str, Any]] = {}
    if out is not None and Path(out).exists():
        for rec in iter_records(out):
            if rec.get("env_id") == env_id and rec.get("agent") == agent.name:
                done.setdefault(rec["task_id"], rec)
    records = []
    try:
        for task_id in plan_tasks(env, split=split, episodes=episodes, seed=seed):
            if task_id in done:
                records.append(done[task_id])
                continue
            record = run_episode(env, agent, task_id, episode_seed(seed, env_id, task_id))
            if out is not None:
                append_records(out, [record])
            records.append(record)
            if progress is not None:
                progress(record)
    finally:
        env.close()
    return records


def iter_env_ids(names: Iterable[str]) -> list[str]:
    known = list(agentabstain_gym.ENV_IDS)
    ids = []
    for name in names:
        if name not in known:
            raise KeyError(f"unknown env id {name!r}; valid ids: {', '.join(known)}")
        ids.append(name)
    return ids
