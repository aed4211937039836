"""One conformance suite over every registered id: a new env is tested the moment it is registered.

Family ids take Text actions and are fuzzed with text; the SB3-ready forms (``registration.SB3_ENV_IDS``: Box
observations, Discrete actions) get the same determinism, pickling, spec and error checks through
:func:`probe_actions` and :func:`plain`, and are fuzzed with every action their space allows.
"""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.envs.registration import EnvSpec
from gymnasium.utils.env_checker import check_env
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agentabstain_gym
from agentabstain_gym.registration import SB3_ENV_IDS

TEXT_IDS = list(agentabstain_gym.ENV_IDS)
NUMERIC_IDS = list(SB3_ENV_IDS)
ENV_IDS = TEXT_IDS + NUMERIC_IDS


def abstain_action(env: gym.Env) -> object:
    """The ABSTAIN action in the env's own action space (``abstain[]`` for text envs)."""
    return getattr(env.unwrapped, "abstain_action", "abstain[]")


def plain(value: object) -> object:
    """Arrays as lists, so trajectories compare with ``==`` and serialise to JSON."""
    return value.tolist() if isinstance(value, np.ndarray) else value


def probe_actions(env: gym.Env) -> list:
    """A fixed, family-aware action script: every verb with a plausible argument, and some invalid actions; for a
    Discrete form, each non-ABSTAIN action in turn, then ABSTAIN."""
    if isinstance(env.action_space, spaces.Discrete):
        stop = abstain_action(env)
        return [a for a in range(int(env.action_space.n)) if a != stop][:6] + [stop]
    verbs = env.unwrapped.verbs
    actions = [f"{verb}[probe {i}]" for i in range(2) for verb in verbs if verb not in ("answer", "submit")]
    return ["not an action", "search[", *actions, "", "abstain[done]"]


def rollout(env: gym.Env, seed: int, actions: list) -> list[tuple]:
    trajectory = []
    obs, info = env.reset(seed=seed)
    trajectory.append((plain(obs), json.dumps(info, sort_keys=True, default=dict)))
    for action in actions:
        obs, reward, terminated, truncated, info = env.step(action)
        trajectory.append((plain(obs), reward, terminated, truncated, json.dumps(info, sort_keys=True, default=dict)))
        if terminated or truncated:
            break
    return trajectory


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_check_env_passes_without_warnings(env_id: str) -> None:
    env = gym.make(env_id)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env.unwrapped, skip_render_check=False)
    assert [str(w.message) for w in caught] == []
    env.close()


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_make_by_module_prefix(env_id: str) -> None:
    code = f"import gymnasium as gym; e = gym.make('agentabstain_gym:{env_id}'); print(e.reset(seed=0)[1]['turn'])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "0"


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_same_seed_same_actions_same_everything(env_id: str) -> None:
    env = gym.make(env_id)
    actions = probe_actions(env)
    first, second = rollout(env, 7, actions), rollout(env, 7, actions)
    assert first == second
    other = rollout(env, 8, actions)
    assert len(first) > 1 and (first != other or len(env.unwrapped.tasks()) == 1)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_determinism_across_processes(env_id: str) -> None:
    env = gym.make(env_id)
    here = json.dumps(rollout(env, 3, probe_actions(env)))
    code = (
        "import json, sys, gymnasium as gym, agentabstain_gym\n"
        "sys.path.insert(0, 'tests')\n"
        "from test_conformance import rollout, probe_actions\n"
        f"env = gym.make({env_id!r})\n"
        "print(json.dumps(rollout(env, 3, probe_actions(env))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**__import__("os").environ, "PYTHONHASHSEED": "12345"})
    assert out.stdout.strip() == here


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_pickled_env_continues_identically(env_id: str) -> None:
    env = gym.make(env_id)
    env.reset(seed=11)
    actions = probe_actions(env)
    env.step(actions[0])
    clone = pickle.loads(pickle.dumps(env))
    for action in actions[1:]:
        a, b = env.step(action), clone.step(action)
        assert [plain(x) for x in a[:4]] == [plain(x) for x in b[:4]]
        assert json.dumps(a[4], sort_keys=True, default=dict) == json.dumps(b[4], sort_keys=True, default=dict)
        if a[2] or a[3]:
            break


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_spec_round_trips_through_json(env_id: str) -> None:
    spec = gym.spec(env_id)
    again = EnvSpec.from_json(spec.to_json())
    assert again.id == env_id and again.entry_point == spec.entry_point
    assert isinstance(spec.entry_point, str)
    gym.make(again).close()


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_step_after_end_and_before_reset_are_clear_errors(env_id: str) -> None:
    env = gym.make(env_id).unwrapped
    stop = abstain_action(env)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(stop)
    env.reset(seed=0)
    env.step(stop)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(stop)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_bad_reset_options_name_the_valid_values(env_id: str) -> None:
    env = gym.make(env_id)
    with pytest.raises(ValueError, match="valid options"):
        env.reset(options={"colour": "red"})
    with pytest.raises(ValueError, match="valid splits"):
        env.reset(options={"split": "dev"})
    with pytest.raises(ValueError, match="valid categories"):
        env.reset(options={"category": "nonsense"})
    with pytest.raises(ValueError, match="task_id"):
        env.reset(options={"task_id": "no-such-task"})


_fuzz_text = st.one_of(
    st.text(max_size=300),
    st.builds(lambda v, a: f"{v}[{a}", st.sampled_from(["search", "answer", "click", "abstain", "x"]), st.text()),
    st.builds(lambda a: f"{a}]", st.text(max_size=50)),
    st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=31), max_size=50),
    st.just("x" * 1_000_000),
    st.just("search[" + "y" * 1_000_000 + "]"),
)


@pytest.mark.parametrize("env_id", TEXT_IDS)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(actions=st.lists(_fuzz_text, min_size=1, max_size=4))
def test_fuzzed_actions_never_raise_and_invalid_ones_change_nothing(env_id: str, actions: list[str]) -> None:
    env = gym.make(env_id).unwrapped
    env.reset(seed=0)
    for action in actions:
        before = env.state_key()
        obs, reward, terminated, truncated, info = env.step(action)
        assert isinstance(obs, str) and obs in env.observation_space
        if obs.startswith("Invalid action"):
            assert env.state_key() == before
            assert reward == 0.0 and not terminated
        if terminated or truncated:
            assert "abstention" in info
            break
        assert "abstention" not in info


@pytest.mark.parametrize("env_id", NUMERIC_IDS)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_fuzzed_actions_on_numeric_forms_stay_in_their_spaces(env_id: str, data: st.DataObject) -> None:
    env = gym.make(env_id).unwrapped
    assert isinstance(env.action_space, spaces.Discrete) and isinstance(env.observation_space, spaces.Box)
    seed = data.draw(st.integers(0, 2**16))
    obs, _ = env.reset(seed=seed)
    assert obs in env.observation_space
    actions = data.draw(st.lists(st.integers(0, int(env.action_space.n) - 1), min_size=1, max_size=12))
    for action in actions:
        obs, reward, terminated, truncated, info = env.step(action)
        assert obs in env.observation_space and np.isfinite(reward)
        if terminated or truncated:
            assert "abstention" in info
            break
        assert "abstention" not in info
    with pytest.raises(ValueError, match="action"):
        env.reset(seed=seed)
        env.step(int(env.action_space.n))
