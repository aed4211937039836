"""AbstainTools speed: tool-call steps/s per sandbox (lookups, commits, bad calls) and reset latency, steps/s over
the whole ``AbstainTools-v0`` suite, and the time to replay-validate every pair, with CartPole measured in the same
run as the floor. Targets: >= 10,000 lookup steps/s; validating all pairs under 30 s.

Run: ``python benchmarks/bench_tools.py [--episodes N] [--json]``. Lookups are the lookup and check calls of the
sandbox's gold paths, replayed through ``gym.make(...)`` (wrappers included) on its should-act tasks. The suite
figure replays every task's own gold path (both sides of every pair) through ``gym.make("AbstainTools-v0")``. The
validation time is ``python -m agentabstain_gym.envs.tools.validate`` in a fresh process (specs, every pair's
replays and witnesses, the balance and near-duplicate checks), as a user or CI runs it.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

import gymnasium as gym
from floor import cartpole, timed_rollouts

import agentabstain_gym  # noqa: F401
from agentabstain_gym.core.actions import tool_call
from agentabstain_gym.envs.tools.catalog import sandbox_names
from agentabstain_gym.envs.tools.spec import load_sandbox
from agentabstain_gym.envs.tools.tasks import pairs_for


def calls_of(sandbox: str, kinds: tuple[str, ...]) -> list[str]:
    tools = load_sandbox(sandbox).tools
    seen: list[str] = []
    for pair in pairs_for(sandbox):
        for call in pair.positive.gold:
            action = tool_call(call["tool"], **call["arguments"])
            if call["tool"] in tools and tools[call["tool"]].kind in kinds and action not in seen:
                seen.append(action)
    return seen


def steps_per_second(env: gym.Env, task_ids: list[str], actions: list[str], episodes: int,
                     per_episode: int = 25) -> tuple[float, float]:
    """(steps/s, mean reset ms): each episode resets to the next task and replays up to ``per_episode`` actions."""
    return timed_rollouts(env, episodes, lambda i, j: actions[(i + j) % len(actions)], per_episode=per_episode,
                          options=lambda i: {"task_id": task_ids[i % len(task_ids)]})


def suite_steps_per_second(episodes: int) -> float:
    """Steps/s replaying each task's gold calls, then ``respond``, over ``episodes`` suite tasks."""
    suite = gym.make("AbstainTools-v0")
    tasks = list(suite.unwrapped.tasks())
    plans = []
    for task in tasks:
        gold = task.payload.get("gold") or []
        plans.append([tool_call(c["tool"], **c["arguments"]) for c in gold] + ["respond[Done.]"])
    sps, _ = timed_rollouts(suite, episodes, lambda i, j: plans[i % len(plans)][min(j, len(plans[i % len(plans)]) - 1)],
                            per_episode=40, options=lambda i: {"task_id": tasks[i % len(tasks)].task_id})
    return sps


def validation_seconds() -> tuple[float, int]:
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "agentabstain_gym.envs.tools.validate"], capture_output=True,
                          text=True, check=False)
    return time.perf_counter() - t0, done.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--episodes", type=int, default=200)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    t0 = time.perf_counter()
    suite = gym.make("AbstainTools-v0")
    all_tasks = [t.task_id for t in suite.unwrapped.tasks()]
    load_s = time.perf_counter() - t0
    _, suite_reset_ms = steps_per_second(suite, all_tasks, ["abstain[]"], args.episodes, per_episode=1)
    cp_sps, cp_reset_ms = cartpole(args.episodes)
    rows = {}
    for name in sandbox_names():
        env = gym.make(f"AbstainTools/{name}-v0")
        positives = [t.task_id for t in env.unwrapped.tasks() if not t.should_abstain]
        lookups = calls_of(name, ("lookup",))
        checks = calls_of(name, ("verify",)) or lookups
        commits = calls_of(name, ("commit",))
        bad = [tool_call("no_such_tool"), '{"tool": "x", "arguments": [1]}', tool_call(lookups[0][10:20], x=1)]
        lookup_sps, reset_ms = steps_per_second(env, positives, lookups, args.episodes)
        check_sps, _ = steps_per_second(env, positives, checks, args.episodes)
        commit_sps, _ = steps_per_second(env, positives, commits, args.episodes, per_episode=3)
        bad_sps, _ = steps_per_second(env, positives, bad, args.episodes)
        rows[name] = {"tools": len(load_sandbox(name).tools), "lookup_steps_per_s": lookup_sps,
                      "check_steps_per_s": check_sps,
                      "commit_steps_per_s": commit_sps, "bad_call_steps_per_s": bad_sps, "reset_ms": reset_ms,
                      "lookup_vs_cartpole": lookup_sps / cp_sps}
    suite_sps = suite_steps_per_second(max(args.episodes, len(all_tasks)))
    validate_s, validate_rc = validation_seconds()
    result = {"load_all_pairs_s": load_s, "suite_reset_ms": suite_reset_ms, "cartpole_steps_per_s": cp_sps,
              "cartpole_reset_ms": cp_reset_ms, "suite_steps_per_s": suite_sps,
              "suite_vs_cartpole": suite_sps / cp_sps, "validate_all_s": validate_s,
              "validate_all_ok": validate_rc == 0, "pairs": len(all_tasks) // 2, "sandboxes": rows}
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"loading specs and {len(all_tasks) // 2} pairs (with w replays): {load_s:.2f} s; "
          f"AbstainTools-v0 reset {suite_reset_ms:.3f} ms")
    print(f"{'sandbox':16s} {'tools':>5s} {'lookup st/s':>12s} {'check st/s':>11s} {'commit st/s':>12s} "
          f"{'bad call st/s':>14s} {'reset ms':>9s} {'lookup/CartPole':>16s}")
    for name, r in rows.items():
        print(f"{name:16s} {r['tools']:5d} {r['lookup_steps_per_s']:12,.0f} {r['check_steps_per_s']:11,.0f} "
              f"{r['commit_steps_per_s']:12,.0f} {r['bad_call_steps_per_s']:14,.0f} {r['reset_ms']:9.3f} "
              f"{r['lookup_vs_cartpole']:16.3f}")
    print(f"{'CartPole-v1':16s} {'':5s} {cp_sps:12,.0f} {'':11s} {'':12s} {'':14s} {cp_reset_ms:9.3f}")
    print(f"AbstainTools-v0, every task's gold path: {suite_sps:,.0f} steps/s ({suite_sps / cp_sps:.3f}x CartPole)")
    print(f"validating {len(all_tasks) // 2} pairs in a fresh process: {validate_s:.1f} s (target < 30 s; "
          f"validator {'OK' if validate_rc == 0 else 'reported problems'})")


if __name__ == "__main__":
    main()
