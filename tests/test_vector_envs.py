"""Every registered id in the vector envs researchers use: Gymnasium's Sync/Async vector envs, ``gym.make_vec`` (both
modes) and Stable-Baselines3's ``make_vec_env``, for thousands of steps with episodes ending together.

Gymnasium merges ``info`` key by key into arrays; an episode record that were a ``dict`` with an int ``tau`` in one
finished sub-env and ``None`` in another crashed the merge. The sweeps below choose actions so episodes end often
(abstain, answer, respond, submit...) and many end on the same step, with and without an ABSTAIN, and check that every
finished sub-env carries its whole record and no running one carries any.
"""

from __future__ import annotations

import json
import os
import pickle
import random
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from conftest import require_backend
from gymnasium.envs.registration import load_env_creator
from gymnasium.vector import AsyncVectorEnv, SyncVectorEnv, VectorEnv
from gymnasium.wrappers import TimeLimit
from test_rl_forms import require_sb3

import agentabstain_gym
from agentabstain_gym.core.record import RECORD_FIELDS, AbstentionRecord
from agentabstain_gym.core.spaces import OBSERVATION_MAX_CHARS
from agentabstain_gym.rl.vector import has_text, make_vector_env
from agentabstain_gym.wrappers import KeepRecordOnTimeLimit

ALL_IDS = agentabstain_gym.ENV_IDS + agentabstain_gym.SB3_ENV_IDS
#: Vector steps per id and vectorizer (every sub-env steps each time). The full sweep (ABSTAIN_GYM_VECTOR_STEPS=5000)
#: took 23 minutes on 2 shared cores for the 259 non-terminal cases (46 ids x 5 vectorizers): far too long for every
#: run, so the default is 300 steps, which still ends hundreds of episodes per case, many on the same step.
STEPS = int(os.environ.get("ABSTAIN_GYM_VECTOR_STEPS", "300"))
#: The terminal's steps run real shell commands in a sandbox (milliseconds each, where the other families take tens of
#: microseconds), and every episode starts a fresh sandbox: 5,000 steps take 10-20 minutes per vectorizer, so the
#: terminal ids get their own setting (ABSTAIN_GYM_VECTOR_TERMINAL_STEPS=5000 for the full sweep).
TERMINAL_STEPS = int(os.environ.get("ABSTAIN_GYM_VECTOR_TERMINAL_STEPS", str(min(STEPS, 60))))
N_ENVS = 3
FAMILY_IDS = ("AbstainQA-v0", "AbstainWebShop-v1", "AbstainTools-v0", "AbstainTerminal-v1")


def _needs(env_id: str) -> None:
    if env_id.startswith("AbstainTerminal"):
        require_backend("bwrap")


def _steps(env_id: str) -> int:
    return TERMINAL_STEPS if env_id.startswith("AbstainTerminal") else STEPS


def _family_id(env_id: str) -> str:
    return env_id if env_id in agentabstain_gym.ENV_IDS else gym.spec(env_id).kwargs["env_id"]


# ----- actions: each family's own valid actions, ending episodes often ----------------------------------------------
def _text_action(rng: random.Random, family_id: str, info: Mapping[str, Any]) -> str:
    """A valid action of ``family_id``'s family: ABSTAIN a quarter of the time, an ending action a fifth of it."""
    draw = rng.random()
    if draw < 0.25:
        return "abstain[not enough to go on]"
    ending = draw < 0.45
    words = [w for w in str(info.get("instruction") or "a").split() if w.isalnum()] or ["a"]
    if family_id.startswith("AbstainQA"):
        return "answer[1999]" if ending else f"search[{rng.choice(words)}]"
    if family_id.startswith("AbstainWebShop"):
        clickables = list((info.get("available_actions") or {}).get("clickables") or [])
        if clickables and (ending or rng.random() < 0.5):
            return f"click[{'buy now' if ending and 'buy now' in clickables else rng.choice(clickables)}]"
        return f"search[{' '.join(rng.sample(words, min(2, len(words))))}]"
    if family_id.startswith("AbstainTools"):
        if ending:
            return "respond[Done.]"
        names = [t["function"]["name"] for t in info.get("tools") or [] if isinstance(t, Mapping)]
        return json.dumps({"tool": rng.choice(names), "arguments": {}}) if names else "respond[Done.]"
    # submit runs the task's checker (seconds for the performance tasks' time-limited checks), so it is drawn rarely;
    # ABSTAIN still ends episodes often, and together with submit's and the turn limit's endings they mix taus
    submit = draw < 0.30
    return "submit" if submit else rng.choice(["ls", "pwd", "cat README* 2>/dev/null | head -n 3"])


