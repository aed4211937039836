"""AbstainTerminal-v1 episodes on small task folders of our own (tests/data/terminal_tasks)."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import gymnasium as gym
import pytest
from test_terminal_sandbox import _processes_with, require_backend

import agentabstain_gym  # noqa: F401 - registers the ids
from agentabstain_gym.envs.terminal.env import AbstainTerminalEnv
from agentabstain_gym.envs.terminal.sandbox import SandboxUnavailable

TASKS = Path(__file__).parent / "data" / "terminal_tasks"


def make(**kwargs) -> AbstainTerminalEnv:
    require_backend(kwargs.get("backend") or "bwrap")
    return gym.make("AbstainTerminal-v1", tasks_dir=str(TASKS), **kwargs).unwrapped


def task_id(env: AbstainTerminalEnv, base: str, variant: str) -> str:
    return next(t.task_id for t in env.tasks() if t.payload["base_id"] == base and t.payload["variant"] == variant)


def solution(env: AbstainTerminalEnv) -> str:
    return (Path(env.task.payload["folder"]) / "solution.sh").read_text()


@pytest.fixture()
def env():
    environment = make()
    yield environment
    environment.close()


def test_solving_and_submitting_earns_the_reward(env: AbstainTerminalEnv) -> None:
    obs, info = env.reset(seed=0, options={"task_id": task_id(env, "fruit-count", "original")})
    assert "notes.txt" in obs and "/workspace" in obs and info["max_turns"] == 8
    assert set(info) == {"instruction", "task_id", "turn", "max_turns"}
    obs, reward, terminated, truncated, info = env.step("grep -ci apple notes.txt")
    assert obs == "3\n[exit status 0]" and reward == 0.0 and not terminated
    obs, *_ = env.step("cat missing.txt")
    assert obs.endswith("No such file or directory\n[exit status 1]")
    env.step(solution(env))
    obs, reward, terminated, truncated, info = env.step("submit")
    assert terminated and reward == 1.0 and "passed" in obs
    record = info["abstention"]
    assert record["outcome"] == "success" and record["task_reward"] == 1.0
    assert record["extras"]["check_exit_status"] == 0 and record["extras"]["commands"] == 3


def test_submitting_without_the_work_fails_the_check(env: AbstainTerminalEnv) -> None:
    env.reset(seed=0, options={"task_id": task_id(env, "sum-numbers", "original")})
    obs, reward, terminated, _, info = env.step("submit[]")
    assert terminated and reward == 0.0 and "did not pass" in obs
    assert info["abstention"]["outcome"] == "failure"


def test_missing_prerequisite_evidence_and_timely_abstention(env: AbstainTerminalEnv) -> None:
    env.reset(seed=0, options={"task_id": task_id(env, "fruit-count", "missing_prerequisite")})
    env.step("ls")  # shows archive/ only: not yet evidence by the task's rule
    obs, *_ = env.step("cat notes.txt")
    assert "No such file" in obs
    *_, info = env.step("abstain[notes.txt does not exist]")
    record = info["abstention"]
    assert record["evidence_turn"] == 2 and record["tau"] == 3 and record["w"] == 2
    assert record["outcome"] == "late" and record["reaction_delay"] == 0


def test_a_local_service_from_setup_runs_and_its_absence_shows(env: AbstainTerminalEnv) -> None:
    env.reset(seed=0, options={"task_id": task_id(env, "fetch-report", "original")})
    obs, *_ = env.step("curl -s http://127.0.0.1:18080/report.txt")
    assert obs == "quarterly: 42\n[exit status 0]"
    env.reset(seed=0, options={"task_id": task_id(env, "fetch-report", "missing_prerequisite")})
    obs, *_ = env.step("curl -sS http://127.0.0.1:18080/report.txt")
    assert "Failed to connect" in obs or "Connection refused" in obs
    *_, info = env.step("abstain[]")
    assert info["abstention"]["outcome"] == "timely"


@pytest.mark.parametrize("backend", ["bwrap", "docker"])
def test_nothing_visible_reveals_the_variant(backend: str) -> None:
    env = make(backend=backend)
    env.reset(seed=0, options={"task_id": task_id(env, "fetch-report", "missing_prerequisite")})
    # [x] in the patterns keeps them from matching this command's own text in /proc
    probe = ("grep -rlE 'missing_prerequisit[e]|false_premis[e]|underspecifie[d]' /workspace /tmp /root 2>/dev/null; "
             "cat /proc/[0-9]*/cmdline /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' "
             "| grep -cE 'missing_prerequisit[e]|check\\.s[h]|solution\\.s[h]|terminal_task[s]'; env | grep -c AG[X]; "
             "find / -xdev \\( -name 'check.sh' -o -name 'task.json' \\) 2>/dev/null | wc -l")
    obs, *_ = env.step(probe)
    env.close()
    assert obs.split() == ["0", "0", "0", "[exit", "status", "0]"]


def test_invalid_actions_cost_a_turn_and_change_nothing(env: AbstainTerminalEnv) -> None:
    env.reset(seed=0, options={"task_id": task_id(env, "sum-numbers", "original")})
    before = env.state_key()
    for action in ["", "   \n", 42, "x" * 70_000]:
        obs, reward, terminated, truncated, info = env.step(action)
        assert obs.startswith("Invalid action") and not terminated and env.state_key() == before
    obs, *_ = env.step("echo $((6 * 7))")
    assert obs == "42\n[exit status 0]" and env.state_key() != before


def test_the_turn_budget_truncates(env: AbstainTerminalEnv) -> None:
    env.reset(seed=0, options={"task_id": task_id(env, "sum-numbers", "underspecified_intent")})
    for turn in range(1, 9):
        obs, reward, terminated, truncated, info = env.step("true")
        assert truncated == (turn == 8) and not terminated
    assert info["abstention"]["outcome"] == "missed"


def test_a_pickled_episode_continues_identically(env: AbstainTerminalEnv) -> None:
    env.reset(seed=3, options={"task_id": task_id(env, "sum-numbers", "original")})
    env.step("cd /tmp && echo 5 > five && export N=2")
    clone = pickle.loads(pickle.dumps(env))
    try:
        for action in ["pwd; cat five; echo $N", "cat /workspace/numbers.txt | wc -l", "abstain[]"]:
            a, b = env.step(action), clone.step(action)
            assert a[:4] == b[:4]
        assert a[0] == b[0]
    finally:
        clone.close()


def test_reset_and_close_tear_the_sandbox_down(env: AbstainTerminalEnv) -> None:
    env.reset(seed=0, options={"task_id": task_id(env, "sum-numbers", "original")})
    env.step("sleep 6161 & sleep 0.2")
    assert _processes_with("sleep 6161")
    env.reset(seed=0, options={"task_id": task_id(env, "sum-numbers", "original")})
    assert _processes_with("sleep 6161") == []
    env.step("sleep 6162 & sleep 0.2")
    env.close()
    assert _processes_with("sleep 6162") == []


def test_limits_override_the_tasks_own(env: AbstainTerminalEnv) -> None:
    capped = make(limits={"output_cap": 1024, "command_timeout": 1})
    try:
        capped.reset(seed=0, options={"task_id": task_id(capped, "sum-numbers", "original")})
        obs, *_ = capped.step("seq 100000")
        assert "output is capped at 1024 bytes" in obs
        obs, *_ = capped.step("sleep 5")
        assert "ran longer than 1 s" in obs and obs.endswith("[exit status 130]")
    finally:
        capped.close()
    with pytest.raises(ValueError, match="valid limits"):
        make(limits={"bogus": 1})


def test_backend_choice_and_the_unsafe_flag() -> None:
    with pytest.raises(SandboxUnavailable, match="unsafe=True"):
        gym.make("AbstainTerminal-v1", tasks_dir=str(TASKS), backend="local")
    local = gym.make("AbstainTerminal-v1", tasks_dir=str(TASKS), backend="local", unsafe=True).unwrapped
    try:
        local.reset(seed=0, options={"task_id": task_id(local, "sum-numbers", "original")})
        local.step(solution(local))
        assert local.step("submit")[1] == 1.0
    finally:
        local.close()


@pytest.mark.parametrize("backend", ["unshare", "docker"])
def test_other_backends_run_whole_episodes(backend: str) -> None:
    env = make(backend=backend)
    try:
        env.reset(seed=0, options={"task_id": task_id(env, "fetch-report", "original")})
        env.step(solution(env))
        obs, reward, terminated, _, info = env.step("submit")
        assert reward == 1.0 and info["abstention"]["extras"]["backend"] == backend
    finally:
        env.close()


def test_the_shipped_tasks_load_and_are_hidden_from_the_sandbox() -> None:
    require_backend("bwrap")
    env = gym.make("AbstainTerminal-v1").unwrapped
    try:
        assert len(env.tasks()) >= 40
        env.reset(seed=0)
        obs, *_ = env.step(f"ls {Path(env.task.payload['folder']).parent} 2>&1 | head -3; echo end")
        assert Path(env.task.payload["folder"]).name not in obs and os.path.basename(str(TASKS)) not in obs
    finally:
        env.close()


@pytest.mark.parametrize("backend", ["bwrap", "unshare", "docker"])
def test_the_task_validator_runs_inside_a_sandbox(backend: str) -> None:
    require_backend(backend)
    from agentabstain_gym.envs.terminal.sandbox.runner import SandboxRunner
    from agentabstain_gym.envs.terminal.tasks import check_task_behaviour

    runner = SandboxRunner(backend)
    for folder in sorted(p for p in TASKS.iterdir() if p.is_dir()):
        assert check_task_behaviour(folder, runner, runner.workspace) == [], folder.name
    broken = Path(__file__).parent / "data" / "terminal_tasks" / "sum-numbers"
    with runner.workspace() as ws:
        assert runner(ws, f"bash {broken / 'setup.sh'} original") == (0, "")
        assert (ws / "numbers.txt").read_text().split() == [str(i) for i in range(1, 11)]  # the host sees it
        assert runner(ws, f"bash {broken / 'check.sh'}")[0] != 0
