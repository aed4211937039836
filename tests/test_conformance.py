"""One conformance suite over every registered id: a new env is tested the moment it is registered."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
import warnings

import gymnasium as gym
import pytest
from gymnasium.envs.registration import EnvSpec
from gymnasium.utils.env_checker import check_env
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agentabstain_gym

ENV_IDS = list(agentabstain_gym.ENV_IDS)


def probe_actions(env: gym.Env) -> list[str]:
    """A fixed, family-aware action script: every verb with a plausible argument, and some invalid actions."""
    verbs = env.unwrapped.verbs
    actions = [f"{verb}[probe {i}]" for i in range(2) for verb in verbs if verb not in ("answer", "submit")]
    return ["not an action", "search[", *actions, "", "abstain[done]"]


def rollout(env: gym.Env, seed: int, actions: list[str]) -> list[tuple]:
    trajectory = []
    obs, info = env.reset(seed=seed)
    trajectory.append((obs, json.dumps(info, sort_keys=True)))
    for action in actions:
        obs, reward, terminated, truncated, info = env.step(action)
        trajectory.append((obs, reward, terminated, truncated, json.dumps(info, sort_keys=True)))
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
        assert a[:4] == b[:4]
        assert json.dumps(a[4], sort_keys=True) == json.dumps(b[4], sort_keys=True)
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
    with pytest.raises(RuntimeError, match="reset"):
        env.step("abstain[]")
    env.reset(seed=0)
    env.step("abstain[]")
    with pytest.raises(RuntimeError, match="reset"):
        env.step("abstain[]")


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


@pytest.mark.parametrize("env_id", ENV_IDS)
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
