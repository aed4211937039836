"""The SB3-ready forms: SB3's and Gymnasium's checkers, the Discrete form's masks, and what the stopping env sends.

SB3 and torch are optional (the ``rl`` extra): without them the SB3 parts skip with the reason, unless
``ABSTAIN_GYM_REQUIRE_ALL=1`` (CI), where a skip is a failure.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import warnings
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from conftest import skip_or_fail
from gymnasium.utils.env_checker import check_env as gym_check_env

import agentabstain_gym
from agentabstain_gym.core.base_env import AbstainEnv, StepResult
from agentabstain_gym.core.task import Task
from agentabstain_gym.registration import SB3_ENV_IDS
from agentabstain_gym.wrappers.rl import (
    DiscreteActionEnv,
    DiscreteActions,
    HashedTextObservation,
    StoppingPolicyEnv,
)
from agentabstain_gym.wrappers.rl.features import hashed_bag

STOP_IDS = [e for e in SB3_ENV_IDS if "-Stop-" in e]


def require_sb3() -> None:
    """Skip without SB3/torch, or fail when CI demands every component."""
    missing = [m for m in ("torch", "stable_baselines3", "sb3_contrib") if importlib.util.find_spec(m) is None]
    if not missing:
        return
    skip_or_fail(f"{', '.join(missing)} not installed (pip install torch==2.13.0 stable-baselines3 sb3-contrib)")


# ----- a tiny shop with a finite action set, so the Discrete form is tested whatever families exist ---------------
class FakeShop(AbstainEnv):
    """Search page -> results (2-4 items) -> item (buy now). Tasks 'x1'/'x2' are solvable; 'x3'/'x4' are missing
    their target (w = 2). Far smaller than the web family, with the same ``available_actions`` shape."""

    family = "web"
    verbs = ("search", "click")

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._all = tuple(
            Task(task_id=f"x{i}", family="web", instruction=f"buy a red mug number {i}", should_abstain=i > 2,
                 category="missing_target" if i > 2 else "original", pair_id=f"p{(i - 1) % 2}",
                 w=2 if i > 2 else None, payload={"items": 1 + i})
            for i in range(1, 5))
        self.page, self.items = "search", 0

    def _tasks(self) -> tuple[Task, ...]:
        return self._all

    def _begin(self, task: Task) -> str:
        self.page, self.items = "search", 0
        return f"WebShop [SEP] Instruction: [SEP] {task.instruction} [SEP] Search"

    def _clickables(self) -> list[str]:
        if self.page == "results":
            return [f"red mug {chr(97 + i)}" for i in range(self.items)] + ["back to search"]
        if self.page == "item":
            return ["buy now", "back to search"]
        return []

    def _extra_info(self) -> dict[str, Any]:
        return {"available_actions": {"has_search_bar": self.page == "search", "clickables": self._clickables()}}

    def _act(self, action: Any) -> StepResult:
        assert self._task is not None
        if action.verb == "search" and self.page == "search":
            self.page, self.items = "results", int(self._task.payload["items"])
            return StepResult(" [SEP] ".join(self._clickables()), evidence=self._task.should_abstain)
        if action.verb == "click" and action.argument in self._clickables():
            if action.argument == "buy now":
                return StepResult("Thank you", terminated=True, task_passed=not self._task.should_abstain,
                                  task_reward=0.0 if self._task.should_abstain else 1.0)
            self.page = "search" if action.argument == "back to search" else "item"
            return StepResult(f"page {self.page} [SEP] " + " [SEP] ".join(self._clickables()))
        return StepResult(f"Invalid action: cannot {action.verb}[{action.argument}] here.", invalid=True)

    def _state_key(self) -> Any:
        return (self.page, self.items)


FAKE_ID = "TestFakeShop-v0"
if FAKE_ID not in gym.registry:
    gym.register(FAKE_ID, entry_point=FakeShop)


def fake_form(n_actions: int = 6) -> DiscreteActionEnv:
    return DiscreteActionEnv(FAKE_ID, n_actions=n_actions, hash_dim=32, query_from_solver=False)


def expected_mask(info: dict[str, Any], n: int) -> list[bool]:
    available = info["available_actions"]
    valid = [True, bool(available["has_search_bar"])] + [True] * len(available["clickables"])
    return (valid + [False] * n)[:n]


# ----- tests --------------------------------------------------------------------------------------------------------
def test_sb3_form_ids_are_registered_beside_the_family_ids() -> None:
    assert "AbstainQA-Stop-v0" in SB3_ENV_IDS
    assert not set(SB3_ENV_IDS) & set(agentabstain_gym.ENV_IDS)


@pytest.mark.parametrize("env_id", SB3_ENV_IDS)
def test_registered_forms_pass_sb3_check_env_without_warnings(env_id: str) -> None:
    require_sb3()
    from stable_baselines3.common.env_checker import check_env

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(gym.make(env_id).unwrapped, warn=True)
    assert [str(w.message) for w in caught] == []


def test_discrete_form_passes_both_checkers() -> None:
    require_sb3()
    from stable_baselines3.common.env_checker import check_env

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(fake_form(), warn=True)
        gym_check_env(fake_form(), skip_render_check=True)
    assert [str(w.message) for w in caught] == []


def test_action_masks_mark_exactly_the_valid_actions() -> None:
    env = fake_form(n_actions=5)  # 3 click slots: the 5-item result page is cut to its first 3 clickables
    rng = np.random.default_rng(0)
    for seed in range(8):
        obs, info = env.reset(seed=seed)
        for _ in range(8):
            mask = env.action_masks()
            assert mask.dtype == bool and mask.tolist() == expected_mask(info, 5)
            slots = env.actions.slot_texts()
            clickables = info["available_actions"]["clickables"]
            assert slots[2:2 + len(clickables)] == [f"click[{c}]" for c in clickables][:3]
            for invalid in np.flatnonzero(~mask):  # a masked-out slot costs a turn and changes nothing
                assert env.actions.action_text(int(invalid)).startswith("unavailable[")
            valid = np.flatnonzero(mask)
            action = int(rng.choice(valid[valid != 0])) if len(valid) > 1 else 0
            before = env.state_key()
            obs, _, terminated, truncated, info = env.step(action)
            assert env.state_key() != before or terminated or truncated
            assert obs in env.observation_space
            if terminated or truncated:
                break


def test_masked_out_action_is_an_explained_invalid_turn() -> None:
    env = DiscreteActions(gym.make(FAKE_ID), n_actions=6)
    env.reset(seed=0)
    assert env.action_masks().tolist() == [True, True, False, False, False, False]
    before = env.unwrapped.state_key()
    obs, reward, terminated, _, info = env.step(4)
    assert obs.startswith("Invalid action") and reward == 0.0 and not terminated
    assert env.unwrapped.state_key() == before and info["turn"] == 1
    with pytest.raises(ValueError, match="outside the action space"):
        env.step(6)


def test_hashed_text_is_deterministic_and_uses_no_salted_hash() -> None:
    a = hashed_bag("Red mug, 12 oz -- buy now", 64)
    assert a.tolist() == hashed_bag("red MUG 12 oz buy now", 64).tolist()
    assert 0 < a.sum() <= 64 and set(np.unique(a)) <= {0.0, 1.0}
    code = ("from agentabstain_gym.wrappers.rl.features import hashed_bag; "
            "print(hashed_bag('Red mug, 12 oz -- buy now', 64).tolist())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONHASHSEED": "987"})
    assert out.stdout.strip() == str(a.tolist())
    env = HashedTextObservation(gym.make(FAKE_ID), dim=16)
    obs, _ = env.reset(seed=1)
    assert obs.shape == (33,) and obs in env.observation_space


def test_stopping_env_sends_the_solver_proposal_or_abstain() -> None:
    env = StoppingPolicyEnv("AbstainQA-v0", env_kwargs={"split": "train"})
    obs, info = env.reset(seed=0, options={"category": "answerable"})
    assert obs.shape == (len(env.feature_names),) and obs.dtype == np.float32
    proposal = env.proposal
    assert proposal.startswith("search[")
    obs, reward, terminated, truncated, info = env.step(0)
    assert info["turn"] == 1 and not terminated
    while not (terminated or truncated):
        obs, reward, terminated, truncated, info = env.step(0)
    assert info["abstention"]["outcome"] == "success" and reward > 0  # the solver answered by itself
    env.reset(seed=0, options={"category": "subjective"})
    _, reward, terminated, _, info = env.step(1)
    assert terminated and info["abstention"]["outcome"] == "timely" and reward == 1.0


def test_stopping_env_reward_coefficients_are_arguments() -> None:
    env = StoppingPolicyEnv("AbstainQA-v0", over_abstain=-3.0, premature=-0.25)
    env.reset(seed=0, options={"category": "answerable"})
    assert env.step(1)[1] == -3.0
    env.reset(seed=0, options={"category": "answer_unknown"})
    assert env.step(1)[1] == -0.25
    spec_env = gym.make("AbstainQA-Stop-v0", over_abstain=-2.0)
    spec_env.reset(seed=0, options={"category": "answerable"})
    assert spec_env.step(1)[1] == -2.0
