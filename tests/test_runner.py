"""`abstain-gym eval`: crash-safe resume, worker invariance, constant agents, user agents, plots, list, play."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import agentabstain_gym
from agentabstain_gym.cli import main
from agentabstain_gym.core import metrics
from agentabstain_gym.core.record import read_records
from agentabstain_gym.runner import EvalConfig, evaluate

DATA = Path(__file__).parent / "data"
CLI = [sys.executable, "-m", "agentabstain_gym.cli"]


def key(r: dict) -> tuple:
    return (r["env_id"], r["agent"], r["task_id"], r["seed"])


def test_kill_and_resume_equals_an_uninterrupted_run(tmp_path: Path) -> None:
    agent = f"{DATA / 'agents_for_tests.py'}:SlowHeuristic"
    args = [*CLI, "eval", "AbstainQA-v0", "--agent", agent, "--split", "test", "--quiet", "--json"]
    killed = tmp_path / "killed.jsonl"
    proc = subprocess.Popen([*args, "--out", str(killed)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if killed.exists() and killed.read_text().count("\n") >= 40:
            break
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    partial = killed.read_text().count("\n")
    assert 40 <= partial < 200, "the run should have been killed half-way"
    resumed = json.loads(subprocess.run([*args, "--out", str(killed)], capture_output=True, text=True,
                                        check=True).stdout)
    clean = tmp_path / "clean.jsonl"
    uninterrupted = json.loads(subprocess.run([*args, "--out", str(clean)], capture_output=True, text=True,
                                              check=True).stdout)
    assert resumed == uninterrupted
    records = read_records([killed], warn=False)
    assert len(records) == 200 and len({key(r) for r in records}) == 200


def test_truncated_last_line_is_reported_and_rerun(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "runs.jsonl"
    assert main(["eval", "AbstainQA-v0", "--agent", "heuristic", "--episodes", "6", "--out", str(out), "--quiet",
                 "--json"]) == 0
    lines = out.read_text().splitlines(keepends=True)
    out.write_text("".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2])
    capsys.readouterr()
    assert main(["eval", "AbstainQA-v0", "--agent", "heuristic", "--episodes", "6", "--out", str(out), "--quiet",
                 "--json"]) == 0
    err = capsys.readouterr().err
    assert "runs.jsonl:6" in err and "re-run" in err
    records = read_records([out], warn=False)
    assert len(records) == 6 and len({key(r) for r in records}) == 6


def test_worker_count_does_not_change_records() -> None:
    config = EvalConfig(env_ids=["AbstainQA-v0"], agents=["heuristic", "random"], episodes=30, seed=5)
    one = sorted(json.dumps(r, sort_keys=True) for r in evaluate(config, workers=1))
    two = sorted(json.dumps(r, sort_keys=True) for r in evaluate(config, workers=2))
    assert one == two


@pytest.mark.parametrize("env_id", list(agentabstain_gym.ENV_IDS))
def test_constant_agents_score_zero_paired_accuracy(env_id: str) -> None:
    config = EvalConfig(env_ids=[env_id], agents=["always-abstain", "never-abstain"], split="test")
    records = evaluate(config)
    by_agent = metrics.report(records, bootstrap=0)["by_agent"]
    assert by_agent["always-abstain"]["over_abstention_rate"] == 1.0
    assert by_agent["always-abstain"]["paired_accuracy"] == 0.0
    assert by_agent["never-abstain"]["overall_recall"] == 0.0
    assert by_agent["never-abstain"]["paired_accuracy"] == 0.0


def test_a_raising_user_agent_is_recorded_and_the_run_goes_on(capsys: pytest.CaptureFixture[str]) -> None:
    agent = f"{DATA / 'agents_for_tests.py'}:Crashy"
    assert main(["eval", "AbstainQA-v0", "--agent", agent, "--episodes", "10", "--quiet", "--json"]) == 0
    captured = capsys.readouterr()
    assert "agent errors: 5" in captured.err
    assert json.loads(captured.out)["overall"]["n_abstain"] + json.loads(captured.out)["overall"]["n_solvable"] == 10


def test_user_agent_by_module_path_and_bad_names(capsys: pytest.CaptureFixture[str]) -> None:
    sys.path.insert(0, str(DATA))
    try:
        assert main(["eval", "AbstainQA-v0", "--agent", "agents_for_tests:SlowHeuristic", "--episodes", "4",
                     "--quiet", "--json"]) == 0
    finally:
        sys.path.remove(str(DATA))
    capsys.readouterr()
    assert main(["eval", "--agent", "nobody"]) == 2
    assert "valid agents: random, always-abstain" in capsys.readouterr().err
    assert main(["eval", "Nope-v0"]) == 2
    assert "valid ids: AbstainQA-v0" in capsys.readouterr().err
    assert main(["eval", "--suite", "space"]) == 2
    assert "valid suites" in capsys.readouterr().err
    assert main(["eval", "--split", "dev"]) == 2
    err = capsys.readouterr().err
    assert "valid splits: train, val, test" in err and err.count("\n") == 1


def test_plots_show_the_reports_numbers(tmp_path: Path) -> None:
    from agentabstain_gym.plots import PLOT_FILES, write_plots

    records = evaluate(EvalConfig(env_ids=["AbstainQA-v0"], agents=["heuristic", "random"], episodes=40))
    per_agent = {a: metrics.report([r for r in records if r["agent"] == a], bootstrap=0)
                 for a in ("heuristic", "random")}
    series = write_plots(per_agent, tmp_path)
    for name in PLOT_FILES:
        data = (tmp_path / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000
    assert series["absrec_at_k.png"]["random"] == [per_agent["random"]["overall"][f"absrec@{k}"]
                                                   for k in range(1, 11)]
    assert series["over_abstention_by_turn.png"]["heuristic"] == \
        per_agent["heuristic"]["overall"]["over_abstention_by_turn"]
    out = tmp_path / "runs.jsonl"
    out.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert main(["report", str(out), "--plots", str(tmp_path / "p")]) == 0
    assert sorted(p.name for p in (tmp_path / "p").iterdir()) == sorted(PLOT_FILES)


def test_list_json_counts(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    assert set(listing) == set(agentabstain_gym.ENV_IDS)
    qa = listing["AbstainQA-v0"]
    assert qa["tasks"] == 1000 and qa["should_abstain"] == 500 and sum(qa["split"].values()) == 1000


def test_play_a_whole_episode_through_a_terminal() -> None:
    import pexpect

    child = pexpect.spawn(sys.executable, ["-m", "agentabstain_gym.cli", "play", "AbstainQA-v0", "--seed", "3"],
                          encoding="utf-8", timeout=60)
    child.expect("turn 1 of 10")
    child.expect("> ")
    child.sendline("search[history of the town]")
    child.expect("turn 2 of 10")
    child.expect("> ")
    child.sendline("hello")
    child.expect("Invalid action")
    child.expect("> ")
    child.sendline("abstain[not sure]")
    child.expect(r"episode over: outcome=(\w+)")
    assert child.match.group(1) in ("timely", "late", "premature", "over_abstain")
    child.expect(pexpect.EOF)


def test_suites_count_each_task_once() -> None:
    from agentabstain_gym.agents import env_family
    from agentabstain_gym.runner import suite_env_ids

    everything = suite_env_ids("all")
    assert sorted(env_family(e) for e in everything) == sorted({env_family(e) for e in agentabstain_gym.ENV_IDS})
    assert all("/" not in e for e in everything)
