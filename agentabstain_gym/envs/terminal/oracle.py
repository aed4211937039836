"""Test-only oracle for the terminal family: it reads the label (the variant), which no agent may do."""

from __future__ import annotations

from pathlib import Path

from agentabstain_gym.core.task import Task
from agentabstain_gym.envs.terminal.solver import run_script_command


def oracle_actions(task: Task) -> list[str]:
    """Reference solution then submit on solvable tasks; ABSTAIN at w otherwise (after w - 1 probes)."""
    if not task.should_abstain:
        if task.payload.get("native"):
            from agentabstain_gym.envs.terminal.native.runtime import solution_command
            from agentabstain_gym.envs.terminal.native.taskset import spec_of

            return [solution_command(spec_of(task.payload["folder"])), "submit"]
        solution = (Path(task.payload["folder"]) / "solution.sh").read_text(encoding="utf-8")
        return [run_script_command(solution), "submit"]
    if task.w == 1:
        return ["abstain[the request cannot be done as written]"]
    probe = task.payload.get("probe") or "ls -la"
    return [probe] * (int(task.w or 2) - 1) + ["abstain[a prerequisite is missing]"]
