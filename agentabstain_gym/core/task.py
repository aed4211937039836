"""The task record every family produces.

A task carries its label (``should_abstain``, ``category``, ``w``) next to what the agent may see (``instruction``),
so the split between the two is made once, here: :meth:`Task.public_view` is the only part an env may expose before
the episode ends.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

FAMILIES = ("web", "terminal", "qa", "tools")
SPLITS = ("train", "val", "test")


@dataclass(frozen=True)
class Task:
    """One episode's worth of work, solvable or should-abstain.

    ``w`` is the earliest justified abstention turn (1 = the first action), fixed when the task is made; ``None`` on
    solvable tasks. ``grace_turns`` (should-abstain tasks only) widens what counts as timely: an ABSTAIN at turns
    ``w .. w + grace_turns`` is "timely within grace" (the terminal release's delayed tasks use 1); None means 0. ``evidence`` says in words what reveals infeasibility (for reports and reflection, never shown to
    agents). ``payload`` holds the family's own data (gold answers, product constraints, ...).
    """

    task_id: str
    family: str
    instruction: str
    should_abstain: bool
    category: str
    split: str = "test"
    pair_id: str | None = None
    w: int | None = None
    scenario: str | None = None
    evidence: str = ""
    payload: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    grace_turns: int | None = None

    def __post_init__(self) -> None:
        if self.family not in FAMILIES:
            raise ValueError(f"task {self.task_id!r}: family {self.family!r} is not one of {FAMILIES}")
        if self.split not in SPLITS:
            raise ValueError(f"task {self.task_id!r}: split {self.split!r} is not one of {SPLITS}")
        if self.should_abstain and (self.w is None or self.w < 1):
            raise ValueError(f"task {self.task_id!r}: a should-abstain task needs w >= 1, got {self.w!r}")
        if not self.should_abstain and self.w is not None:
            raise ValueError(f"task {self.task_id!r}: a solvable task has no w, got {self.w!r}")
        if self.grace_turns is not None and (not self.should_abstain or isinstance(self.grace_turns, bool)
                                             or not isinstance(self.grace_turns, int) or self.grace_turns < 0):
            raise ValueError(f"task {self.task_id!r}: grace_turns must be an integer >= 0 on a should-abstain task, "
                             f"got {self.grace_turns!r}")

    @property
    def request_based(self) -> bool:
        """True when the instruction alone warrants abstention (evidence at turn 0).

        Both operands are always evaluated (``&``, not ``and``): a short circuit on the label made resets of
        solvable tasks measurably faster, which a timing agent can read.
        """
        return bool(self.should_abstain) & (self.w == 1)

    def public_view(self) -> dict[str, Any]:
        """What an agent may know about the task before the episode ends."""
        return {"task_id": self.task_id, "instruction": self.instruction}
