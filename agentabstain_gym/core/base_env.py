"""The episode contract of SPEC section 3, implemented once for every family.

A family supplies its tasks, its opening observation and what each of its verbs does; this class does the rest:
turn accounting, invalid actions, ABSTAIN, truncation, evidence tracking, and the episode record at the end. Nothing
here puts a label into an observation or into ``info`` before the episode ends.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import gymnasium as gym

from agentabstain_gym.core import outcome as outcomes
from agentabstain_gym.core.actions import ABSTAIN_VERB, Action, ActionError, parse_action
from agentabstain_gym.core.record import EpisodeRecord
from agentabstain_gym.core.spaces import ACTION_MAX_CHARS, OBSERVATION_MAX_CHARS, printable, text_space
from agentabstain_gym.core.task import SPLITS, Task

#: Longest action text kept in an episode record's steps; longer text is cut with a note.
RECORDED_ACTION_CHARS = 4096
RESET_OPTIONS = ("task_id", "split", "category", "variant")


@dataclass
class StepResult:
    """What one of a family's verbs did. ``evidence`` marks an observation that revealed the task's trigger."""

    observation: str
    terminated: bool = False
    task_passed: bool = False
    task_reward: float = 0.0
    evidence: bool = False
    invalid: bool = False


class AbstainEnv(gym.Env[str, str]):
    """Base class of every family's env. Subclasses set the class attributes and implement the ``_`` hooks."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi", "human"], "render_fps": 4}
    family: ClassVar[str]
    verbs: ClassVar[tuple[str, ...]]
    default_max_turns: ClassVar[int] = 10
    allow_tool_calls: ClassVar[bool] = False
    #: Reset options a family accepts beyond :data:`RESET_OPTIONS` (read by :meth:`_task_from_options`).
    extra_reset_options: ClassVar[tuple[str, ...]] = ()

    def __init__(self, *, max_turns: int | None = None, split: str | None = None,
                 render_mode: str | None = None) -> None:
        if max_turns is not None and (not isinstance(max_turns, int) or max_turns < 1):
            raise ValueError(f"max_turns must be a positive integer, got {max_turns!r}")
        if split is not None and split not in SPLITS:
            raise ValueError(f"split must be one of {SPLITS} or None, got {split!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None, got {render_mode!r}")
        self.max_turns = max_turns or self.default_max_turns
        self.split = split
        self.render_mode = render_mode
        self.observation_space = text_space(OBSERVATION_MAX_CHARS)
        self.action_space = text_space(ACTION_MAX_CHARS)
        self._task: Task | None = None
        self._done = True
        self._turn = 0
        self._tau: int | None = None
        self._evidence_turn: int | None = None
        self._steps: list[dict[str, Any]] = []
        self._last_observation = ""
        self._reset_seed: int | None = None

    # ----- hooks for families -------------------------------------------------------------------------------------
    def _tasks(self) -> Sequence[Task]:
        """Every task this env can run (all splits)."""
        raise NotImplementedError

    def _begin(self, task: Task) -> str:
        """Prepare the episode's state for ``task`` and return the first observation."""
        raise NotImplementedError

    def _act(self, action: Action) -> StepResult:
        """Carry out a parsed, non-ABSTAIN action."""
        raise NotImplementedError

    def _task_from_options(self, options: Mapping[str, Any]) -> Task | None:
        """A task built from reset options (e.g. a user's own instruction), or None to pick a stored task."""
        return None

    def _parse(self, action: object) -> Action | ActionError:
        """Turn the agent's text into an action; a family whose actions are free text (terminal) overrides this."""
        return parse_action(action, self.verbs, allow_tool_calls=self.allow_tool_calls)

    def _extra_info(self) -> dict[str, Any]:
        """Family keys of ``info`` an agent may see (e.g. ``available_actions``)."""
        return {}

    def _episode_extras(self) -> dict[str, Any]:
        """Family extras for the end-of-episode record."""
        return {}

    def _committed(self) -> bool | None:
        return None

    def _state_key(self) -> Any:
        """A comparable summary of the family's state, for tests that check invalid actions change nothing."""
        return None

    # ----- public API ---------------------------------------------------------------------------------------------
    @property
    def task(self) -> Task | None:
        """The current task, label included; for runners and analysis, never for agents."""
        return self._task

    def tasks(self, split: str | None = None, category: str | None = None) -> list[Task]:
        """Tasks matching the filters (and the env's own ``split``), in a stable order."""
        split = split or self.split
        return [t for t in self._tasks()
                if (split is None or t.split == split) and (category is None or t.category == category)]

    def state_key(self) -> Any:
        """What the family's state is, apart from the turn counter (see :meth:`_state_key`)."""
        return self._state_key()

    def reset(self, *, seed: int | None = None, options: Mapping[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        self._reset_seed = seed
        self._task = self._select_task(options or {})
        self._turn = 0
        self._tau = None
        self._evidence_turn = 0 if self._task.request_based else None
        self._steps = []
        self._done = False
        observation = printable(self._begin(self._task))
        self._last_observation = observation
        return observation, self._info()

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        if self._task is None or self._done:
            raise RuntimeError("step() called on an episode that has ended or not started: call reset() first")
        self._turn += 1
        parsed = self._parse(action)
        if isinstance(parsed, ActionError):
            result = StepResult(observation=parsed.message, invalid=True)
        elif parsed.verb == ABSTAIN_VERB:
            self._tau = self._turn
            reason = parsed.argument.strip()
            result = StepResult(observation="You stopped and abstained" + (f": {reason}" if reason else "."),
                                terminated=True)
        else:
            result = self._act(parsed)
        if result.evidence and self._evidence_turn is None:
            self._evidence_turn = self._turn
        terminated = result.terminated
        truncated = not terminated and self._turn >= self.max_turns
        observation = result.observation
        if truncated:
            observation += f"\nThe turn budget of {self.max_turns} is spent; the episode ends."
        observation = printable(observation)
        reward = float(result.task_reward) if terminated and self._tau is None else 0.0
        self._last_observation = observation
        self._steps.append({"turn": self._turn, "action": _recorded(action), "observation": observation,
                            "reward": reward})
        info = self._info()
        if terminated or truncated:
            self._done = True
            info["abstention"] = self._record(result).to_dict()
        if self.render_mode == "human":
            self.render()
        return observation, reward, terminated, truncated, info

    def abort(self, error: str) -> dict[str, Any]:
        """End the running episode because the agent failed (e.g. raised), and return its record.

        The record counts as no ABSTAIN and no completed task, so the episode is a failure on either side, with
        ``extras["error"]`` holding the text. Used by runners; nothing here is visible to the agent.
        """
        if self._task is None or self._done:
            raise RuntimeError("abort() needs a running episode: call reset() first")
        self._done = True
        record = self._record(StepResult(observation="", terminated=False))
        record.extras["error"] = error
        return record.to_dict()

    def render(self) -> str | None:
        if self.render_mode == "ansi":
            return self._last_observation
        if self.render_mode == "human":
            print(self._last_observation)
        return None

    # ----- internals ----------------------------------------------------------------------------------------------
    def _select_task(self, options: Mapping[str, Any]) -> Task:
        if not isinstance(options, Mapping):
            raise ValueError(f"options must be a dict, got {type(options).__name__}")
        valid = [*RESET_OPTIONS, *self.extra_reset_options]
        unknown = sorted(set(options) - set(valid))
        if unknown:
            raise ValueError(f"unknown reset option(s) {unknown}; valid options are {valid}")
        custom = self._task_from_options(options)
        if custom is not None:
            return custom
        tasks = self._tasks()
        if options.get("task_id") is not None:
            for task in tasks:
                if task.task_id == options["task_id"]:
                    return task
            raise ValueError(f"unknown task_id {options['task_id']!r}; see env.unwrapped.tasks() for valid ids "
                             f"({len(tasks)} tasks, e.g. {[t.task_id for t in tasks[:3]]})")
        split = options.get("split")
        if split is not None and split not in SPLITS:
            raise ValueError(f"unknown split {split!r}; valid splits are {list(SPLITS)}")
        category = options.get("category")
        categories = sorted({t.category for t in tasks})
        if category is not None and category not in categories:
            raise ValueError(f"unknown category {category!r}; valid categories are {categories}")
        pool = self.tasks(split=split, category=category)
        variant = options.get("variant")
        if variant is not None:
            variants = sorted({str(t.payload.get("variant")) for t in tasks if t.payload.get("variant")})
            if variant not in variants:
                raise ValueError(f"unknown variant {variant!r}; valid variants are {variants}")
            pool = [t for t in pool if t.payload.get("variant") == variant]
        if not pool:
            raise ValueError(f"no task matches split={split or self.split!r}, category={category!r}")
        return pool[int(self.np_random.integers(len(pool)))]

    def _info(self) -> dict[str, Any]:
        assert self._task is not None
        info = {"instruction": self._task.instruction, "task_id": self._task.task_id, "turn": self._turn,
                "max_turns": self.max_turns}
        info.update(self._extra_info())
        return info

    def _record(self, last: StepResult) -> EpisodeRecord:
        task = self._task
        assert task is not None
        kind = outcomes.classify(task.should_abstain, task.w, self._tau, last.task_passed)
        tau, w, ev = self._tau, task.w, self._evidence_turn
        return EpisodeRecord(
            env_id=self.spec.id if self.spec is not None else type(self).__name__,
            family=self.family, task_id=task.task_id, pair_id=task.pair_id, split=task.split,
            category=task.category, scenario=task.scenario, should_abstain=task.should_abstain, w=w, tau=tau,
            evidence_turn=ev if task.should_abstain else None, turns=self._turn, outcome=kind,
            success=outcomes.side_correct(kind),
            task_reward=float(last.task_reward) if last.terminated and tau is None else 0.0,
            committed=self._committed(), seed=self._reset_seed, steps=list(self._steps),
            max_turns=self.max_turns, delay=(tau - w) if (tau is not None and w is not None) else None,
            reaction_delay=(tau - ev - 1) if (tau is not None and ev is not None and task.should_abstain) else None,
            extras={"instruction": task.instruction, **self._episode_extras()},
        )


def _recorded(action: object) -> str:
    text = action if isinstance(action, str) else repr(action)
    if len(text) > RECORDED_ACTION_CHARS:
        return text[:RECORDED_ACTION_CHARS] + f"...[{len(text) - RECORDED_ACTION_CHARS} more characters]"
    return text
