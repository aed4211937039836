"""Short SB3 runs (torch on one thread): PPO on the stopping env, MaskablePPO on the Discrete form; a saved stopping
policy is an agent (``sb3:PATH``) whose episodes match the env's."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from test_rl_forms import fake_form, require_sb3

from agentabstain_gym.agents import make_agent
from agentabstain_gym.core import metrics


@pytest.fixture(autouse=True)
def _one_thread() -> None:
    require_sb3()
    import torch

    torch.set_num_threads(1)


@pytest.fixture(scope="module")
def saved_policy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require_sb3()
    import torch
    from stable_baselines3 import PPO

    from agentabstain_gym.rl.train import make_stop_vec_env, policy_metadata, save_policy

    torch.set_num_threads(1)
    env = make_stop_vec_env("AbstainQA-v0", 2, split="train")
    model = PPO("MlpPolicy", env, n_steps=128, batch_size=64, n_epochs=2, seed=0, device="cpu",
                policy_kwargs={"net_arch": [32, 32]})
    model.learn(total_timesteps=512)
    env.close()
    meta = policy_metadata("AbstainQA-v0", {"over_abstain": -1.0}, seed=0, name="sb3-test")
    return save_policy(model, tmp_path_factory.mktemp("policy") / "stop", meta)


def test_short_ppo_run_trains_and_saves(saved_policy: Path) -> None:
    assert saved_policy.exists() and saved_policy.with_suffix(".json").exists()
    assert saved_policy.stat().st_size > 1000


def test_saved_policy_is_an_agent_that_replays_the_env(saved_policy: Path) -> None:
    from stable_baselines3 import PPO

    from agentabstain_gym.rl.train import evaluate_agent
    from agentabstain_gym.runner import episode_seed
    from agentabstain_gym.wrappers.rl import StoppingPolicyEnv

    agent = make_agent(f"sb3:{saved_policy}", "AbstainQA-v0")
    assert agent.name == "sb3-test"
    records = evaluate_agent(agent, "AbstainQA-v0", split="val", spec=f"sb3:{saved_policy}")
    assert len(records) == 200 and metrics.summarize(records, bootstrap=0)["n_pairs"] == 100
    model = PPO.load(str(saved_policy), device="cpu")
    env = StoppingPolicyEnv("AbstainQA-v0")
    for record in records[:30]:  # the agent on the text env == the policy on the stopping env
        obs, _ = env.reset(seed=episode_seed(0, "AbstainQA-v0", record["task_id"]),
                           options={"task_id": record["task_id"]})
        done = False
        while not done:
            action, _ = model.predict(obs, deterministic=True)
            obs, _, terminated, truncated, info = env.step(action)
            done = terminated or truncated
        assert (info["abstention"]["tau"], info["abstention"]["outcome"]) == (record["tau"], record["outcome"])


def test_saved_policy_refuses_a_different_feature_layout(saved_policy: Path, tmp_path: Path) -> None:
    import json
    import shutil

    copy = tmp_path / "other.zip"
    shutil.copy(saved_policy, copy)
    meta = json.loads(saved_policy.with_suffix(".json").read_text())
    meta["feature_names"] = meta["feature_names"][:-1]
    copy.with_suffix(".json").write_text(json.dumps(meta))
    with pytest.raises(ValueError, match="other features"):
        make_agent(f"sb3:{copy}", "AbstainQA-v0")


def test_short_maskable_ppo_run_trains_and_saves(tmp_path: Path) -> None:
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    venv = DummyVecEnv([fake_form, fake_form])
    model = MaskablePPO("MlpPolicy", venv, n_steps=64, batch_size=64, n_epochs=2, seed=0, device="cpu",
                        policy_kwargs={"net_arch": [32]})
    model.learn(total_timesteps=256)
    model.save(tmp_path / "masked")
    again = MaskablePPO.load(tmp_path / "masked.zip", device="cpu")
    env = fake_form()
    obs, _ = env.reset(seed=0)
    for _ in range(5):
        mask = env.action_masks()
        action, _ = again.predict(obs, action_masks=mask, deterministic=True)
        assert mask[int(action)]  # a masked policy only ever picks a valid slot
        obs, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            obs, _ = env.reset()
    assert np.isfinite(obs).all()


def test_abstain_threshold_moves_the_policy_between_the_constant_agents(saved_policy: Path) -> None:
    from agentabstain_gym.agents.sb3 import SB3StoppingAgent
    from agentabstain_gym.rl.train import calibrate_threshold, evaluate_agent

    never = SB3StoppingAgent(saved_policy, "AbstainQA-v0", threshold=1.01)
    always = SB3StoppingAgent(saved_policy, "AbstainQA-v0", threshold=0.0)
    baseline = evaluate_agent(make_agent("never-abstain", "AbstainQA-v0"), "AbstainQA-v0", split="val",
                              label="never-abstain")
    assert [r["outcome"] for r in evaluate_agent(never, "AbstainQA-v0", split="val")] == \
        [r["outcome"] for r in baseline]
    assert {r["tau"] for r in evaluate_agent(always, "AbstainQA-v0", split="val")} == {1}
    chosen = calibrate_threshold(never.model, "AbstainQA-v0", never.features_meta(), split="val",
                                 max_over_abstention=0.0, thresholds=(0.0, 1.01))
    assert chosen["chosen"] == 1.01 and [r["over_abstention_rate"] for r in chosen["rows"]] == [1.0, 0.0]