def _abstain_action(env_id: str) -> int:
    return int(load_env_creator(gym.spec(env_id).entry_point).abstain_action)


def _sub_info(infos: Mapping[str, Any], i: int) -> dict[str, Any]:
    """Sub-env ``i``'s part of a merged Gymnasium info (masked keys only; nested dicts rebuilt)."""
    out: dict[str, Any] = {}
    for key, value in infos.items():
        if key.startswith("_"):
            continue
        if isinstance(value, dict):
            out[key] = _sub_info(value, i)
        elif infos.get(f"_{key}", np.ones(i + 1, dtype=bool))[i]:
            out[key] = value[i]
    return out


# ----- the checks shared by every vectorizer --------------------------------------------------------------------------
class Tally:
    """What a sweep saw: finished episodes, steps where several ended, and steps mixing an ABSTAIN with none."""

    def __init__(self) -> None:
        self.episodes = self.together = self.mixed = 0

    def finished(self, records: list[Mapping[str, Any]], family_id: str) -> None:
        for record in records:
            _check_record(record, family_id)
        self.episodes += len(records)
        self.together += len(records) >= 2
        self.mixed += len({record["tau"] is None for record in records}) == 2

    def check(self, env_id: str) -> None:
        # the crash needed several episodes ending on one step, some with an ABSTAIN (int tau) and some without
        # (the terminal's stopping form, cut to TERMINAL_STEPS, rarely sees its solver end an episode by itself)
        mixed_needed = 0 if env_id == "AbstainTerminal-Stop-v1" else 1
        assert self.episodes >= 10 and self.together >= 1 and self.mixed >= mixed_needed, (env_id, vars(self))


def _check_record(record: Mapping[str, Any], family_id: str) -> None:
    assert isinstance(record, AbstentionRecord)
    missing = [f for f in (*RECORD_FIELDS, "max_turns", "delay", "extras") if f not in record]
    assert not missing, missing
    assert record["env_id"] == family_id and 1 <= record["turns"] <= record["max_turns"]
    assert len(record["steps"]) == record["turns"]
    assert record["tau"] is None or record["tau"] == record["turns"]


def _drive(envs: VectorEnv, env_id: str, steps: int) -> Tally:
    """Step ``envs`` (Gymnasium's default next-step autoreset) and check records on every step."""
    family_id, text = _family_id(env_id), isinstance(envs.single_action_space, gym.spaces.Text)
    rng = random.Random(0)
    envs.action_space.seed(0)
    _, infos = envs.reset(seed=0)
    tally = Tally()
    resetting = np.zeros(envs.num_envs, dtype=bool)
    for _ in range(steps):
        if text:
            actions: Any = tuple(_text_action(rng, family_id, _sub_info(infos, i)) for i in range(envs.num_envs))
        else:  # sampled, with ABSTAIN a fifth of the time (Discrete-v0 has 32 slots, one of them ABSTAIN)
            stop = np.array([rng.random() < 0.2 for _ in range(envs.num_envs)])  # per sub-env: taus mix
            actions = np.where(stop, _abstain_action(env_id), envs.action_space.sample())
        _, _, terminated, truncated, infos = envs.step(actions)
        done = (terminated | truncated) & ~resetting  # a sub-env that ended last step is reset on this one
        has = infos.get("_abstention", np.zeros(envs.num_envs, dtype=bool))
        assert np.array_equal(has, done), (has, done)  # every finished sub-env has its record, no running one does
        tally.finished([infos["abstention"][i] for i in np.flatnonzero(done)], family_id)
        resetting = terminated | truncated
    return tally


def _fns(env_id: str, n: int = N_ENVS) -> list[Callable[[], gym.Env]]:
    return [partial(gym.make, env_id) for _ in range(n)]


def _real_text_observations(envs: VectorEnv, env_id: str) -> None:
    """Text observations are the env's own, not the placeholders shared memory would give."""
    observations, _ = envs.reset(seed=0)
    for i, observation in enumerate(observations):
        single = gym.make(env_id)
        expected, _ = single.reset(seed=i)  # a vector env seeded with s seeds its sub-envs s, s+1, ...
        single.close()
        assert observation == expected and len(observation) < OBSERVATION_MAX_CHARS


# ----- the sweeps -------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("env_id", ALL_IDS)
def test_sync_vector_env_keeps_every_record(env_id: str) -> None:
    _needs(env_id)
    envs = SyncVectorEnv(_fns(env_id))
    try:
        _drive(envs, env_id, _steps(env_id)).check(env_id)
    finally:
        envs.close()


