"""The stopping-policy env: a family's solver acts, the policy only decides when to stop.

Stable-Baselines3 cannot consume text spaces, and learning a whole web or QA agent from scratch is not the point of
the suite: the question is *when* to abstain. So the family's heuristic solver, with its own abstention switched
off, proposes every turn's action, and the policy chooses ``0 = continue`` (the proposal is sent) or
``1 = ABSTAIN``. It observes a Box of features computed only from what an agent sees
(:class:`~agentabstain_gym.wrappers.rl.features.StoppingFeatures`), and is rewarded by
:class:`~agentabstain_gym.wrappers.AbstentionReward` with the coefficients given to the constructor.

This is a :class:`gymnasium.Env` rather than a wrapper because it drives a solver: its spaces, its step semantics and
its ``unwrapped`` are its own. It works for any family whose solver is listed in ``agents.SOLVERS``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from agentabstain_gym.core.actions import ABSTAIN
from agentabstain_gym.core.base_env import checked_render_mode
from agentabstain_gym.core.stopping_rules import DEFAULT_MAX_RETRIES
from agentabstain_gym.core.task import Task
from agentabstain_gym.wrappers.reward import AbstentionReward
from agentabstain_gym.wrappers.rl.features import StoppingFeatures

CONTINUE, STOP = 0, 1


def discrete_action(action: Any, n: int) -> int:
    """``action`` as an int in ``range(n)``; anything else is a caller bug and raises a clear ``ValueError``."""
    value = np.asarray(action)
    integral = value.size == 1 and (np.issubdtype(value.dtype, np.integer) or (
        np.issubdtype(value.dtype, np.floating) and float(value.item()).is_integer()))
    if not integral:
        raise ValueError(f"expected one integer action in [0, {n}), got {action!r}")
    index = int(value.item())
    if not 0 <= index < n:
        raise ValueError(f"action {index} is outside the action space Discrete({n})")
    return index


class StoppingPolicyEnv(gym.Env[np.ndarray, np.int64]):
    """Continue-or-abstain over a family env driven by its never-abstaining solver.

    ## Description
    The numeric form of a family id for Stable-Baselines3 (``AbstainQA-Stop-v0``, ``AbstainWebShop-Stop-v1``,
    ``AbstainTerminal-Stop-v1``, ``AbstainTools-Stop-v0``). The family's heuristic solver, with its own abstention
    switched off, proposes each turn's action; the policy only decides whether to send it or to stop. What is learnt
    is therefore *when* to abstain, with the rest of the agent held fixed.

    ## Action Space
    ``Discrete(2)``: ``0`` sends the solver's proposed action, ``1`` sends ``abstain[]``.

    ## Observation Space
    ``Box(0, 1, (n,), float32)`` with the features named in :attr:`feature_names`: turn and budget, empty results
    and errors seen, turns without progress (the stopping-rules engine's notion), repeated actions, each stopping
    rule's firing, cue scores of the instruction per request-based category, the proposed action's verb, and the
    family's own features where it offers a hook.

    ## Rewards
    :class:`~agentabstain_gym.wrappers.AbstentionReward` on the family env: ``justified`` (SPL-weighted when
    ``spl_weighted``) for a justified ABSTAIN, ``premature``, ``missed``, ``over_abstain``, ``task_scale`` times the
    task reward on a completed solvable task, and ``step_cost`` per non-final step.

    ## Starting State
    ``reset`` resets the family env (same ``seed`` and ``options``: ``task_id``, ``split``, ``category``,
    ``variant``), asks the solver for its first proposal and returns the features of the opening observation.

    ## Episode End
    When the policy abstains, when the solver ends the episode itself (answer, buy, submit...) or at the family
    env's turn budget. ``info`` is the family env's (the final one carries ``info["abstention"]``).

    ## Arguments
    ``env_id`` (a family id, default ``AbstainQA-v0``), ``env_kwargs`` (for ``gym.make``, e.g. ``{"split":
    "train"}``), the reward coefficients above, ``max_retries`` (no-progress budget of the rules engine),
    ``seconds_per_turn`` (simulated clock of the timeout rule; 0 = never fires), ``family_features`` (False = the
    generic features only, without the family's hook; for ablations), ``render_mode``.

    ## Version History
    * v0: initial release. The tasks are the family id's, so its fingerprint is the family's.
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi"], "render_fps": 4}
    #: The action that abstains (used by generic tests and tools).
    abstain_action: ClassVar[int] = STOP

    def __init__(self, env_id: str = "AbstainQA-v0", *, env_kwargs: Mapping[str, Any] | None = None,
                 justified: float = 1.0, spl_weighted: bool = True, premature: float = -0.5, missed: float = 0.0,
                 over_abstain: float = -1.0, task_scale: float = 1.0, step_cost: float = 0.0,
                 max_retries: int = DEFAULT_MAX_RETRIES, seconds_per_turn: float = 0.0,
                 family_features: bool = True, render_mode: str | None = None) -> None:
        from agentabstain_gym.agents import make_agent  # agents sit beside wrappers; import when needed

        render_mode = checked_render_mode(render_mode, self.metadata["render_modes"], type(self).__name__)
        self.env_id = env_id
        self.render_mode = render_mode
        base = gym.make(env_id, **dict(env_kwargs or {}),
                        **({"render_mode": render_mode} if render_mode is not None else {}))
        self.env = AbstentionReward(base, justified=justified, spl_weighted=spl_weighted, premature=premature,
                                    missed=missed, over_abstain=over_abstain, task_scale=task_scale,
                                    step_cost=step_cost)
        self.family: str = base.unwrapped.family
        self.solver = make_agent("never-abstain", env_id)
        self.features = StoppingFeatures.for_env(base, max_retries=max_retries, seconds_per_turn=seconds_per_turn,
                                                 hook="auto" if family_features else None)
        self.feature_names: tuple[str, ...] = self.features.names
        self.observation_space = spaces.Box(0.0, 1.0, shape=(self.features.size,), dtype=np.float32)
        self.action_space = spaces.Discrete(2)
        self._proposal = ""
        self._running = False

    # ----- what the family env offers, passed through for runners and tests ---------------------------------------
    def tasks(self, split: str | None = None, category: str | None = None) -> list[Task]:
        """The family env's tasks (the same filters as :meth:`AbstainEnv.tasks`)."""
        return self.env.unwrapped.tasks(split=split, category=category)

    @property
    def max_turns(self) -> int:
        """The family env's turn budget."""
        return int(self.env.unwrapped.max_turns)

    @property
    def proposal(self) -> str:
        """The action the solver proposes for the next turn (sent on ``continue``)."""
        return self._proposal

    @property
    def fingerprint(self) -> str:
        """The family env's benchmark fingerprint: this form runs the same tasks."""
        return str(self.env.unwrapped.fingerprint)

    @property
    def max_turns_bound(self) -> int:
        """The family env's :attr:`~agentabstain_gym.core.base_env.AbstainEnv.max_turns_bound` (one step = one turn)."""
        return int(self.env.unwrapped.max_turns_bound)

    def set_step_limit(self, limit: int | None) -> None:
        """An outer time limit: one step here is one turn of the family env, which ends the episode on it."""
        self.env.unwrapped.set_step_limit(limit)

    def state_key(self) -> Any:
        """The family env's state, the pending proposal and whether an episode runs, for the conformance
        tests.
        """
        return (self.env.unwrapped.state_key(), self._proposal, self._running)

    # ----- Gymnasium API ------------------------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        """Reset the family env and the solver, and return the features with the solver's first proposal."""
        super().reset(seed=seed)
        observation, info = self.env.reset(seed=seed, options=options)
        self.solver.reset()
        self.features.reset(observation, info)
        self._proposal = self.solver.act(observation, info)
        self._running = True
        return self.features.vector(observation, info, self._proposal), info

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """``0`` sends the solver's proposal, ``1`` sends ABSTAIN; returns the features of what follows."""
        if not self._running:
            raise RuntimeError("step() called on an episode that has ended or not started: call reset() first")
        sent = ABSTAIN if discrete_action(action, 2) == STOP else self._proposal
        observation, reward, terminated, truncated, info = self.env.step(sent)
        self.features.observe(sent, observation, info)
        if terminated or truncated:
            self._running = False
            self._proposal = ""
        else:
            self._proposal = self.solver.act(observation, info)
        return self.features.vector(observation, info, self._proposal), float(reward), terminated, truncated, info

    def render(self) -> str | None:
        """The family env's rendering."""
        return self.env.render()  # type: ignore[return-value]

    def close(self) -> None:
        """Close the family env."""
        self.env.close()
