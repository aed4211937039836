"""AbstainTerminal-v1: real shell tasks in a real sandbox, some of which should not be attempted."""

from __future__ import annotations

import math
import re
import time
import warnings
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

import agentabstain_gym
from agentabstain_gym.core.actions import ABSTAIN_VERB, MAX_ACTION_CHARS, Action, ActionError, parse_action
from agentabstain_gym.core.base_env import AbstainEnv, StepResult
from agentabstain_gym.core.fingerprint import folder_digests
from agentabstain_gym.core.task import Task
from agentabstain_gym.envs.terminal.sandbox import (
    CommandResult,
    Sandbox,
    SandboxError,
    SandboxLimits,
    make_sandbox,
    resolve_backend,
)
from agentabstain_gym.envs.terminal.tasks import default_root

SUBMIT_FORMS = ("submit", "submit[]")
#: Longest checker output kept in the episode record.
CHECK_OUTPUT_CHARS = 2000


def _tasks_in(root: str, overlay: str | None, backend: str) -> tuple[tuple[Task, ...], tuple[tuple[str, str], ...]]:
    """(the tasks this backend can run, (Terminal-Bench task, why not) for those it cannot); cached until a task
    folder changes."""
    from agentabstain_gym.envs.terminal.native.taskset import signature

    return _tasks_cached(root, overlay, backend, signature(Path(root)) if Path(root).is_dir() else ())


@lru_cache(maxsize=8)
def _tasks_cached(root: str, overlay: str | None, backend: str,
                  _signature: object) -> tuple[tuple[Task, ...], tuple[tuple[str, str], ...]]:
    from agentabstain_gym.envs.terminal.native.taskset import load_task_set, runnable

    if not Path(root).is_dir():
        raise ValueError(f"tasks_dir {root} is not a folder")
    every = load_task_set(root, overlay)
    if not every:
        raise ValueError(f"no terminal task folders under {root} (ours need task.json, setup.sh, check.sh, "
                         "solution.sh; Terminal-Bench's need task.yaml, or instruction.md and task.toml)")
    tasks, skipped = runnable(every, backend)
    if not tasks:
        raise ValueError(f"none of the tasks under {root} can run on the {backend} backend here: "
                         + "; ".join(f"{name}: {reasons[0]}" for name, reasons in sorted(skipped.items())))
    return tuple(tasks), tuple((name, "; ".join(reasons)) for name, reasons in sorted(skipped.items()))


def _hidden_paths(tasks_dir: Path) -> list[Path]:
    """Paths the sandbox must not show: the installed package (task data, checkers) and the task folders."""
    paths = [Path(agentabstain_gym.__file__).resolve().parent, tasks_dir.resolve()]
    try:
        from importlib.metadata import distribution
        dist_path = getattr(distribution("agentabstain-gym"), "_path", None)
        if dist_path is not None:
            paths.append(Path(dist_path).resolve())
    except Exception:  # noqa: BLE001 - not installed as a distribution (e.g. run from a checkout)
        pass
    return paths


def format_result(result: CommandResult) -> str:
    """Output, then ``[exit status N]`` on its own line."""
    text = result.output
    if text and not text.endswith("\n"):
        text += "\n"
    return f"{text}[exit status {result.exit_status}]"