@pytest.mark.parametrize("env_id", ALL_IDS)
def test_async_vector_env_keeps_every_record(env_id: str) -> None:
    _needs(env_id)
    text = env_id in agentabstain_gym.ENV_IDS
    # shared memory cannot hold Text observations (Gymnasium reads it once, at construction): turn it off for text ids
    envs = AsyncVectorEnv(_fns(env_id), shared_memory=not text)
    try:
        assert has_text(envs.single_observation_space) == text
        if text:
            _real_text_observations(envs, env_id)
        _drive(envs, env_id, _steps(env_id)).check(env_id)
    finally:
        envs.close()


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("env_id", ALL_IDS)
def test_make_vec_keeps_every_record(env_id: str, mode: str) -> None:
    _needs(env_id)
    text = env_id in agentabstain_gym.ENV_IDS
    # for async text ids the caller must say shared_memory=False: make_vec cannot be told by the registration
    kwargs = {"vector_kwargs": {"shared_memory": False}} if mode == "async" and text else {}
    envs = gym.make_vec(env_id, num_envs=N_ENVS, vectorization_mode=mode, **kwargs)
    try:
        if text and mode == "async":
            _real_text_observations(envs, env_id)
        _drive(envs, env_id, _steps(env_id)).check(env_id)
    finally:
        envs.close()


@pytest.mark.parametrize("env_id", agentabstain_gym.SB3_ENV_IDS)
def test_sb3_make_vec_env_runs_every_numeric_form(env_id: str) -> None:
    """SB3 asks for render_mode="rgb_array" (our envs warn and render nothing) and keeps each sub-env's info."""
    require_sb3()
    _needs(env_id)
    from stable_baselines3.common.env_util import make_vec_env

    venv = make_vec_env(env_id, n_envs=N_ENVS, seed=0)
    try:
        venv.action_space.seed(0)
        rng = random.Random(0)
        venv.reset()
        tally = Tally()
        family_id = _family_id(env_id)
        for _ in range(_steps(env_id)):
            actions = [_abstain_action(env_id) if rng.random() < 0.2 else venv.action_space.sample()
                       for _ in range(N_ENVS)]
            _, _, dones, infos = venv.step(np.array(actions))
            assert all(("abstention" in info) == bool(done) for info, done in zip(infos, dones, strict=True))
            tally.finished([info["abstention"] for info in infos if "abstention" in info], family_id)
            assert all("episode" in info for info in infos if "abstention" in info)  # SB3's Monitor, beside ours
        tally.check(env_id)
    finally:
        venv.close()


@pytest.mark.parametrize("asynchronous", [False, True])
def test_make_vector_env_survives_episodes_ending_together(asynchronous: bool) -> None:
    envs = make_vector_env("AbstainQA-Stop-v0", 3, asynchronous=asynchronous)
    try:
        envs.reset(seed=0)
        _, _, terminated, truncated, infos = envs.step(np.array([1, 1, 0]))  # two ABSTAIN on turn 1, one goes on
        assert list(terminated | truncated) == [True, True, False] and list(infos["_abstention"]) == [True, True, False]
        assert [infos["abstention"][i]["tau"] for i in (0, 1)] == [1, 1] and infos["abstention"][2] is None
        for _ in range(30):  # the third ends later (tau None or a later tau) while the other two run again
            _, _, terminated, truncated, infos = envs.step(np.array([0, 0, 0]))
            if (terminated | truncated)[2]:
                break
        assert infos["_abstention"][2] and _check_record(infos["abstention"][2], "AbstainQA-v0") is None
    finally:
        envs.close()


# ----- the record itself ------------------------------------------------------------------------------------------------
def _one_record(env_id: str = "AbstainQA-v0", action: str = "abstain[unsure]") -> AbstentionRecord:
    env = gym.make(env_id)
    env.reset(seed=4)
    *_, info = env.step(action)
    env.close()
    return info["abstention"]


def test_record_reads_like_the_dict_it_was() -> None:
    record = _one_record()
    plain = dict(record)
    assert not isinstance(record, dict) and type(plain) is dict
    assert record == plain and plain == record and {**record} == plain and record.to_dict() == plain
    assert record["tau"] == 1 and record.get("nope") is None and "outcome" in record and list(record) == list(plain)
    assert json.loads(json.dumps(plain)) == record  # the values are plain JSON
    assert pickle.loads(pickle.dumps(record)) == record  # what AsyncVectorEnv and SubprocVecEnv do
    with pytest.raises(TypeError):
        record["tau"] = 2  # type: ignore[index]
    with pytest.raises(TypeError):
        json.dumps(record)  # json writes dicts only: a reader is told to write dict(record)


