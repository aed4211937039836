"""The terminal family's scripted agent: a reference-following solver with generic stopping cues.

Writing a shell agent that solves arbitrary tasks from prose is out of reach for a script, so this solver knows the
family's task library: it matches the instruction to the closest *original* instruction of the shipped tasks (public
package data, the same for every variant, never the episode's label) and replays that task's reference solution. It
therefore measures stopping behaviour apart from solving skill. What it stops on is generic: a request too short to
say what is wanted, an out-of-range value in the request (a port above 65535, an octal mode with an 8 or 9), and
probe output that shows something missing (no such file, not found, connection refused). It misses most false
premises, as a script should.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from agentabstain_gym.envs.terminal.tasks import default_root

_WORD = re.compile(r"[a-z0-9_.\-/]+")
#: Requests shorter than this, with no file name or command in backticks, do not say what is wanted.
VAGUE_CHARS = 90
_CONCRETE = re.compile(r"`[^`]+`|\b[\w\-/]+\.(?:csv|json|txt|py|c|h|sql|db|log|ini|gz|zip|tar|sh|md|yaml|conf)\b")
_OUT_OF_RANGE = (
    re.compile(r"\bport\b[^.]*?\b(6553[6-9]|655[4-9]\d|65[6-9]\d\d|6[6-9]\d{3}|[7-9]\d{4}|\d{6,})\b", re.I),
    re.compile(r"\bmode\s+0?[0-7]*[89][0-9]*\b", re.I),
)
_MISSING = re.compile(r"no such file|not found|cannot access|does not exist|connection refused|couldn't connect|"
                      r"failed to connect|cannot open|no such table|unable to open", re.I)


@lru_cache(maxsize=4)
def _library(root: str) -> tuple[tuple[str, frozenset[str], str, str | None], ...]:
    """(base id, words of the original instruction, reference solution, probe command) per shipped task."""
    entries = []
    for manifest_path in sorted(Path(root).glob("*/task.json")):
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        original = manifest["variants"]["original"]["instruction"]
        probe = (manifest["variants"].get("missing_prerequisite") or {}).get("probe")
        solution = (manifest_path.parent / "solution.sh").read_text(encoding="utf-8")
        entries.append((manifest["id"], frozenset(_WORD.findall(original.lower())), solution, probe))
    return tuple(entries)


def request_cue(instruction: str) -> str | None:
    """Why the request alone should be declined, or None."""
    if len(instruction) < VAGUE_CHARS and not _CONCRETE.search(instruction):
        return "the request does not say what result is wanted"
    for pattern in _OUT_OF_RANGE:
        match = pattern.search(instruction)
        if match:
            return f"the request asks for an invalid value ({match.group(0)!r})"
    return None


def run_script_command(script: str) -> str:
    """One shell action that runs ``script`` in a child bash, so ``set -e`` or ``exit`` cannot end the shell."""
    return f"bash <<'__ABSTAIN_GYM_SCRIPT__'\n{script.rstrip()}\n__ABSTAIN_GYM_SCRIPT__"


class HeuristicTerminalSolver:
    """Probe, then replay the closest task's reference solution, then submit (``abstain=False``: never stops)."""

    name = "heuristic"

    def __init__(self, abstain: bool = True, tasks_dir: str | Path | None = None) -> None:
        self.abstain_enabled = abstain
        self.library = _library(str(Path(tasks_dir) if tasks_dir else default_root()))
        self.reset()

    def reset(self) -> None:
        self.plan: list[str] = []
        self.started = False
        self.probe_pending = False

    def _match(self, instruction: str) -> tuple[str, str, str | None]:
        words = frozenset(_WORD.findall(instruction.lower()))
        best = max(self.library, key=lambda e: (len(words & e[1]) / max(1, len(words | e[1])), e[0]))
        return best[0], best[2], best[3]

    def act(self, observation: str, info: dict[str, Any]) -> str:
        if not self.started:
            self.started = True
            instruction = str(info.get("instruction", ""))
            cue = request_cue(instruction)
            if cue and self.abstain_enabled:
                return f"abstain[{cue}]"
            _, solution, probe = self._match(instruction)
            self.plan = [run_script_command(solution), "submit"]
            self.probe_pending = True
            return probe or "ls -la"
        if self.probe_pending:
            self.probe_pending = False
            missing = _MISSING.search(observation)
            if missing and self.abstain_enabled:
                return f"abstain[something the task needs is missing: {missing.group(0)}]"
        return self.plan.pop(0) if self.plan else "submit"
