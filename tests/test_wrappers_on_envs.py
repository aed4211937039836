"""The reward and stopping-rules wrappers on real envs (unit tests of the rule engine are in test_stopping_rules)."""

from __future__ import annotations

import gymnasium as gym
import pytest

import agentabstain_gym
from agentabstain_gym.wrappers import AbstentionReward, StoppingRulesWrapper


def first_task(env: gym.Env, **filters) -> str:
    return env.unwrapped.tasks(**filters)[0].task_id


def finish(env: gym.Env, task_id: str, actions: list[str]) -> tuple[float, dict]:
    env.reset(seed=0, options={"task_id": task_id})
    for action in actions:
        _, reward, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            return float(reward), info
    raise AssertionError("episode did not end")


def test_abstention_reward_values_each_outcome() -> None:
    env = AbstentionReward(gym.make("AbstainQA-v0"), justified=1.0, premature=-0.5, over_abstain=-1.0,
                           missed=-0.25, step_cost=-0.01)
    base = env.unwrapped
    solvable = first_task(env, category="answerable")
    unknown = first_task(env, category="answer_unknown")
    subjective = first_task(env, category="subjective")
    assert finish(env, subjective, ["abstain[]"])[0] == 1.0
    assert finish(env, subjective, ["search[x]", "abstain[]"])[0] == 0.5  # SPL term w / tau = 1 / 2
    assert finish(env, unknown, ["abstain[]"])[0] == -0.5
    assert finish(env, solvable, ["abstain[]"])[0] == -1.0
    reward, info = finish(env, unknown, ["answer[1900]"])
    assert reward == -0.25 and info["task_reward"] == 0.0
    gold = base.tasks(category="answerable")[0].payload["answers"][0]
    assert finish(env, solvable, [f"answer[{gold}]"])[0] == 1.0
    env.reset(seed=0, options={"task_id": solvable})
    assert env.step("search[x]")[1] == -0.01


@pytest.mark.parametrize("env_id", list(agentabstain_gym.ENV_IDS))
def test_stopping_rules_enforce_an_abstain_after_repeated_empty_results(env_id: str) -> None:
    env = StoppingRulesWrapper(gym.make(env_id), mode="enforce")
    env.reset(seed=0)
    fired = None
    for _ in range(env.unwrapped.max_turns):
        _, _, terminated, truncated, info = env.step("search[zzqx]")
        fired = fired or info.get("stopping_rule")
        if terminated or truncated:
            break
    assert fired is not None and fired["action"] == "ABSTAIN"
    assert set(fired) == {"action", "rule", "reason", "steps_taken", "elapsed_seconds"}
    record = info["abstention"]
    assert record["tau"] is not None and record["tau"] <= 3
    assert info["stopping_rule_enforced"]["rule"] == fired["rule"]


def test_advise_mode_never_overrides() -> None:
    env = StoppingRulesWrapper(gym.make("AbstainQA-v0"), mode="advise")
    env.reset(seed=0)
    for _ in range(4):
        _, _, terminated, truncated, info = env.step("search[zzqx]")
    assert "stopping_rule" in info and not terminated
