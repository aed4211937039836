"""Nothing an agent sees before the episode ends may reveal whether it should abstain."""

from __future__ import annotations

import re

import gymnasium as gym
import pytest

import agentabstain_gym

LABEL_WORDS = ("should_abstain", "abstention", "category", "pair_id", "w_i", "evidence")
AGENT_INFO_KEYS = {"instruction", "task_id", "turn", "max_turns", "available_actions", "tools"}


def _label_strings(env: gym.Env) -> set[str]:
    tasks = env.unwrapped.tasks()
    categories = {t.category for t in tasks}
    return categories | {t.pair_id for t in tasks if t.pair_id}


@pytest.mark.parametrize("env_id", list(agentabstain_gym.ENV_IDS))
def test_info_before_the_end_carries_only_what_an_agent_may_know(env_id: str) -> None:
    env = gym.make(env_id)
    forbidden = _label_strings(env)
    verbs = env.unwrapped.verbs
    for category in sorted({t.category for t in env.unwrapped.tasks()}):
        obs, info = env.reset(seed=1, options={"category": category})
        seen = [(obs, info)]
        for verb in verbs:
            if verb in ("answer", "submit", "buy", "respond"):
                continue
            obs, _, terminated, truncated, info = env.step(f"{verb}[{info['instruction'][:60]}]")
            if terminated or truncated:
                break
            seen.append((obs, info))
        for obs, info in seen:
            assert set(info) <= AGENT_INFO_KEYS, set(info) - AGENT_INFO_KEYS
            # tool schemas may name a product "category" field; label names are checked on everything else
            blob = obs + " " + " ".join(str(v) for k, v in info.items() if k not in ("instruction", "tools"))
            for word in LABEL_WORDS:
                assert word not in blob.lower(), (category, word)
            blob += " " + str(info.get("tools", ""))
            for label in forbidden:
                assert not re.search(rf"\b{re.escape(label)}\b", blob), (category, label)


@pytest.mark.parametrize("env_id", list(agentabstain_gym.ENV_IDS))
def test_task_ids_have_one_shape_for_both_sides(env_id: str) -> None:
    tasks = gym.make(env_id).unwrapped.tasks()
    shape = {t.should_abstain: {re.sub(r"[0-9a-f]", "h", t.task_id) for t in tasks} for t in tasks}
    assert shape[True] == shape[False]
    # the order of tasks does not sort solvable before should-abstain (whatever the family's overall share);
    # judged where there are enough tasks for a share to mean something (small per-sandbox views are subsets of
    # AbstainTools-v0, which is checked)
    if len(tasks) >= 40:
        overall = sum(t.should_abstain for t in tasks) / len(tasks)
        first_half = tasks[: len(tasks) // 2]
        share = sum(t.should_abstain for t in first_half) / len(first_half)
        assert abs(share - overall) < 0.15
