"""PPO training throughput (env steps/s) on the stopping-policy envs vs CartPole, in the same run.

Run: ``python benchmarks/bench_rl.py [--steps N] [--ids AbstainQA-Stop-v0 ...]``. For each env: PPO (MlpPolicy
64x64, n_steps 256 per env, torch on one thread) with SB3's DummyVecEnv x 4 and SubprocVecEnv x 2; the figure is
timesteps / wall time of ``learn`` (rollouts and gradient updates together, as a user's training sees it) and the
raw env rate without PPO. The ratio column is against CartPole-v1 measured in the same run and configuration.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import gymnasium as gym
import numpy as np

import agentabstain_gym
from agentabstain_gym.registration import SB3_ENV_IDS


def _maker(env_id: str) -> Callable[[], gym.Env]:
    def make() -> gym.Env:
        from stable_baselines3.common.monitor import Monitor

        import agentabstain_gym  # noqa: F401 - registers the ids in a sub-process

        return Monitor(gym.make(env_id))
    return make


def ppo_rate(env_id: str, vec: str, n: int, steps: int) -> float:
    from stable_baselines3 import PPO
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    cls = SubprocVecEnv if vec == "subproc" else DummyVecEnv
    venv = cls([_maker(env_id) for _ in range(n)])
    model = PPO("MlpPolicy", venv, n_steps=256, batch_size=256, n_epochs=10, seed=0, device="cpu",
                policy_kwargs={"net_arch": [64, 64]})
    model.learn(total_timesteps=256 * n)  # warm-up: first resets, index and dataset caches
    start = time.perf_counter()
    model.learn(total_timesteps=steps, reset_num_timesteps=False)
    rate = steps / (time.perf_counter() - start)
    venv.close()
    return rate


def env_rate(env_id: str, steps: int) -> float:
    env = gym.make(env_id)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    start = time.perf_counter()
    for _ in range(steps):
        action = int(rng.random() < 0.1) if "-Stop-" in env_id else env.action_space.sample()
        _, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            env.reset()
    return steps / (time.perf_counter() - start)


def main() -> None:
    import torch

    torch.set_num_threads(1)
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=8192, help="PPO timesteps timed per configuration")
    parser.add_argument("--ids", nargs="*", default=[e for e in SB3_ENV_IDS if "-Stop-" in e])
    args = parser.parse_args()
    assert agentabstain_gym.ENV_IDS
    ids = ["CartPole-v1", *args.ids]
    print(f"{'env':28s} {'env only':>10s} {'PPO Dummy x4':>13s} {'PPO Subproc x2':>15s} "
          f"{'vs CartPole (Dummy/Subproc)':>28s}")
    base: tuple[float, float] | None = None
    for env_id in ids:
        raw = env_rate(env_id, 3000)
        dummy = ppo_rate(env_id, "dummy", 4, args.steps)
        subproc = ppo_rate(env_id, "subproc", 2, args.steps)
        base = base or (dummy, subproc)
        print(f"{env_id:28s} {raw:10.0f} {dummy:13.0f} {subproc:15.0f} "
              f"{dummy / base[0]:13.2f} / {subproc / base[1]:.2f}")
    print("(env steps/s; PPO figures include gradient updates; torch threads = 1)")


if __name__ == "__main__":
    main()
