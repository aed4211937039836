"""The episode contract (docs/design.md, section 3), implemented once for every family.

A family supplies its tasks, its opening observation and what each of its verbs does; this class does the rest:
turn accounting, invalid actions, ABSTAIN, truncation, evidence tracking, and the episode record at the end. Nothing
here puts a label into an observation or into ``info`` before the episode ends.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import gymnasium as gym

from agentabstain_gym.core import outcome as outcomes
from agentabstain_gym.core.actions import ABSTAIN_VERB, Action, ActionError, parse_action, text_problem
from agentabstain_gym.core.fingerprint import fingerprint as task_list_fingerprint
from agentabstain_gym.core.record import AbstentionRecord, EpisodeRecord
from agentabstain_gym.core.spaces import ACTION_MAX_CHARS, OBSERVATION_MAX_CHARS, printable, text_space
from agentabstain_gym.core.task import SPLITS, Task

#: Longest action text kept in an episode record's steps; longer text is cut with a note.
RECORDED_ACTION_CHARS = 4096
RESET_OPTIONS = ("task_id", "split", "category", "variant")
#: Where :func:`json_safe` stops descending; deeper values are replaced by a note (records are never that deep).
JSON_SAFE_DEPTH = 200
#: Integers with more bits than this are written as a note: Python cannot print integers of 4,300+ digits.
_JSON_INT_BITS = 14_000
#: What ``extras["truncated_by"]`` says when an outer time limit (shorter than ``max_turns``) ended the episode.
TIME_LIMIT = "time_limit"


def checked_render_mode(render_mode: str | None, modes: Sequence[str], owner: str) -> str | None:
    """``render_mode`` if ``owner`` supports it, else None with a warning, as Gymnasium's own envs do.

    Raising instead would break tools that probe a mode they can live without (Stable-Baselines3's
    ``make_vec_env`` asks for ``"rgb_array"`` and only tolerates a TypeError).
    """
    if render_mode is None or render_mode in modes:
        return render_mode
    gym.logger.warn(f"{owner} does not support render_mode={render_mode!r} (supported: {list(modes)}); "
                    "rendering is off")
    return None


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
        self.max_turns = max_turns or self.default_max_turns
        self.split = split
        self.render_mode = checked_render_mode(render_mode, self.metadata["render_modes"], type(self).__name__)
        #: An outer step limit (``gym.make(..., max_episode_steps=k)``), see :meth:`set_step_limit`.
        self.step_limit: int | None = None
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
        self._fingerprint: str | None = None

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

    def _fingerprint_data(self) -> Any:
        """The data that gives the tasks their meaning (corpus, catalogue, sandbox records, task scripts), as JSON
        or a digest of it; hashed into :attr:`fingerprint` with the tasks."""
        return None

    def _fingerprint_payload(self, task: Task) -> Any:
        """The part of ``task.payload`` that defines the task (a family drops machine-specific paths here)."""
        return task.payload

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

    def set_step_limit(self, limit: int | None) -> None:
        """Tell the env about an outer time limit of ``limit`` steps (None: no limit), from the next step on.

        A ``TimeLimit`` shorter than ``max_turns`` would otherwise truncate the episode before the env writes
        ``info["abstention"]``. With the limit known, the env ends the episode itself on that step, as it does when
        the turn budget is spent: the record's ``max_turns`` is the limit, ``turns == max_turns``, and
        ``extras["truncated_by"] == "time_limit"``. :class:`~agentabstain_gym.wrappers.KeepRecordOnTimeLimit`
        (applied by ``gym.make`` to every registered id) calls this with ``env.spec.max_episode_steps``.
        """
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
            raise ValueError(f"the step limit must be a positive integer or None, got {limit!r}")
        self.step_limit = limit

    @property
    def fingerprint(self) -> str:
        """sha256 of this env's task list (every task with its label and payload) and the data behind it.

        Computed once, on first use; every episode record of a listed task carries it (``record["fingerprint"]``),
        and the registered ids' values are pinned (see :mod:`agentabstain_gym.fingerprints`), so a change to what
        an id means cannot go unnoticed.
        """
        if self._fingerprint is None:
            self._fingerprint = task_list_fingerprint(self.family, self._tasks(), data=self._fingerprint_data(),
                                                      payload=self._fingerprint_payload)
        return self._fingerprint

    def _listed_fingerprint(self, task: Task) -> str | None:
        """:attr:`fingerprint` for a task of the env's list; None for a task made from reset options."""
        # equal, not only identical: an unpickled env rebuilds its task list, and its running task is a copy
        return self.fingerprint if any(t is task or t == task for t in self._tasks()) else None

    @property
    def max_turns_bound(self) -> int:
        """The most turns any episode of this env can take under its own budget (``max_turns``; a family whose tasks
        set their own budget, like the terminal's, returns the largest). A registered ``max_episode_steps`` below it
        does not bind (see :class:`~agentabstain_gym.wrappers.KeepRecordOnTimeLimit`)."""
        return self.max_turns

    @property
    def turn_budget(self) -> int:
        """Turns this episode may take: ``max_turns``, or an outer step limit if that is shorter."""
        return self.max_turns if self.step_limit is None else min(self.max_turns, self.step_limit)

    def reset(self, *, seed: int | None = None, options: Mapping[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        """Start an episode on a task drawn with ``np_random`` or chosen by ``options`` (see
        :data:`RESET_OPTIONS`).
        """
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
        """Carry out one turn; the final step's ``info["abstention"]`` holds the episode record, whatever
        ended it.
        """
        if self._task is None or self._done:
            raise RuntimeError("step() called on an episode that has ended or not started: call reset() first")
        self._turn += 1
        parsed = self._parse(action)
        # an action that would be carried out but holds text no family can use (a NUL, a lone surrogate) is refused
        # here too, for families with their own parser (the terminal's commands go to a shell)
        problem = text_problem(action) if isinstance(parsed, Action) and isinstance(action, str) else None
        if problem is not None:
            parsed = ActionError(f"Invalid action: {problem}.")
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
        budget = self.turn_budget
        truncated = not terminated and self._turn >= budget
        observation = result.observation
        if truncated:
            observation += f"\nThe turn budget of {budget} is spent; the episode ends."
        observation = printable(observation)
        reward = float(result.task_reward) if terminated and self._tau is None else 0.0
        self._last_observation = observation
        self._steps.append({"turn": self._turn, "action": _recorded(action), "observation": observation,
                            "reward": reward})
        info = self._info()
        if terminated or truncated:
            self._done = True
            record = self._record(result).to_dict()
            if truncated and budget < self.max_turns:  # the outer time limit, not the env's own budget, ended it
                record["extras"]["truncated_by"] = TIME_LIMIT
            info["abstention"] = AbstentionRecord(json_safe(record))
        if self.render_mode == "human":
            self.render()
        return observation, reward, terminated, truncated, info

    def abort(self, error: str, *, kind: str = "agent") -> dict[str, Any]:
        """End the running episode because the agent (``kind="agent"``) or the env itself (``kind="env"``) failed,
        and return its record.

        The record counts as no ABSTAIN and no completed task, so the episode is a failure on either side, with the
        text in ``extras["error"]`` (agent errors) or ``extras["env_error"]`` (env errors), so that an env bug is
        never blamed on the agent. Used by runners; nothing here is visible to the agent. After an env error the
        env may be half-way through a step, so the record is built from the task alone if need be.
        """
        if kind not in ERROR_KINDS:
            raise ValueError(f"kind must be one of {ERROR_KINDS}, got {kind!r}")
        if self._task is None or (self._done and kind == "agent"):
            raise RuntimeError("abort() needs a running episode: call reset() first")
        self._done = True
        self._tau = None  # whatever the step got to, the episode did not end in a recorded ABSTAIN
        try:
            record = self._record(StepResult(observation="", terminated=False)).to_dict()
        except Exception:  # noqa: BLE001 - the env is broken; the task alone still says what the episode was
            record = self.failure_record(error, kind=kind, task_id=self._task.task_id, seed=self._reset_seed)
        record["extras"][ERROR_KINDS[kind]] = error
        return json_safe(record)

    def failure_record(self, error: str, *, kind: str = "env", task_id: str,
                       seed: int | None = None) -> dict[str, Any]:
        """The record of an episode that could not run at all (e.g. ``reset`` raised): a failure on either side,
        built from the task's label alone, with ``error`` under ``extras[ERROR_KINDS[kind]]``."""
        task = next((t for t in self._tasks() if t.task_id == task_id), None)
        if task is None:
            raise KeyError(f"unknown task_id {task_id!r}")
        outcome = outcomes.classify(task.should_abstain, task.w, None, False)
        record = EpisodeRecord(
            env_id=self.spec.id if self.spec is not None else type(self).__name__,
            family=self.family, task_id=task.task_id, pair_id=task.pair_id, split=task.split,
            category=task.category, scenario=task.scenario, should_abstain=task.should_abstain, w=task.w, tau=None,
            evidence_turn=None, turns=0, outcome=outcome, success=False, task_reward=0.0, seed=seed, steps=[],
            max_turns=self.turn_budget, extras={"instruction": task.instruction, ERROR_KINDS[kind]: error},
            grace_turns=int(task.grace_turns or 0) if task.should_abstain else None,
            timely_within_grace=False if task.should_abstain else None,
            fingerprint=self._listed_fingerprint(task),
        )
        return json_safe(record.to_dict())

    def render(self) -> str | None:
        """The last observation (``ansi``), or print it (``human``)."""
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
                "max_turns": self.turn_budget}
        info.update(self._extra_info())
        return info

    def _record(self, last: StepResult) -> EpisodeRecord:
        task = self._task
        assert task is not None
        kind = outcomes.classify(task.should_abstain, task.w, self._tau, last.task_passed)
        tau, w, ev = self._tau, task.w, self._evidence_turn
        grace = int(task.grace_turns or 0)
        return EpisodeRecord(
            env_id=self.spec.id if self.spec is not None else type(self).__name__,
            family=self.family, task_id=task.task_id, pair_id=task.pair_id, split=task.split,
            category=task.category, scenario=task.scenario, should_abstain=task.should_abstain, w=w, tau=tau,
            evidence_turn=ev if task.should_abstain else None, turns=self._turn, outcome=kind,
            success=outcomes.side_correct(kind),
            task_reward=float(last.task_reward) if last.terminated and tau is None else 0.0,
            committed=self._committed(), seed=self._reset_seed, steps=list(self._steps),
            max_turns=self.turn_budget, delay=(tau - w) if (tau is not None and w is not None) else None,
            reaction_delay=(tau - ev - 1) if (tau is not None and ev is not None and task.should_abstain) else None,
            extras={"instruction": task.instruction, **self._episode_extras()},
            grace_turns=grace if task.should_abstain else None,
            timely_within_grace=(tau is not None and w is not None and w <= tau <= w + grace)
            if task.should_abstain else None,
            fingerprint=self._listed_fingerprint(task),
        )


#: Where a record keeps each kind of failure: the agent's (it raised, or spent its budget) or the env's own.
ERROR_KINDS = {"agent": "error", "env": "env_error"}


def json_safe(value: Any, _depth: int = 0) -> Any:
    """``value`` as strict JSON can hold it, so a record can always be written as one UTF-8 JSON line.

    NaN and infinities become ``None`` (strict JSON has no NaN), lone surrogates in strings and keys become U+FFFD
    (a surrogate pair split into two code points is joined), integers too long for Python to print and values
    nested deeper than :data:`JSON_SAFE_DEPTH` become a note, tuples become lists, sets become sorted lists, and
    anything else becomes its ``str``. A value strict JSON can already hold (the usual case, checked at C speed by
    encoding it once) is returned as it is.
    """
    if _depth == 0:
        try:
            json.dumps(value, allow_nan=False, ensure_ascii=False).encode("utf-8")
            return value
        except (TypeError, ValueError, RecursionError):  # UnicodeEncodeError is a ValueError
            pass
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return value if value.isascii() else valid_utf8(value)
    if isinstance(value, int):
        return value if value.bit_length() <= _JSON_INT_BITS else f"<integer of {value.bit_length()} bits>"
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if _depth >= JSON_SAFE_DEPTH:
        return "<nested too deep to record>"
    if isinstance(value, Mapping):
        return {_json_key(k): json_safe(v, _depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v, _depth + 1) for v in value]
    if isinstance(value, set | frozenset):  # sorted, so the record does not depend on the process's hash seed
        return sorted((json_safe(v, _depth + 1) for v in value), key=repr)
    item = getattr(value, "item", None)  # numpy scalars
    if callable(item):
        try:
            return json_safe(item(), _depth + 1)
        except (TypeError, ValueError):
            pass
    return json_safe(str(value), _depth + 1)


def valid_utf8(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD (a split surrogate pair is joined), so it encodes."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _json_key(key: Any) -> str:
    """A dict key as ``json.dumps`` would write it (str, number, bool, null), made safe like any string."""
    if isinstance(key, str):
        return key if key.isascii() else valid_utf8(key)
    if key is None or isinstance(key, bool):
        return "null" if key is None else ("true" if key else "false")
    if isinstance(key, int | float):
        safe = json_safe(key)
        return "null" if safe is None else str(safe) if isinstance(safe, str) else repr(safe)
    return valid_utf8(str(key))


def _recorded(action: object) -> str:
    text = action if isinstance(action, str) else repr(action)
    if len(text) > RECORDED_ACTION_CHARS:
        return text[:RECORDED_ACTION_CHARS] + f"...[{len(text) - RECORDED_ACTION_CHARS} more characters]"
    return text
