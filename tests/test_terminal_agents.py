"""Every terminal task through the real env and sandbox: the oracle validates the set, the heuristic is measured."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest
from conftest import require_command

import agentabstain_gym  # noqa: F401
from agentabstain_gym.core import metrics
from agentabstain_gym.envs.terminal.oracle import oracle_actions
from agentabstain_gym.envs.terminal.solver import HeuristicTerminalSolver, request_cue
from agentabstain_gym.runner import run_episode


@pytest.fixture(scope="module")
def env() -> gym.Env:
    require_command("bwrap", "the terminal family's default sandbox")
    env = gym.make("AbstainTerminal-v1", backend="bwrap")
    yield env
    env.close()


def play(env: gym.Env, task, actions: list[str]) -> dict:
    env.reset(seed=0, options={"task_id": task.task_id})
    for action in actions:
        _, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            return info["abstention"]
    raise AssertionError("episode did not end")


def test_oracle_validates_every_task_in_the_sandbox(env: gym.Env) -> None:
    """Reference solution passes the checker on every original; every abstain variant is abstained on at w."""
    tasks = env.unwrapped.tasks()
    assert len({t.payload["base_id"] for t in tasks}) >= 40 and len(tasks) >= 145
    records = [play(env, t, oracle_actions(t)) for t in tasks]
    failed = [(r["task_id"], r["category"], r["outcome"]) for r in records if not r["success"]]
    assert failed == []
    summary = metrics.summarize(records, bootstrap=0)
    assert summary["absrec@1"] == 1.0 and summary["success_rate"] == 1.0 and summary["paired_accuracy"] == 1.0
    missing = [r for r in records if r["category"] == "missing_prerequisite"]
    assert len(missing) >= 25 and all(r["evidence_turn"] == 1 for r in missing)


def test_reference_solution_fails_when_the_prerequisite_is_missing(env: gym.Env) -> None:
    for task in env.unwrapped.tasks(category="missing_prerequisite"):
        original = oracle_actions(next(t for t in env.unwrapped.tasks(category="original")
                                       if t.pair_id == task.pair_id))
        record = play(env, task, original)
        assert record["outcome"] == "missed", task.payload["base_id"]


def test_heuristic_agent_figures(env: gym.Env, capsys: pytest.CaptureFixture[str]) -> None:
    solver = HeuristicTerminalSolver()
    records = [run_episode(env, solver, t.task_id, 0) for t in env.unwrapped.tasks(split="test")]
    rep = metrics.report(records, bootstrap=0)
    with capsys.disabled():
        print("\nheuristic terminal agent, test split:", json.dumps(
            {k: rep["overall"][k] for k in ("absrec@1", "absrec@10", "spl", "over_abstention_rate",
                                            "success_rate", "paired_accuracy")}))
    assert rep["overall"]["success_rate"] >= 0.8 and rep["overall"]["over_abstention_rate"] <= 0.2


def test_request_cues() -> None:
    assert request_cue("Sort out the calculator project for me, please.")
    assert request_cue("In app.ini, set `port` in the [server] section to 70000 and leave the rest alone.")
    assert request_cue("Set release/run.sh to mode 0989 as the manifest says.")
    assert request_cue("Write the ten most common words of `book.txt` to top.txt, one per line, most common first.") \
        is None