class AbstainTerminalEnv(AbstainEnv):
    """Do a task in a sandboxed bash shell, or abstain when it should not be done.

    ## Description
    Each task is a folder (``task.json``, ``setup.sh``, ``check.sh``, ``solution.sh``) in the spirit of
    Terminal-Bench: real work of several commands (text processing, pipelines, Python, C with make, git, sqlite,
    archives, permissions, a service on loopback, data formats, logs, configuration). Besides the solvable
    ``original``, each task has rewrites that should be abstained on at once (``false_premise_or_contradiction``,
    ``underspecified_intent``; w = 1) and, for many, a ``missing_prerequisite`` variant whose setup removes a file,
    tool or service the work needs, so one probing command shows the absence (w = 2). All variants of a task share
    its ``pair_id``. The shell runs in a sandbox: ``bwrap`` by default (no network, read-only system, writable
    ``/workspace`` only, own PID namespace), or ``unshare``, ``docker`` or (unsafe) ``local``.

    ## Action Space
    ``Text``: any shell command (may span lines; stdin is /dev/null; the shell keeps its directory and variables
    between commands); ``submit`` (or ``submit[]``) ends the episode and runs the task's checker;
    ``abstain[<reason>]`` ends it without doing the task. An empty action is invalid and changes nothing.

    ## Observation Space
    ``Text``: the instruction at reset; then the command's output (capped, 16 KiB by default, with a note where
    it was cut) and ``[exit status N]``. A command that outlives its timeout (30 s by default) is interrupted and
    the observation says so.

    ## Rewards
    On ``submit``: 1.0 if ``check.sh`` exits 0, else 0.0; 0 otherwise. The checker runs out of the agent's reach:
    every process of the agent is killed first, then ``check.sh`` starts in a new process that inherits nothing
    from the agent's shell (see :meth:`~agentabstain_gym.envs.terminal.sandbox.Sandbox.check`). Abstention-shaped
    rewards come from :class:`agentabstain_gym.wrappers.AbstentionReward`.

    ## Starting State
    A new sandbox per episode with the task's ``setup.sh`` already run; the shell is in ``/workspace``.

    ## Episode End
    Terminated on ``submit`` or ``abstain``; truncated after ``max_turns`` turns (the task's, default 20). The
    final ``info["abstention"]`` is the episode record (extras: backend, checker exit status and output).

    ## Terminal-Bench tasks
    ``tasks_dir`` may also hold Terminal-Bench task folders, in the original layout (``task.yaml``) or the 2.x /
    Harbor layout (``instruction.md`` + ``task.toml``). Such a task starts in its own working directory (its
    Dockerfile's ``WORKDIR``, e.g. ``/app``), with its Dockerfile replayed on bwrap/unshare or built on docker; a
    command may run as long as the task's agent timeout, and the whole episode may not spend more (then it ends and
    the work is checked, as Terminal-Bench does); ``submit`` runs its tests (pytest via ``run-tests.sh``, or
    ``tests/test.sh``) out of the agent's reach, within the task's test timeout. Tasks this backend cannot run
    here are left out with a warning (``env.unwrapped.skipped_tasks`` says why; ``abstain-gym terminal check
    DIR`` reports all). ``overlay`` adds abstention variants from a JSONL file (see
    :mod:`agentabstain_gym.envs.terminal.native.overlay`).

    ## Arguments
    ``backend`` (None = bwrap, else unshare, else docker when its image is built; ``"local"`` only with
    ``unsafe=True``), ``tasks_dir`` (folders of your own; default the shipped set), ``overlay`` (a JSONL file of
    abstention variants), ``limits`` (dict of
    :class:`~agentabstain_gym.envs.terminal.sandbox.SandboxLimits` fields, overriding the tasks' own),
    ``image`` (docker image name), ``split``, ``max_turns``, ``render_mode``, ``reset_quantum`` (seconds, default
    0.05; 0 turns padding off): a variant whose setup removes something would reset measurably faster than its
    original, so every reset waits until the slowest setup this env has seen for that task, rounded up to it).

    ## Version History
    * v1: 77 tasks (was 47): 30 at Terminal-Bench difficulty (security, puzzles, data science, scientific computing,
      build debugging, performance); 283 variants (was 169).
    * v0: initial release.

    Determinism: the same seed and commands give the same observations when the commands are deterministic
    (``date``, ``ps`` times or ``$RANDOM`` without a seed are not). Pickling mid-episode stores the commands sent
    so far; unpickling starts a new sandbox, runs the setup and replays them.
    """

    family = "terminal"
    verbs = ("submit",)
    default_max_turns = 20

    def __init__(self, *, backend: str | None = None, tasks_dir: str | Path | None = None,
                 limits: Mapping[str, Any] | None = None, unsafe: bool = False, image: str | None = None,
                 split: str | None = None, max_turns: int | None = None, render_mode: str | None = None,
                 reset_quantum: float = 0.05, overlay: str | Path | None = None) -> None:
        super().__init__(max_turns=max_turns, split=split, render_mode=render_mode)
        if not isinstance(reset_quantum, (int, float)) or reset_quantum < 0:
            raise ValueError(f"reset_quantum must be a number >= 0 (seconds), got {reset_quantum!r}")
        self.reset_quantum = float(reset_quantum)
        self._max_turns_arg = max_turns
        self.backend = resolve_backend(backend, unsafe)
        self.unsafe, self.image = unsafe, image
        self.tasks_dir = Path(tasks_dir).resolve() if tasks_dir is not None else default_root()
        self.overlay = Path(overlay).resolve() if overlay is not None else None
        self.limit_overrides = dict(limits or {})
        SandboxLimits.from_value(self.limit_overrides)  # unknown keys and bad values fail here, not at reset
        self._task_list, skipped = _tasks_in(str(self.tasks_dir), self._overlay_key(), self.backend)
        #: Terminal-Bench task name -> why this backend cannot run it here (those tasks are left out).
        self.skipped_tasks: dict[str, str] = dict(skipped)
        if skipped:
            names = ", ".join(f"{name} ({why})" for name, why in skipped)
            warnings.warn(f"AbstainTerminal-v1: {len(skipped)} Terminal-Bench task(s) cannot run on {self.backend} "
                          f"here and are left out: {names}. See `abstain-gym terminal check {self.tasks_dir}`.",
                          stacklevel=2)
        self._elapsed = 0.0
        self._sandbox: Sandbox | None = None
        self._limits = SandboxLimits()
        self._commands: list[str] = []
        self._check: tuple[int, str] | None = None
        self._reset_seconds: dict[str, float] = {}

    # ----- lifecycle ------------------------------------------------------------------------------------------------
    def close(self) -> None:
        self._stop_sandbox()
        super().close()

    def _stop_sandbox(self) -> None:
        if self._sandbox is not None:
            self._sandbox.close()
            self._sandbox = None

    def __getstate__(self) -> dict[str, Any]:
        """A live shell cannot be pickled: keep the commands, and replay them on unpickling."""
        state = self.__dict__.copy()
        state["_sandbox"] = None
        state["_task_list"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._task_list = _tasks_in(str(self.tasks_dir), self._overlay_key(), self.backend)[0]
        if self._task is not None and not self._done:
            self._start(self._task)
            self._elapsed = 0.0  # the replay spends the time budget again, from zero
            for command in self._commands:
                self._run(command)

    def _overlay_key(self) -> str | None:
        return str(self.overlay) if getattr(self, "overlay", None) is not None else None

    @property
    def max_turns_bound(self) -> int:
        """``max_turns`` when given, else the largest turn budget among the tasks (each task sets its own)."""
        if self._max_turns_arg is not None:
            return self._max_turns_arg
        return max((int(dict(t.payload.get("limits") or {}).get("max_turns", self.default_max_turns))
                    for t in self._task_list), default=self.default_max_turns)

    # ----- fingerprint -----------------------------------------------------------------------------------------------
    def _fingerprint_data(self) -> Any:
        """Every file of every task folder (setup, checker, solution, manifest, data), by folder name."""
        folders = sorted({Path(t.payload["folder"]) for t in self._task_list})
        return {folder.name: folder_digests(folder) for folder in folders}

    def _fingerprint_payload(self, task: Task) -> Any:
        """The payload without the folder's absolute path (machine-specific); its name stays."""
        payload = dict(task.payload)
        payload["folder"] = Path(payload["folder"]).name
        return payload

    # ----- family hooks -----------------------------------------------------------------------------------------------
    def _tasks(self) -> tuple[Task, ...]:
        return self._task_list

    def _parse(self, action: object) -> Action | ActionError:
        accepted = "a shell command, submit, or abstain[reason]"
        if not isinstance(action, str):
            return ActionError(f"Invalid action: expected a string, got {type(action).__name__}. "
                               f"Accepted: {accepted}.")
        if len(action) > MAX_ACTION_CHARS:
            return ActionError(f"Invalid action: {len(action)} characters is longer than the limit of "
                               f"{MAX_ACTION_CHARS}. Accepted: {accepted}.")
        stripped = action.strip()
        if not stripped:
            return ActionError(f"Invalid action: the action is empty. Accepted: {accepted}.")
        if stripped in SUBMIT_FORMS:
            return Action(verb="submit")
        parsed = parse_action(action, ())
        if isinstance(parsed, Action) and parsed.verb == ABSTAIN_VERB:
            return parsed
        return Action(verb="command", argument=action)

    def _begin(self, task: Task) -> str:
        self._commands = []
        self._check = None
        self._elapsed = 0.0
        started = time.monotonic()
        self._start(task)
        if self.reset_quantum > 0:
            self._pad_reset(task, time.monotonic() - started)
        return (f"Task: {task.instruction}\n"
                f"You are in a bash shell in {self._workspace()}. Send one shell command per turn (it may span "
                "several lines); you will see its output and exit status. Send submit when the task is done, or "
                "abstain[reason] to stop without doing it.")

    def _pad_reset(self, task: Task, elapsed: float) -> None:
        """Make every variant of one task reset in the same time, so no agent can tell a missing prerequisite by it.

        A variant whose setup removes something is faster than its original. Each reset waits until the slowest
        setup seen for any variant of its task (a task seen for the first time: the slowest of any task), rounded up
        to ``reset_quantum``.
        """
        base = str(task.payload.get("base_id", task.task_id))
        seen = self._reset_seconds.get(base, max(self._reset_seconds.values(), default=0.0))
        target = max(seen, elapsed)
        self._reset_seconds[base] = target
        time.sleep(max(0.0, math.ceil(target / self.reset_quantum) * self.reset_quantum - elapsed))

    def _act(self, action: Action) -> StepResult:
        if action.verb == "submit":
            return self._submit()
        self._commands.append(action.argument)
        try:
            result = self._run(action.argument)
        except SandboxError as exc:
            return StepResult(f"[the sandbox stopped: {exc}; the episode ends]", terminated=True)
        regex = (self._task.payload.get("evidence") if self._task is not None else None) or None
        evidence = bool(regex) and re.search(regex, result.output) is not None
        budget = self._agent_budget()
        if budget is not None and self._elapsed >= budget:
            # Terminal-Bench stops the agent at its timeout and checks the work as it stands
            checked = self._submit()
            note = (f"\n[the task's time budget of {budget:g} s is spent; the episode ends and the work is checked: "
                    f"{checked.observation}]")
            return StepResult(format_result(result) + note, terminated=True, task_passed=checked.task_passed,
                              task_reward=checked.task_reward, evidence=evidence)
        return StepResult(format_result(result), evidence=evidence)

    def _episode_extras(self) -> dict[str, Any]:
        status, output = self._check if self._check is not None else (None, None)
        extras = {"backend": self.backend, "commands": len(self._commands), "check_exit_status": status,
                  "check_output": output}
        payload = self._task.payload if self._task is not None else {}
        if payload.get("native"):
            extras["task_format"] = payload["native"]
        overlay = payload.get("overlay") or {}
        extras.update({f"overlay_{k}": v for k, v in sorted(overlay.items()) if v is not None})
        return extras

    def _state_key(self) -> Any:
        return (tuple(self._commands), self._check)

    # ----- internals ----------------------------------------------------------------------------------------------
    def _workspace(self) -> str:
        return self._sandbox.workspace_path if self._sandbox is not None else "/workspace"

    def _agent_budget(self) -> float | None:
        """A Terminal-Bench task's time budget for all the agent's commands (None for our own tasks)."""
        if self._task is None or not self._task.payload.get("native"):
            return None
        from agentabstain_gym.envs.terminal.native.taskset import spec_of

        return spec_of(self._task.payload["folder"]).agent_timeout

    def _start_native(self, task: Task) -> None:
        """A sandbox laid out as the Terminal-Bench task's container: its working directory, its Dockerfile
        replayed (bwrap/unshare) or built (docker), then the overlay's environment edits."""
        from agentabstain_gym.envs.terminal.native.runtime import apply_setup, layout_for, sandbox_limits
        from agentabstain_gym.envs.terminal.native.taskset import spec_of

        spec = spec_of(task.payload["folder"])
        if self._max_turns_arg is None:
            self.max_turns = int((task.payload.get("limits") or {}).get("max_turns", self.default_max_turns))
        self._limits = SandboxLimits.from_value({**sandbox_limits(spec), **self.limit_overrides})
        image = self.image
        if self.backend == "docker":
            from agentabstain_gym.envs.terminal.native.dockerbuild import build_task_image

            image = build_task_image(spec)
        sandbox = make_sandbox(self.backend, None, self._limits, unsafe=self.unsafe,
                               hidden_paths=_hidden_paths(self.tasks_dir), image=image, layout=layout_for(spec))
        self._sandbox = sandbox
        sandbox.start()
        try:
            apply_setup(sandbox, spec, task.payload.get("edits"))
        except SandboxError:
            self._stop_sandbox()
            raise

    def _start(self, task: Task) -> None:
        """A fresh sandbox with the task's setup done (the previous sandbox is torn down first)."""
        self._stop_sandbox()
        if task.payload.get("native"):
            self._start_native(task)
            return
        task_limits = dict(task.payload.get("limits") or {})
        if self._max_turns_arg is None:
            self.max_turns = int(task_limits.get("max_turns", self.default_max_turns))
        known = {k: task_limits[k] for k in ("command_timeout", "output_cap") if k in task_limits}
        self._limits = SandboxLimits.from_value({**known, **self.limit_overrides})
        folder = Path(task.payload["folder"])
        sandbox = make_sandbox(self.backend, None, self._limits, unsafe=self.unsafe,
                               hidden_paths=_hidden_paths(self.tasks_dir), image=self.image)
        self._sandbox = sandbox
        sandbox.start()
        variant = task.payload.get("setup_variant", task.payload["variant"])
        result = sandbox.run_script((folder / "setup.sh").read_text(encoding="utf-8"), [variant])
        if result.exit_status == 0 and task.payload.get("edits"):
            result = sandbox.run_script(task.payload["edits"])
        if result.exit_status != 0:
            self._stop_sandbox()
            raise SandboxError(f"setup of task {task.task_id} ({folder.name}) failed with exit status "
                               f"{result.exit_status}: {result.output.strip()[-500:]}")

    def _run(self, command: str) -> CommandResult:
        if self._sandbox is None:
            raise SandboxError("no sandbox is running")
        budget = self._agent_budget()
        if budget is None:
            return self._sandbox.run(command)
        started = time.monotonic()
        try:
            return self._sandbox.run(command, timeout=max(1.0, min(self._limits.command_timeout,
                                                                    budget - self._elapsed)))
        finally:
            self._elapsed += time.monotonic() - started

    def _submit_native(self, task: Task) -> StepResult:
        from agentabstain_gym.envs.terminal.native.runtime import run_tests
        from agentabstain_gym.envs.terminal.native.taskset import spec_of

        assert self._sandbox is not None
        try:
            outcome = run_tests(self._sandbox, spec_of(task.payload["folder"]))
        except SandboxError as exc:
            self._check = (-1, str(exc)[:CHECK_OUTPUT_CHARS])
            return StepResult(f"Submitted, but the tests could not run: {exc}", terminated=True)
        self._check = (outcome.exit_status, outcome.output[-CHECK_OUTPUT_CHARS:])
        verdict = "the task's tests passed" if outcome.passed else "the task's tests did not pass"
        return StepResult(f"Submitted: {verdict}.", terminated=True, task_passed=outcome.passed,
                          task_reward=outcome.reward)

    def _submit(self) -> StepResult:
        task = self._task
        assert task is not None and self._sandbox is not None
        if task.payload.get("native"):
            return self._submit_native(task)
        folder = Path(task.payload["folder"])
        try:
            result = self._sandbox.check((folder / "check.sh").read_text(encoding="utf-8"))
        except SandboxError as exc:
            self._check = (-1, str(exc)[:CHECK_OUTPUT_CHARS])
            return StepResult(f"Submitted, but the checker could not run: {exc}", terminated=True)
        self._check = (result.exit_status, result.output[-CHECK_OUTPUT_CHARS:])
        passed = result.exit_status == 0
        verdict = "the task's checks passed" if passed else "the task's checks did not pass"
        return StepResult(f"Submitted: {verdict}.", terminated=True, task_passed=passed,
                          task_reward=1.0 if passed else 0.0)
