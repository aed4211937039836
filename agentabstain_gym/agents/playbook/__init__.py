"""CONVOLVE playbooks (docs/design.md, section 8): stopping lessons learned from trajectories, used in prompts and as executable stops.

* :mod:`.book` - :class:`Playbook`, :class:`Bullet`, :class:`Trigger`; text rendering; versioned JSON.
* :mod:`.updater` - the deterministic updater U(playbook, trajectory, reflection) with a size budget.
* :mod:`.miner` - :class:`TrajectoryMiner`, the model-free reflector and curator.
* :mod:`.reflector` - :class:`LLMReflector`, the LLM-backed reflector and curator (prompts in ``data/playbook``).
* :mod:`.stops` - :class:`PlaybookAgent` and :class:`PlaybookStopWrapper`, triggers applied to any agent's run.
"""

from agentabstain_gym.agents.playbook.book import SECTIONS, Bullet, Playbook, PlaybookError, Trigger
from agentabstain_gym.agents.playbook.miner import TrajectoryMiner
from agentabstain_gym.agents.playbook.stops import (
    PlaybookAgent,
    PlaybookStops,
    PlaybookStopWrapper,
    fired_bullet,
)
from agentabstain_gym.agents.playbook.updater import Operation, Reflection, UpdateResult, update

__all__ = [
    "SECTIONS", "Bullet", "Operation", "Playbook", "PlaybookAgent", "PlaybookError", "PlaybookStopWrapper",
    "PlaybookStops", "Reflection", "TrajectoryMiner", "Trigger", "UpdateResult", "fired_bullet", "update",
]
