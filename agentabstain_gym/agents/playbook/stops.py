"""Playbook as executable stops: a playbook's triggers applied to any agent's run.

:class:`PlaybookAgent` wraps an agent (scripted, SB3 policy behind an adapter, or an LLM) and sends ABSTAIN instead
of the agent's action as soon as a trigger fires; :class:`PlaybookStopWrapper` does the same as a Gymnasium wrapper
around an env. Both read only what an agent may read (``info["instruction"]``, ``info["turn"]`` and observations),
so the stops are an agent, not an oracle. The ABSTAIN reason names the bullet (``playbook <id>: ...``) so the
updater can credit or blame the bullet from the trajectory alone.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Mapping
from typing import Any, SupportsFloat

import gymnasium as gym

from agentabstain_gym.agents.base import Agent
from agentabstain_gym.agents.playbook.book import Bullet, Playbook

STOP_PREFIX = "playbook "
INFO_KEY = "playbook_stop"
_FIRED = re.compile(r"^\s*abstain\[\s*playbook ([A-Za-z0-9_.\-]+):", re.IGNORECASE)
_REASON_CHARS = 160


def stop_action(bullet: Bullet) -> str:
    """The ABSTAIN action for a fired bullet (brackets in the lesson are swapped so the argument stays intact)."""
    lesson = bullet.lesson if len(bullet.lesson) <= _REASON_CHARS else bullet.lesson[: _REASON_CHARS - 3] + "..."
    return f"abstain[{STOP_PREFIX}{bullet.id}: {lesson.replace('[', '(').replace(']', ')')}]"


def fired_bullet(record: Mapping[str, Any]) -> str | None:
    """Id of the bullet whose stop ended this episode, read from the last action of the record, else None."""
    steps = record.get("steps") or []
    if not steps:
        return None
    m = _FIRED.match(str(steps[-1].get("action", "")))
    return m.group(1) if m else None


class PlaybookStops:
    """Checks a playbook's triggers against what the agent has seen; stateless between calls."""

    def __init__(self, playbook: Playbook, family: str | None = None) -> None:
        self.playbook = playbook
        self.family = family

    def check(self, observation: str, info: Mapping[str, Any]) -> Bullet | None:
        """The first bullet (playbook order) whose trigger fires before the next action, or None.

        The next action is turn ``info["turn"] + 1``; instruction triggers read ``info["instruction"]`` (the first
        observation when an env has no such key), observation triggers read the latest observation.
        """
        turn = int(info.get("turn", 0)) + 1
        instruction = str(info.get("instruction") or "")
        if not instruction and turn == 1:
            instruction = observation
        for bullet in self.playbook.triggered(self.family):
            trigger = bullet.trigger
            assert trigger is not None
            text = instruction if trigger.on == "instruction" else observation
            if text and trigger.matches(text, family=self.family, turn=turn):
                return bullet
        return None


class PlaybookAgent:
    """Any agent with a playbook's stops in front of it: it acts until a trigger fires, then abstains.

    ``fired`` holds the id of the bullet that stopped the current episode (None while none has).
    """

    def __init__(self, inner: Agent, playbook: Playbook, *, family: str | None = None,
                 name: str | None = None) -> None:
        self.inner = inner
        self.playbook = playbook
        self.stops = PlaybookStops(playbook, family)
        self.name = name or f"{getattr(inner, 'name', type(inner).__name__)}+playbook"
        self.fired: str | None = None

    def reset(self, seed: int | None = None) -> None:
        """Reset the inner agent (with ``seed`` when it takes one) and forget which bullet fired."""
        self.fired = None
        reset = self.inner.reset
        if seed is not None and "seed" in inspect.signature(reset).parameters:
            reset(seed=seed)  # type: ignore[call-arg]
        else:
            reset()

    def act(self, observation: str, info: dict[str, Any]) -> str:
        """ABSTAIN with the bullet's lesson when a trigger fires on what the agent has seen, else the inner
        agent's action.
        """
        bullet = self.stops.check(observation, info)
        if bullet is not None:
            self.fired = bullet.id
            return stop_action(bullet)
        return self.inner.act(observation, info)

    def episode_extras(self) -> dict[str, Any]:
        """The inner agent's extras plus which bullet (if any) stopped the episode."""
        inner = getattr(self.inner, "episode_extras", None)
        extras = dict(inner()) if callable(inner) else {}
        extras[INFO_KEY] = {"playbook_version": self.playbook.version, "fired": self.fired}
        return extras


class PlaybookStopWrapper(gym.Wrapper[Any, Any, Any, Any], gym.utils.RecordConstructorArgs):
    """Enforce a playbook's triggers on an env: when one fires, the next step sends ABSTAIN instead of the action.

    ``info["playbook_stop"]`` names the bullet on the step whose action was replaced. The env's family (its
    ``family`` attribute) selects the bullets that apply.
    """

    def __init__(self, env: gym.Env[Any, Any], playbook: Playbook) -> None:
        gym.utils.RecordConstructorArgs.__init__(self, playbook=playbook)  # Gymnasium keeps a deep copy
        gym.Wrapper.__init__(self, env)
        family = getattr(env.unwrapped, "family", None)
        self.stops = PlaybookStops(playbook, family if isinstance(family, str) else None)
        self._pending: Bullet | None = None

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        """Reset the env and check the triggers against the opening observation."""
        obs, info = self.env.reset(seed=seed, options=options)
        self._pending = self.stops.check(str(obs), info)
        return obs, info

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        """Send ABSTAIN instead of ``action`` when a trigger fired after the last step, else ``action``."""
        enforced = self._pending
        self._pending = None
        sent = stop_action(enforced) if enforced is not None else action
        obs, reward, terminated, truncated, info = self.env.step(sent)
        info = dict(info)
        if enforced is not None:
            info[INFO_KEY] = {"bullet": enforced.id, "lesson": enforced.lesson}
        elif not (terminated or truncated):
            self._pending = self.stops.check(str(obs), info)
        return obs, reward, terminated, truncated, info
