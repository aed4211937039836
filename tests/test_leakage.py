"""Nothing an agent sees before the episode ends may reveal whether it should abstain."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import pytest

import agentabstain_gym
from agentabstain_gym.envs.qa import dataset as qa_dataset
from agentabstain_gym.envs.web import dataset as web_dataset
from agentabstain_gym.envs.web.pages import OBSERVATION_MODES

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


# ----- environment-based tasks start exactly like their twins ---------------------------------------------------------
#: (env id, category) whose abstain reason lies in the world, with a solvable twin of the same pair.
WORLD_BASED = (("AbstainWebShop-v1", "missing_target"), ("AbstainQA-v0", "answer_unknown"),
               ("AbstainQA-v0", "underspecified_context"))


def fresh_env(env_id: str, **kwargs: Any) -> gym.Env:
    """An env over a newly built dataset, so that every task's first reset is still ahead (a lazily computed
    per-task cache would otherwise be warm from other tests)."""
    web_dataset.build_dataset.cache_clear()
    qa_dataset.build_dataset.cache_clear()
    return gym.make(env_id, **kwargs)


def twin_pairs(env: gym.Env, category: str) -> list[tuple[Any, Any]]:
    tasks = env.unwrapped.tasks()
    twins = {t.pair_id: t for t in tasks if not t.should_abstain}
    return [(t, twins[t.pair_id]) for t in tasks if t.category == category]


def calls_during(fn: Callable[[], Any]) -> list[tuple[str, str]]:
    """Every Python and C function called while ``fn`` runs, in order (the code path, not its timing)."""
    seen: list[tuple[str, str]] = []

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            seen.append((frame.f_code.co_filename, frame.f_code.co_qualname))
        elif event == "c_call":
            seen.append(("<c>", getattr(arg, "__qualname__", repr(arg))))

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        fn()
    finally:
        sys.setprofile(previous)
    return seen


@pytest.mark.parametrize("env_id,category", WORLD_BASED)
def test_first_reset_runs_the_same_code_as_the_twins(env_id: str, category: str) -> None:
    """Nothing is derived per task at reset: the first reset of a world-based task calls exactly the functions its
    twin's first reset calls (the web shop once computed a Missing Target task's hidden set there, which a timing
    agent read at AUC 0.98)."""
    env = fresh_env(env_id)
    env.reset(seed=0)
    for i, (task, twin) in enumerate(twin_pairs(env, category)):
        order = (task, twin) if i % 2 else (twin, task)
        first, second = (calls_during(lambda t=t: env.reset(options={"task_id": t.task_id})) for t in order)
        assert first == second, (task.task_id, twin.task_id)


@pytest.mark.parametrize("mode", OBSERVATION_MODES)
def test_missing_target_starts_on_its_twins_page(mode: str) -> None:
    """The first observation and info of a Missing Target task are its twin's (same instruction, same page), so
    nothing in them depends on the hidden products."""
    env = gym.make("AbstainWebShop-v1", observation_mode=mode)
    pairs = twin_pairs(env, "missing_target")
    assert len(pairs) == 251
    for task, twin in pairs:
        obs, info = env.reset(options={"task_id": task.task_id})
        twin_obs, twin_info = env.reset(options={"task_id": twin.task_id})
        assert obs == twin_obs
        assert {**info, "task_id": ""} == {**twin_info, "task_id": ""}


@pytest.mark.parametrize("category", ["answer_unknown", "underspecified_context"])
def test_qa_world_based_questions_start_like_their_twins(category: str) -> None:
    """Same observation template on both sides: the first observation is the question in the same frame."""
    env = gym.make("AbstainQA-v0")
    for task, twin in twin_pairs(env, category):
        obs, info = env.reset(options={"task_id": task.task_id})
        twin_obs, twin_info = env.reset(options={"task_id": twin.task_id})
        assert obs.replace(task.instruction, twin.instruction) == twin_obs
        assert set(info) == set(twin_info) and info["max_turns"] == twin_info["max_turns"]
