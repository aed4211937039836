"""The action-level SB3 form for families with a finite action set: ABSTAIN, search and clickable slots.

:class:`DiscreteActions` turns a text env whose ``info["available_actions"]`` lists ``has_search_bar`` and
``clickables`` (the web family, as WebShop) into ``Discrete(N)``: slot 0 is ABSTAIN, slot 1 searches (with the
solver's query, else the instruction), slots 2.. click the clickables in the order the env lists them.
``action_masks()`` marks exactly the slots that do something now, for sb3-contrib's MaskablePPO; a masked-out slot
sent anyway costs its turn as an invalid action (the env says so), never an exception.
:class:`HashedTextObservation` turns the text observation into a Box of hashed tokens (deterministic across
processes). :class:`DiscreteActionEnv` composes both, plus per-slot features, into one registrable env.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from agentabstain_gym.agents.base import Agent
from agentabstain_gym.core.actions import ABSTAIN, Action, parse_action
from agentabstain_gym.core.base_env import checked_render_mode
from agentabstain_gym.core.task import Task
from agentabstain_gym.wrappers.reward import AbstentionReward
from agentabstain_gym.wrappers.rl.features import hashed_bag, overlap, tokens
from agentabstain_gym.wrappers.rl.stopping_env import discrete_action

ABSTAIN_SLOT, SEARCH_SLOT, FIRST_CLICK_SLOT = 0, 1, 2


class DiscreteActions(gym.Wrapper[Any, np.int64, Any, str], gym.utils.RecordConstructorArgs):
    """``Discrete(n_actions)`` over ABSTAIN, search and the first ``n_actions - 2`` clickables, with masks.

    ``solver`` (optional) supplies the search query: at reset it is asked for its opening action, and when that is
    ``search[q]``, slot 1 searches ``q``; otherwise slot 1 searches the instruction. The spec records a copy of
    the solver made when the wrapper is built (Gymnasium deep-copies constructor arguments); envs rebuilt from one
    spec share that copy, which is safe because a solver is consulted only inside ``reset``.
    """

    def __init__(self, env: gym.Env[Any, str], n_actions: int = 32, solver: Agent | None = None) -> None:
        if n_actions < 3:
            raise ValueError(f"n_actions must be at least 3 (ABSTAIN, search, one click), got {n_actions}")
        gym.utils.RecordConstructorArgs.__init__(self, n_actions=n_actions, solver=solver)
        gym.Wrapper.__init__(self, env)
        self.n_actions = n_actions
        self.solver = solver
        self.action_space = spaces.Discrete(n_actions)
        self._verbs = tuple(getattr(env.unwrapped, "verbs", ("search", "click")))
        self._info: dict[str, Any] = {}
        self._query = ""

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        """Reset the env and take slot 1's query from the solver's opening search, if any."""
        observation, info = self.env.reset(seed=seed, options=options)
        self._info = info
        self._query = str(info.get("instruction", ""))
        if self.solver is not None:
            self.solver.reset()
            opening = parse_action(self.solver.act(observation, info), self._verbs)
            if isinstance(opening, Action) and opening.verb == "search" and opening.argument.strip():
                self._query = opening.argument.strip()
        return observation, info

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """Send the text action of slot ``action`` (an empty slot costs the turn as an invalid action)."""
        text = self.action_text(discrete_action(action, self.n_actions))
        observation, reward, terminated, truncated, info = self.env.step(text)
        self._info = info
        return observation, float(reward), terminated, truncated, info

    # ----- slots ----------------------------------------------------------------------------------------------------
    def _available(self) -> tuple[bool, list[str]]:
        available = self._info.get("available_actions")
        if not isinstance(available, Mapping):
            return "search" in self._verbs, []
        clickables = [str(c) for c in available.get("clickables") or []]
        return bool(available.get("has_search_bar", False)), clickables

    def slot_texts(self) -> list[str]:
        """What each slot would do now, as text ('' for an empty slot); slot 0 is ABSTAIN."""
        search, clickables = self._available()
        out = [ABSTAIN, f"search[{self._query}]" if search else ""]
        out += [f"click[{c}]" for c in clickables[: self.n_actions - FIRST_CLICK_SLOT]]
        return out + [""] * (self.n_actions - len(out))

    def action_masks(self) -> np.ndarray:
        """True exactly for the slots that are valid now (ABSTAIN always)."""
        return np.array([bool(t) for t in self.slot_texts()], dtype=bool)

    def action_text(self, index: int) -> str:
        """The text action of slot ``index``; an empty slot becomes an invalid action the env explains."""
        text = self.slot_texts()[index]
        return text or f"unavailable[slot {index} has no action now]"


class HashedTextObservation(gym.Wrapper[np.ndarray, Any, str, Any], gym.utils.RecordConstructorArgs):
    """Replace a text observation by hashed token presence of the instruction and the observation, plus the
    turn fraction: ``Box(0, 1, (2 * dim + 1,), float32)``. Uses CRC32, never Python's salted ``hash``."""

    def __init__(self, env: gym.Env[str, Any], dim: int = 256) -> None:
        if dim < 1:
            raise ValueError(f"dim must be positive, got {dim}")
        gym.utils.RecordConstructorArgs.__init__(self, dim=dim)
        gym.Wrapper.__init__(self, env)
        self.dim = dim
        self.observation_space = spaces.Box(0.0, 1.0, shape=(2 * dim + 1,), dtype=np.float32)

    def encode(self, observation: str, info: Mapping[str, Any]) -> np.ndarray:
        """The Box vector of an observation: hashed instruction tokens, hashed observation tokens, turn
        fraction.
        """
        turn = int(info.get("turn") or 0) / max(1, int(info.get("max_turns") or 1))
        return np.concatenate([hashed_bag(str(info.get("instruction", "")), self.dim),
                               hashed_bag(observation, self.dim),
                               np.array([min(1.0, turn)], dtype=np.float32)])

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        """Reset the env and encode the opening observation."""
        observation, info = self.env.reset(seed=seed, options=options)
        return self.encode(observation, info), info

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Step the env and encode the observation."""
        observation, reward, terminated, truncated, info = self.env.step(action)
        return self.encode(observation, info), float(reward), terminated, truncated, info


class DiscreteActionEnv(gym.Env[np.ndarray, np.int64]):
    """The registered action-level form: hashed text + per-slot features in, ``Discrete(n_actions)`` out.

    ## Description
    ``AbstainWebShop-Discrete-v1``: the web shop with a finite action set, so that a policy learns the whole
    episode (search, clicks, purchase) and not only when to stop. Built from :class:`DiscreteActions`,
    :class:`HashedTextObservation` and :class:`~agentabstain_gym.wrappers.AbstentionReward` around the family env.

    ## Action Space
    ``Discrete(n_actions)``: slot 0 is ABSTAIN, slot 1 searches (with the solver's opening query when
    ``query_from_solver``, else the instruction), slots 2.. click the page's clickables in the order the env lists
    them. :meth:`action_masks` marks the slots that do something now (for sb3-contrib's MaskablePPO); a masked slot
    sent anyway costs its turn as an invalid action.

    ## Observation Space
    ``Box(0, 1, (2 * hash_dim + 1 + 2 * n_actions,), float32)``: hashed token presence of the instruction and of
    the observation, the fraction of the turn budget spent, then for each slot whether it is valid and how much of
    the instruction its text covers, so a policy can tell what slot k would click.

    ## Rewards
    :class:`~agentabstain_gym.wrappers.AbstentionReward` with the ``reward`` keyword arguments (``justified``,
    ``spl_weighted``, ``premature``, ``missed``, ``over_abstain``, ``task_scale``, ``step_cost``).

    ## Starting State
    ``reset`` resets the family env with the same ``seed`` and ``options`` and returns the opening page's vector.

    ## Episode End
    On ABSTAIN, on a purchase, or at the family env's turn budget; ``info`` is the family env's, and the final
    step's carries ``info["abstention"]``.

    ## Arguments
    ``env_id`` (a family id with ``available_actions``, e.g. ``AbstainWebShop-v1``), ``env_kwargs`` (for
    ``gym.make``), ``n_actions`` (at least 3), ``hash_dim``, ``query_from_solver``, ``render_mode`` (``"ansi"``),
    and the reward coefficients as keyword arguments.

    ## Version History
    * v0: initial release. The tasks are the family id's, so its fingerprint is the family's.
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi"], "render_fps": 4}
    abstain_action: ClassVar[int] = ABSTAIN_SLOT

    def __init__(self, env_id: str, *, env_kwargs: Mapping[str, Any] | None = None, n_actions: int = 32,
                 hash_dim: int = 256, query_from_solver: bool = True, render_mode: str | None = None,
                 **reward: Any) -> None:
        render_mode = checked_render_mode(render_mode, self.metadata["render_modes"], type(self).__name__)
        self.env_id, self.render_mode = env_id, render_mode
        base = gym.make(env_id, **dict(env_kwargs or {}),
                        **({"render_mode": render_mode} if render_mode is not None else {}))
        self.family: str = base.unwrapped.family
        solver = None
        if query_from_solver:
            from agentabstain_gym.agents import make_agent

            solver = make_agent("never-abstain", env_id)
        self.actions = DiscreteActions(AbstentionReward(base, **reward), n_actions=n_actions, solver=solver)
        self.hashed = HashedTextObservation(self.actions, dim=hash_dim)
        self.n_actions = n_actions
        size = self.hashed.observation_space.shape[0] + 2 * n_actions
        self.observation_space = spaces.Box(0.0, 1.0, shape=(size,), dtype=np.float32)
        self.action_space = spaces.Discrete(n_actions)
        self._running = False

    def tasks(self, split: str | None = None, category: str | None = None) -> list[Task]:
        """The family env's tasks (the same filters as :meth:`AbstainEnv.tasks`)."""
        return self.actions.unwrapped.tasks(split=split, category=category)

    @property
    def fingerprint(self) -> str:
        """The family env's benchmark fingerprint: this form runs the same tasks."""
        return str(self.actions.unwrapped.fingerprint)

    @property
    def max_turns_bound(self) -> int:
        """The family env's :attr:`~agentabstain_gym.core.base_env.AbstainEnv.max_turns_bound` (one step = one turn)."""
        return int(self.actions.unwrapped.max_turns_bound)

    def set_step_limit(self, limit: int | None) -> None:
        """An outer time limit: one step here is one turn of the family env, which ends the episode on it."""
        self.actions.unwrapped.set_step_limit(limit)

    def state_key(self) -> Any:
        """The family env's state and whether an episode runs, for the conformance tests."""
        return (self.actions.unwrapped.state_key(), self._running)

    def action_masks(self) -> np.ndarray:
        """True for the slots that do something now (for MaskablePPO)."""
        return self.actions.action_masks()

    def _observe(self, observation: str, info: Mapping[str, Any]) -> np.ndarray:
        wanted = set(tokens(str(info.get("instruction", ""))))
        slots = self.actions.slot_texts()
        per_slot = np.array([[float(bool(t)), overlap(wanted, set(tokens(t))) if t and i != ABSTAIN_SLOT else 0.0]
                             for i, t in enumerate(slots)], dtype=np.float32).reshape(-1)
        return np.clip(np.concatenate([self.hashed.encode(observation, info), per_slot]), 0.0, 1.0)

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        """Reset the family env (same ``seed`` and ``options``) and return the opening page's vector."""
        super().reset(seed=seed)
        observation, info = self.actions.reset(seed=seed, options=options)
        self._running = True
        return self._observe(observation, info), info

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Send slot ``action``'s text action; the final ``info`` carries the episode record."""
        if not self._running:
            raise RuntimeError("step() called on an episode that has ended or not started: call reset() first")
        observation, reward, terminated, truncated, info = self.actions.step(action)
        self._running = not (terminated or truncated)
        return self._observe(observation, info), float(reward), terminated, truncated, info

    def render(self) -> str | None:
        """The family env's rendering of the current page."""
        return self.actions.render()  # type: ignore[return-value]

    def close(self) -> None:
        """Close the family env."""
        self.actions.close()
