"""Test-only oracle for the terminal family: it reads the label (the variant), which no agent may do."""

from __future__ import annotations

from pathlib import Path

from agentabstain_gym.core.task import Task
from agentabstain_gym.envs.terminal.solver import run_script_command


def oracle_actions(task: Task) -> list[str]:
    """Reference solution then submit on ``original``; ABSTAIN at w otherwise (after the probe when w = 2)."""
    if not task.should_abstain:
        solution = (Path(task.payload["folder"]) / "solution.sh").read_text(encoding="utf-8")
        return [run_script_command(solution), "submit"]
    if task.w == 1:
        return ["abstain[the request cannot be done as written]"]
    return [task.payload["probe"], "abstain[a prerequisite is missing]"]
