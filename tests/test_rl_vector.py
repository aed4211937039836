"""Vector envs: Gymnasium's (text ids keep real strings across processes) and SB3's (the stopping env)."""

from __future__ import annotations

import numpy as np
import pytest
from test_rl_forms import require_sb3

from agentabstain_gym.rl import make_vector_env
from agentabstain_gym.rl.vector import has_text


def test_async_vector_env_returns_real_strings_for_text_ids() -> None:
    envs = make_vector_env("AbstainQA-v0", 2, asynchronous=True)
    try:
        obs, infos = envs.reset(seed=[1, 2])
        assert all(isinstance(o, str) and o.startswith("Question: ") for o in obs)
        assert list(obs) != ["0" * len(obs[0])] * 2
        assert [o.split("\n")[0][len("Question: "):] for o in obs] == list(infos["instruction"])
        obs, *_ = envs.step(["search[founded]", "search[zzqx]"])
        assert obs[0].startswith("Results for") and obs[1].startswith("No passages matched")
    finally:
        envs.close()


def test_shared_memory_is_refused_for_text_and_used_for_numeric_forms() -> None:
    with pytest.raises(ValueError, match="placeholder"):
        make_vector_env("AbstainQA-v0", 2, asynchronous=True, shared_memory=True)
    envs = make_vector_env("AbstainQA-Stop-v0", 2, asynchronous=True)
    try:
        assert not has_text(envs.single_observation_space)
        obs, _ = envs.reset(seed=3)
        assert obs.shape == (2, envs.single_observation_space.shape[0]) and obs.dtype == np.float32
        obs, rewards, *_ = envs.step(np.array([0, 1]))
        assert rewards.shape == (2,)
    finally:
        envs.close()
    sync = make_vector_env("AbstainQA-Stop-v0", 3)
    obs, _ = sync.reset(seed=0)
    assert obs.shape[0] == 3
    sync.close()


@pytest.mark.parametrize("subproc", [False, True])
def test_sb3_vec_envs_run_the_stopping_env(subproc: bool) -> None:
    require_sb3()
    from agentabstain_gym.rl.train import make_stop_vec_env

    venv = make_stop_vec_env("AbstainQA-v0", 2, subproc=subproc)
    try:
        venv.seed(0)
        obs = venv.reset()
        assert obs.shape == (2, venv.observation_space.shape[0])
        finished = 0
        for t in range(12):
            obs, rewards, dones, infos = venv.step(np.array([0, int(t % 3 == 2)]))
            finished += int(dones.sum())
            assert all("abstention" in i for i, d in zip(infos, dones, strict=True) if d)
        assert finished >= 2
    finally:
        venv.close()