# ----- render modes and outer time limits -------------------------------------------------------------------------------
@pytest.mark.parametrize("env_id", ALL_IDS)
def test_unsupported_render_mode_warns_and_falls_back(env_id: str) -> None:
    _needs(env_id)
    with pytest.warns(UserWarning, match="rgb_array"):
        env = gym.make(env_id, render_mode="rgb_array")
    try:
        env.reset(seed=0)
        assert env.unwrapped.render_mode is None and env.render() is None
        env.step(env.unwrapped.abstain_action if env_id in agentabstain_gym.SB3_ENV_IDS else "abstain[x]")
    finally:
        env.close()


def _busy_action(env_id: str) -> Any:
    """An action that never ends an episode (continue, a search, a command...)."""
    if env_id in agentabstain_gym.SB3_ENV_IDS:
        return 0 if "Stop" in env_id else 1  # Stop forms: the solver's action; Discrete: slot 1 (search)
    return {"AbstainQA-v0": "search[zzqx]", "AbstainWebShop-v1": "search[zzqx]", "AbstainTools-v0": "lookup[x]",
            "AbstainTerminal-v1": "true"}[env_id]


def _run_until_end(env: gym.Env, env_id: str, limit: int) -> tuple[int, bool, bool, dict[str, Any]]:
    env.reset(seed=1, options={"task_id": _solvable_task(env)})
    for turn in range(1, limit + 2):
        _, _, terminated, truncated, info = env.step(_busy_action(env_id))
        if terminated or truncated:
            return turn, terminated, truncated, info
    raise AssertionError("the episode did not end")


def _solvable_task(env: gym.Env) -> str:
    """A task the busy actions cannot finish early (the Stop forms' solver could answer a solvable one)."""
    return next(t.task_id for t in env.unwrapped.tasks() if t.should_abstain)


@pytest.mark.parametrize("env_id", [*FAMILY_IDS, "AbstainQA-Stop-v0", "AbstainWebShop-Discrete-v1"])
def test_outer_time_limit_keeps_the_record_marked(env_id: str) -> None:
    _needs(env_id)
    family = gym.make(_family_id(env_id))
    max_turns = family.unwrapped.max_turns
    family.close()
    limit = 2 if env_id in FAMILY_IDS else 1  # a Stop form's solver may answer by itself from turn 2 on
    assert max_turns > limit
    env = gym.make(env_id, max_episode_steps=limit)
    turn, terminated, truncated, info = _run_until_end(env, env_id, limit)
    record = info["abstention"]
    assert (turn, terminated, truncated) == (limit, False, True)
    assert (record["turns"], record["max_turns"], record["tau"]) == (limit, limit, None)
    assert record["extras"]["truncated_by"] == "time_limit"
    env.close()
    # the env's own budget is not marked as a time limit, and a limit above it changes nothing
    env = gym.make(env_id, max_turns=2) if env_id in FAMILY_IDS else gym.make(env_id, max_episode_steps=50)
    turn, _, truncated, info = _run_until_end(env, env_id, 50)
    budget = 2 if env_id in FAMILY_IDS else max_turns
    assert "truncated_by" not in info["abstention"]["extras"] and (not truncated or turn == budget)
    assert info["abstention"]["max_turns"] == budget
    env.close()


def test_time_limit_wrapped_by_hand_keeps_the_record_under_keep_record() -> None:
    env = KeepRecordOnTimeLimit(TimeLimit(gym.make("AbstainQA-v0"), 3))
    turn, _, truncated, info = _run_until_end(env, "AbstainQA-v0", 3)
    assert (turn, truncated) == (3, True) and info["abstention"]["extras"]["truncated_by"] == "time_limit"
    env.close()


def test_time_limit_reaches_vector_envs() -> None:
    envs = gym.make_vec("AbstainQA-v0", num_envs=2, vectorization_mode="sync", max_episode_steps=2)
    try:
        envs.reset(seed=0)
        envs.step(("search[zzqx]", "search[zzqx]"))
        _, _, terminated, truncated, infos = envs.step(("search[zzqx]", "abstain[x]"))
        assert list(terminated) == [False, True] and truncated[0]  # TimeLimit also truncates the one that ended
        first, second = infos["abstention"]
        assert first["extras"]["truncated_by"] == "time_limit" and first["tau"] is None and second["tau"] == 2
    finally:
        envs.close()
