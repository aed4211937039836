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
def test_stopping_rules_enforce_an_abstain_on_a_futile_loop(env_id: str) -> None:
    """Repeating one fruitless action trips a rule on every family; the very next action sent is ABSTAIN."""
    env = StoppingRulesWrapper(gym.make(env_id), mode="enforce")
    env.reset(seed=0)
    fired_turn = None
    for _ in range(env.unwrapped.max_turns):
        _, _, terminated, truncated, info = env.step("search[zzqx]")
        if fired_turn is None and "stopping_rule" in info:
            fired_turn, fired = info["turn"], info["stopping_rule"]
        if terminated or truncated:
            break
    assert fired_turn is not None and fired["action"] == "ABSTAIN"
    assert set(fired) == {"action", "rule", "reason", "steps_taken", "elapsed_seconds"}
    record = info["abstention"]
    assert record["tau"] == fired_turn + 1 and terminated
    assert info["stopping_rule_enforced"]["rule"] == fired["rule"]


def test_repeated_empty_search_fires_the_empty_result_rule_on_qa() -> None:
    env = StoppingRulesWrapper(gym.make("AbstainQA-v0"), mode="enforce")
    env.reset(seed=0)
    env.step("search[zzqx]")
    _, _, _, _, info = env.step("search[zzqx]")
    assert info["stopping_rule"]["rule"] == "empty-result-repetition"
    _, _, terminated, _, info = env.step("answer[ignored: the rule takes over]")
    assert terminated and info["abstention"]["tau"] == 3


def test_advise_mode_never_overrides() -> None:
    env = StoppingRulesWrapper(gym.make("AbstainQA-v0"), mode="advise")
    env.reset(seed=0)
    for _ in range(4):
        _, _, terminated, truncated, info = env.step("search[zzqx]")
    assert "stopping_rule" in info and not terminated
