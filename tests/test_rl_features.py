"""The stopping features contain nothing an agent may not see.

Two properties must hold for any feature an agent is allowed to have:

1. **Label invariance.** Relabel every task (solvable <-> should-abstain, other category, w, pair id) without
   changing what the env shows: the whole feature trajectory must be identical, whatever the policy does.
2. **Twins agree before the evidence.** Where a task and its abstain twin show the same thing up to the evidence
   turn (the web family's Missing Target keeps the instruction), their features agree up to that turn.

And features never read a key of ``info`` an agent would not have (e.g. the final ``info["abstention"]``).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import agentabstain_gym
from agentabstain_gym.core.task import Task
from agentabstain_gym.envs.qa.env import AbstainQAEnv
from agentabstain_gym.envs.terminal.env import AbstainTerminalEnv
from agentabstain_gym.envs.tools.env import AbstainToolsEnv
from agentabstain_gym.envs.web.env import AbstainWebShopEnv
from agentabstain_gym.registration import SB3_ENV_IDS
from agentabstain_gym.wrappers.rl import StoppingPolicyEnv

AGENT_INFO_KEYS = ("instruction", "task_id", "turn", "max_turns", "available_actions", "tools")


def relabel(task: Task, *, keep_category: bool = False) -> Task:
    """The same task with the opposite label; everything the env shows is unchanged. (The web family's category
    also drives what the store hides, so there only ``should_abstain``, ``w`` and ``pair_id`` flip.)"""
    if task.should_abstain:
        category = task.category if keep_category else "answerable"
        return dataclasses.replace(task, should_abstain=False, category=category, w=None, pair_id="flipped")
    category = task.category if keep_category else "answer_unknown"
    return dataclasses.replace(task, should_abstain=True, category=category, w=2, pair_id="flipped")


class RelabelledQA(AbstainQAEnv):
    """AbstainQA-v0 with every label flipped (a test double: observations are the real env's)."""

    def _tasks(self) -> tuple[Task, ...]:
        return tuple(relabel(t) for t in super()._tasks())


class RelabelledWeb(AbstainWebShopEnv):
    """AbstainWebShop-v1 with every label flipped (the store still hides what each task's variant hides)."""

    def _tasks(self) -> tuple[Task, ...]:
        return tuple(relabel(t, keep_category=True) for t in super()._tasks())


class RelabelledTerminal(AbstainTerminalEnv):
    """AbstainTerminal-v1 with every label flipped (setup still builds each task's variant)."""

    def _tasks(self) -> tuple[Task, ...]:
        return tuple(relabel(t, keep_category=True) for t in super()._tasks())


class RelabelledTools(AbstainToolsEnv):
    """AbstainTools-v0 with every label flipped (each task's delta still applies)."""

    def _tasks(self) -> tuple[Task, ...]:
        return tuple(relabel(t, keep_category=True) for t in super()._tasks())


RELABELLED = {"AbstainQA-v0": "TestRelabelledQA-v0", "AbstainWebShop-v1": "TestRelabelledWeb-v0",
              "AbstainTerminal-v1": "TestRelabelledTerminal-v0", "AbstainTools-v0": "TestRelabelledTools-v0"}
for _cls, _id in ((RelabelledQA, "TestRelabelledQA-v0"), (RelabelledWeb, "TestRelabelledWeb-v0"),
                  (RelabelledTerminal, "TestRelabelledTerminal-v0"), (RelabelledTools, "TestRelabelledTools-v0")):
    if _id not in gym.registry:
        gym.register(_id, entry_point=f"{__name__}:{_cls.__name__}")
STOP_FAMILY_IDS = [gym.spec(e).kwargs["env_id"] for e in SB3_ENV_IDS if "-Stop-" in e]


def trajectory(env: StoppingPolicyEnv, task_id: str, policy: list[int]) -> list[tuple[list[float], str]]:
    obs, _ = env.reset(seed=5, options={"task_id": task_id})
    out = [(obs.tolist(), env.proposal)]
    for action in policy:
        obs, _, terminated, truncated, _ = env.step(action)
        out.append((obs.tolist(), env.proposal))
        if terminated or truncated:
            break
    return out


@pytest.mark.parametrize("env_id", STOP_FAMILY_IDS)
def test_features_are_invariant_to_the_label(env_id: str) -> None:
    real = StoppingPolicyEnv(env_id)
    flipped = StoppingPolicyEnv(RELABELLED[env_id])
    assert real.feature_names == flipped.feature_names
    tasks = real.tasks(split="train")
    sample = [t for c in sorted({t.category for t in tasks}) for t in [x for x in tasks if x.category == c][:5]]
    for task in sample:
        assert flipped.tasks()[[t.task_id for t in flipped.tasks()].index(task.task_id)].should_abstain != \
            task.should_abstain
        for policy in ([0] * 10, [0, 1], [0, 0, 1]):
            assert trajectory(real, task.task_id, policy) == trajectory(flipped, task.task_id, policy), task.category


def test_features_ignore_info_keys_an_agent_does_not_have() -> None:
    env = StoppingPolicyEnv("AbstainQA-v0")
    for category in ("answerable", "answer_unknown", "underspecified_context"):
        obs, info = env.reset(seed=2, options={"category": category})
        done = False
        while not done:
            observation = env.env.unwrapped._last_observation  # the text the agent just saw
            visible = {k: info[k] for k in AGENT_INFO_KEYS if k in info}
            full = env.features.values(observation, info, env.proposal)
            assert full == env.features.values(observation, visible, env.proposal)
            obs, _, terminated, truncated, info = env.step(0)
            done = terminated or truncated
        assert "abstention" in info  # the final step's record is there, and the check above covered it


@pytest.mark.parametrize("env_id", [e for e in SB3_ENV_IDS if "-Stop-" in e])
def test_twins_that_look_alike_have_equal_features_before_the_evidence(env_id: str) -> None:
    env = gym.make(env_id).unwrapped
    tasks = env.tasks()
    by_pair: dict[str, list[Task]] = {}
    for t in tasks:
        if t.pair_id:
            by_pair.setdefault(t.pair_id, []).append(t)
    twins = [(a, b) for p in by_pair.values() for a in p if not a.should_abstain
             for b in p if b.should_abstain and b.instruction == a.instruction and (b.w or 1) >= 2][:20]
    if env.family == "qa":
        # No QA twin keeps its instruction (each changes one thing in the question), so only the reset features of
        # tasks with equal questions can be compared: every question's features are a function of its text.
        assert not twins
        seen: dict[str, list[float]] = {}
        for t in tasks[:300]:
            obs, _ = env.reset(seed=0, options={"task_id": t.task_id})
            assert seen.setdefault(t.instruction, obs.tolist()) == obs.tolist()
        return
    assert twins, f"{env_id}: expected twins that keep the instruction (e.g. Missing Target)"
    for solvable, missing in twins:
        a, _ = env.reset(seed=0, options={"task_id": solvable.task_id})
        b, _ = env.reset(seed=0, options={"task_id": missing.task_id})
        assert np.array_equal(a, b), (solvable.task_id, missing.task_id)


def test_feature_vector_is_bounded_and_named() -> None:
    env = StoppingPolicyEnv("AbstainQA-v0")
    names = env.feature_names
    assert len(set(names)) == len(names)
    for prefix in ("rule:", "cue:", "proposal:", "qa:"):
        assert any(n.startswith(prefix) for n in names), prefix
    assert {"turn_frac", "empty_seen", "errors_seen", "no_progress", "repeated_actions"} <= set(names)
    generic = StoppingPolicyEnv("AbstainQA-v0", family_features=False)
    assert not any(n.startswith("qa:") for n in generic.feature_names)
    assert agentabstain_gym.ENV_IDS  # the family ids stay Text ids


def _values_after(env: StoppingPolicyEnv, actions: list[str]) -> dict[str, Any]:
    obs, info = env.env.reset(seed=0, options={"category": "answerable"})
    env.features.reset(obs, info)
    for action in actions:
        obs, _, _, _, info = env.env.step(action)
        env.features.observe(action, obs)
    return env.features.values(obs, info, actions[-1])


def test_counters_follow_what_was_seen() -> None:
    env = StoppingPolicyEnv("AbstainQA-v0")
    values = _values_after(env, ["search[zzqx]", "search[zzqx]", "search[zzqx]", "search[zzqx]"])
    assert values["empty_seen"] == pytest.approx(0.4) and values["last_empty"] == 1.0
    assert values["rule:empty-result-repetition"] == 1.0 and values["rule_fired_ever"] == 1.0
    assert values["repeated_actions"] == pytest.approx(0.3) and values["proposal_repeats"] == 1.0
    values = _values_after(env, ["hello", "hello"])
    assert values["errors_seen"] == pytest.approx(0.2) and values["last_error"] == 1.0
    assert values["proposal:other"] == 1.0


def test_each_rule_feature_matches_that_rule_alone() -> None:
    from agentabstain_gym.core.stopping_rules import RULE_NAMES, StoppingRules
    from agentabstain_gym.wrappers.rl.features import StoppingFeatures

    steps = [("search[a]", "No results."), ("search[a]", "No results."), ("search[b]", "Error 503: service down"),
             ("search[b]", "Error 503: service down"), ("click[x]", "This size is not available."),
             ("click[x]", "This size is not available."), *[("click[y]", "fresh page")] * 5]
    features = StoppingFeatures("qa", ("search", "answer"), hook=None)
    features.reset("start", {"instruction": "q", "turn": 0, "max_turns": 10})
    alone = {name: StoppingRules(enabled=(name,), clock=lambda: 0.0) for name in RULE_NAMES}
    for engine in alone.values():
        engine.reset(observation="start")
    fired_somewhere = set()
    for turn, (action, observation) in enumerate(steps, start=1):
        features.observe(action, observation)
        values = features.values(observation, {"instruction": "q", "turn": turn, "max_turns": 10}, "")
        for name, engine in alone.items():
            expected = engine.observe(action, observation) is not None
            assert values[f"rule:{name}"] == float(expected), (turn, name)
            if expected:
                fired_somewhere.add(name)
    assert fired_somewhere == set(RULE_NAMES) - {"timeout"}
