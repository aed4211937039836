"""Bad arguments and bad inputs end with one line on stderr and exit code 2, never a traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import agentabstain_gym
from agentabstain_gym.cli import main

CLI = [sys.executable, "-m", "agentabstain_gym.cli"]


def one_line_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """Run ``main(argv)`` (argparse errors raise SystemExit) and return its single stderr line."""
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code  # type: ignore[assignment]
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2, err
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@pytest.mark.parametrize(("argv", "needle"), [
    (["eval", "AbstainQA-v0", "--episodes", "-1"], "--episodes: must be at least 1"),
    (["eval", "AbstainQA-v0", "--episodes", "0"], "--episodes: must be at least 1"),
    (["eval", "AbstainQA-v0", "--workers", "0"], "--workers: must be at least 1"),
    (["eval", "AbstainQA-v0", "--seed", "-1"], "--seed: must be 0 or more"),
    (["eval", "AbstainQA-v0", "--seed", "x"], "not an integer"),
    (["train", "--timesteps", "-5"], "--timesteps: must be at least 1"),
    (["train", "--n-envs", "0"], "--n-envs: must be at least 1"),
    (["report", "x.jsonl", "--bootstrap", "-1"], "--bootstrap: must be 0 or more"),
    (["tools", "generate", "--seed", "-1", "--out", "x.yaml"], "--seed: must be 0 or more"),
    (["play", "AbstainQA-v0", "--seed", "-3"], "--seed: must be 0 or more"),
    (["convolve", "--rounds", "0"], "--rounds: must be at least 1"),
])
def test_numeric_options_are_validated(argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert needle in one_line_exit_2(argv, capsys)


def test_bad_agents_fail_before_the_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    agent = tmp_path / "my_agent.py"
    agent.write_text("class Real:\n    def reset(self):\n        pass\n    def act(self, o, i):\n        return 'abstain[x]'\n")
    out = tmp_path / "runs.jsonl"
    base = ["eval", "AbstainQA-v0", "--episodes", "2", "--quiet", "--out", str(out)]
    assert "has no attribute 'Nope'" in one_line_exit_2([*base, "--agent", f"{agent}:Nope"], capsys)
    assert "no such agent file" in one_line_exit_2([*base, "--agent", f"{tmp_path / 'missing.py'}:Real"], capsys)
    assert "no such policy file" in one_line_exit_2([*base, "--agent", f"sb3:{tmp_path / 'policy'}"], capsys)
    assert "No module named" in one_line_exit_2([*base, "--agent", "no_such_module_xyz:Agent"], capsys)
    assert not out.exists()  # nothing started
    assert main([*base, "--agent", f"{agent}:Real", "--json"]) == 0


def test_broken_pairs_yaml_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("pairs: [1, 2\n")
    assert "--pairs" in one_line_exit_2(["eval", "--pairs", str(broken), "--episodes", "1", "--quiet"], capsys)
    wrong = tmp_path / "wrong.yaml"
    wrong.write_text("hello: 1\n")
    assert "--pairs" in one_line_exit_2(["eval", "--pairs", str(wrong), "--episodes", "1", "--quiet"], capsys)


@pytest.mark.parametrize("env_id", ["Nope-v0", "AbstainTools/Calendar-v0"])
def test_train_env_must_be_trainable(env_id: str, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("stable_baselines3")
    assert "trainable ids: AbstainQA-v0" in one_line_exit_2(["train", "--env", env_id], capsys)


def test_every_family_is_trainable_at_its_own_version(capsys: pytest.CaptureFixture[str]) -> None:
    """A family whose id moved to -v1 keeps its stopping form trainable (its Stop id moved with it)."""
    pytest.importorskip("stable_baselines3")
    message = one_line_exit_2(["train", "--env", "Nope-v0"], capsys)
    families = [e for e in agentabstain_gym.ENV_IDS if "/" not in e]  # one id per family; sandbox ids are tools'
    assert len(families) == 4 and all(family_id in message for family_id in families), message


def test_out_naming_a_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert "is a directory" in one_line_exit_2(["eval", "AbstainQA-v0", "--agent", "always-abstain", "--episodes",
                                                "1", "--quiet", "--out", str(tmp_path)], capsys)
    runs = tmp_path / "runs.jsonl"
    assert main(["eval", "AbstainQA-v0", "--agent", "always-abstain", "--episodes", "1", "--quiet", "--json",
                 "--out", str(runs)]) == 0
    capsys.readouterr()
    assert "is a directory" in one_line_exit_2(["export", str(runs), "--out", str(tmp_path)], capsys)


def test_errors_in_a_subprocess_have_no_traceback(tmp_path: Path) -> None:
    proc = subprocess.run([*CLI, "eval", "AbstainQA-v0", "--workers", "0"], capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr


def test_report_json_has_the_per_agent_tables(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = tmp_path / "runs.jsonl"
    assert main(["eval", "AbstainQA-v0", "--agent", "always-abstain", "--agent", "never-abstain", "--episodes", "6",
                 "--quiet", "--json", "--out", str(runs)]) == 0
    capsys.readouterr()
    assert main(["report", str(runs), "--json", "--bootstrap", "0"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert set(rep) >= {"overall", "by_family", "by_category", "by_scenario", "by_agent", "per_agent"}
    assert set(rep["per_agent"]) == {"always-abstain", "never-abstain"}
    for agent, sub in rep["per_agent"].items():
        assert set(sub) >= {"overall", "by_family", "by_category", "by_scenario", "scenario_macro"}
        assert sub["overall"] == rep["by_agent"][agent]
        assert sub["by_family"]["qa"] == sub["overall"]
    assert main(["report", str(runs), "--bootstrap", "0"]) == 0
    text = capsys.readouterr().out
    for agent, sub in rep["per_agent"].items():
        for category, m in sub["by_category"].items():
            assert f"{agent} / {category}" in text
            if m["success_rate"] is not None:
                row = next(line for line in text.splitlines() if line.startswith(f"{agent} / {category} "))
                assert f"{m['success_rate']:.3f}" in row
