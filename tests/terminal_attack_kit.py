"""What the adversarial checker tests share: a case, the reference-solution step, helpers that plant cheats.

Cases for more tasks live in ``tests/terminal_attacks_<area>.py`` modules (each defines ``CASES`` and ``MP_STUBS``);
``test_terminal_checks_adversarial.py`` collects every such module.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

from agentabstain_gym.envs.terminal.tasks import default_root

ROOT = default_root()
SOLUTION = "<solution>"  # a step: run the original's reference solution.sh
MARK = "/workspace/.git/PWNED"  # planted programs append here (inside .git, so git status does not see it)


@dataclass(frozen=True)
class Case:
    task: str
    name: str
    steps: tuple[str, ...]
    variant: str = "original"
    passes: bool = False  # what check.sh must say (True only for controls: solved, with inert plants)
    marker: str | None = None  # a file that must not exist afterwards: no planted program ran

    @property
    def id(self) -> str:
        return f"{self.task}:{self.name}"


def sh(text: str) -> str:
    return textwrap.dedent(text).strip("\n")


def exit0(path: str) -> str:
    """A shell command writing Python that ends the process with status 0 as soon as it is imported or run."""
    return f"echo 'import os; os._exit(0)' > {path}"


def plant_modules(*names: str) -> str:
    """Modules, site hooks and a .pth in the workspace that end any Python importing them with status 0."""
    return "\n".join(exit0(f"{n}.py") for n in (*names, "sitecustomize", "usercustomize")) + "\n" + exit0("zz-evil.pth")
