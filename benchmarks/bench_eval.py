"""Episodes per second of `abstain-gym eval` with the heuristic agent, per family, with 1 and 2 workers.

Run: ``python benchmarks/bench_eval.py [--episodes N]``. The 2-worker figure includes starting the worker processes
(spawn), as a user's run does.
"""

from __future__ import annotations

import argparse
import time

from agentabstain_gym.agents import env_family
from agentabstain_gym.runner import EvalConfig, evaluate, suite_env_ids


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--episodes", type=int, default=200)
    args = parser.parse_args()
    print(f"{'env':24s} {'family':8s} {'1 worker ep/s':>14s} {'2 workers ep/s':>15s} {'speedup':>8s}")
    for env_id in suite_env_ids("all"):
        config = EvalConfig(env_ids=[env_id], agents=["heuristic"], split=None, episodes=args.episodes)
        evaluate(EvalConfig(env_ids=[env_id], agents=["heuristic"], split=None, episodes=2))  # warm caches
        rates = []
        for workers in (1, 2):
            t0 = time.perf_counter()
            n = len(evaluate(config, workers=workers))
            rates.append(n / (time.perf_counter() - t0))
        print(f"{env_id:24s} {env_family(env_id):8s} {rates[0]:14.1f} {rates[1]:15.1f} {rates[1] / rates[0]:8.2f}")


if __name__ == "__main__":
    main()
