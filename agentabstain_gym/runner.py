"""Evaluate agents on envs: one JSONL record per finished episode, crash-safe, resumable, parallel.

Every episode is planned up front as (env id, agent, task id, seed), where the seed depends only on the run seed and
the task, so the records are the same whatever the number of workers or threads (``concurrency``) or the order
episodes finish in. The parent process's main thread is the only writer: it appends each record as a whole line,
flushed and fsynced, so a crash loses at most the episode in flight (or, with threads, the episodes in flight),
and a re-run with the same output file skips what is recorded and runs the rest.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.util
import inspect
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

import agentabstain_gym
from agentabstain_gym.agents import AGENT_NAMES, make_agent
from agentabstain_gym.agents.base import Agent
from agentabstain_gym.core.base_env import ERROR_KINDS, json_safe
from agentabstain_gym.core.record import iter_records

SUITES = ("all", "web", "terminal", "qa", "tools")
_ERROR_CHARS = 2000
_ERROR_KEYS = tuple(ERROR_KINDS.values())  # extras["error"] (agent errors) and extras["env_error"] (env errors)


def episode_seed(seed: int, env_id: str, task_id: str) -> int:
    """A per-episode seed from the run seed and the task only, so order and workers do not matter."""
    digest = hashlib.sha256(f"{seed}:{env_id}:{task_id}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


@dataclass(frozen=True)
class Episode:
    """One planned episode: which env, agent, task and seed (its ``key`` identifies it in a run file)."""
    env_id: str
    agent: str
    task_id: str
    seed: int

    @property
    def key(self) -> tuple[str, str, str, int]:
        """The tuple that identifies the episode in a run file (for resuming and de-duplicating)."""
        return (self.env_id, self.agent, self.task_id, self.seed)


@dataclass
class EvalConfig:
    """What to run. ``agents`` are names (see :data:`AGENT_NAMES`) or ``module:Class`` / ``path.py:Class``."""

    env_ids: list[str]
    agents: list[str]
    split: str | None = "test"
    episodes: int | None = None
    seed: int = 0
    env_kwargs: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: episodes run at once in one process, on threads (for I/O-bound agents such as ``llm``); records do not
    #: depend on it. Not part of the run file's manifest, so a run may be resumed with another value.
    concurrency: int = 1


# ----- resolving names ----------------------------------------------------------------------------------------------
def suite_env_ids(suite: str) -> list[str]:
    """Registered ids of a family (or all); raises ``KeyError`` naming the valid suites.

    Per-sandbox views (``AbstainTools/<Name>-v0``) are left out: their tasks are already in ``AbstainTools-v0``, and a
    suite must not count an episode twice. Name them explicitly to run one sandbox.
    """
    if suite not in SUITES:
        raise KeyError(f"unknown suite {suite!r}; valid suites: {', '.join(SUITES)}")
    from agentabstain_gym.agents import env_family

    return [e for e in agentabstain_gym.ENV_IDS if "/" not in e and (suite == "all" or env_family(e) == suite)]


def check_env_id(env_id: str) -> None:
    """Raise a one-line ``KeyError`` naming the valid ids when ``env_id`` is not a text id."""
    if env_id not in agentabstain_gym.ENV_IDS:
        raise KeyError(f"unknown env id {env_id!r}; valid ids: {', '.join(agentabstain_gym.ENV_IDS)}")


def check_agent(spec: str) -> None:
    """Raise a one-line ``KeyError`` when ``spec`` is neither a built-in agent, ``sb3:PATH`` nor
    ``module:Class``.
    """
    if spec not in AGENT_NAMES and ":" not in spec:
        raise KeyError(f"unknown agent {spec!r}; valid agents: {', '.join(AGENT_NAMES)}, sb3:PATH, or module:Class")


def load_user_agent(spec: str) -> Agent:
    """Instantiate ``module:Class`` or ``path/to/file.py:Class`` (no arguments, or ``env_id`` if it takes one)."""
    target, _, cls_name = spec.rpartition(":")
    if target.endswith(".py"):
        path = Path(target)
        module_spec = importlib.util.spec_from_file_location(path.stem, path)
        if module_spec is None or module_spec.loader is None:
            raise KeyError(f"cannot load agent file {target!r}")
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[path.stem] = module
        module_spec.loader.exec_module(module)
    else:
        module = importlib.import_module(target)
    cls = getattr(module, cls_name, None)
    if cls is None:
        raise KeyError(f"{target!r} has no attribute {cls_name!r}")
    agent = cls()
    for attr in ("reset", "act"):
        if not callable(getattr(agent, attr, None)):
            raise KeyError(f"{spec} lacks a {attr}() method; see agentabstain_gym.agents.base.Agent")
    return agent


def build_agent(spec: str, env_id: str, seed: int = 0) -> Agent:
    """The agent ``spec`` names, for ``env_id``: a built-in or SB3 agent, or a user's ``module:Class``."""
    if spec in AGENT_NAMES or spec.startswith("sb3:"):
        return make_agent(spec, env_id, seed=seed)
    return load_user_agent(spec)


def agent_label(spec: str, agent: Agent | None = None) -> str:
    """The name written into records: the built-in name, or the user agent's ``name`` (else its spec)."""
    if spec in AGENT_NAMES or spec.startswith("sb3:"):
        return spec
    return str(getattr(agent, "name", None) or spec)


# ----- planning -----------------------------------------------------------------------------------------------------
def plan(config: EvalConfig) -> list[Episode]:
    """Every episode of the run, in a fixed order."""
    episodes = []
    for env_id in config.env_ids:
        env = gym.make(env_id, **config.env_kwargs.get(env_id, {}))
        tasks = env.unwrapped.tasks(split=config.split)
        env.close()
        ids = [t.task_id for t in tasks]
        if config.episodes is not None:
            order = np.random.default_rng(config.seed).permutation(len(ids))
            ids = [ids[i] for i in order[: config.episodes]]
        for spec in config.agents:
            episodes.extend(Episode(env_id, spec, tid, episode_seed(config.seed, env_id, tid)) for tid in ids)
    return episodes


def recorded_keys(out: Path) -> tuple[set[tuple[str, str, str, int]], list[dict[str, Any]]]:
    """Keys and records already in ``out`` (unreadable lines are skipped with a warning naming them)."""
    keys: set[tuple[str, str, str, int]] = set()
    records = []
    if out.exists():
        for rec in iter_records(out):
            key = (rec["env_id"], rec.get("agent_spec") or rec.get("agent"), rec["task_id"], rec.get("seed"))
            if key not in keys:
                keys.add(key)
                records.append(rec)
    return keys, records


# ----- running ------------------------------------------------------------------------------------------------------
def _error_text() -> str:
    """The current exception's last frames, capped, for a record's ``extras``."""
    return traceback.format_exc(limit=3)[-_ERROR_CHARS:]


def run_episode(env: gym.Env, agent: Agent, task_id: str, seed: int) -> dict[str, Any]:
    """Play one episode and return its record, whatever the agent or the env does.

    An agent that raises (in ``reset``, ``act`` or ``episode_extras``) ends the episode as a failure with the error
    in ``extras["error"]``; an env whose ``reset`` or ``step`` raises ends it as a failure with the error in
    ``extras["env_error"]``, so an env bug is never counted against the agent. An agent with an
    ``episode_extras()`` method (e.g. the LLM agent's transcript) has it merged into ``extras``. The record is
    strict-JSON safe (:func:`json_safe`: NaN as null, lone surrogates as U+FFFD), so writing it cannot fail.
    """
    base = env.unwrapped
    agent_error: str | None = None
    try:
        reset = agent.reset
        if "seed" in inspect.signature(reset).parameters:
            reset(seed=seed)  # type: ignore[call-arg]
        else:
            reset()
    except Exception:  # noqa: BLE001 - any agent bug is recorded, never fatal to the run
        agent_error = _error_text()
    try:
        observation, info = env.reset(seed=seed, options={"task_id": task_id})
    except Exception:  # noqa: BLE001 - an env that cannot start the episode is recorded as such
        record = base.failure_record(_error_text(), kind="env", task_id=task_id, seed=seed)
        return _with_agent_extras(record, agent)
    if agent_error is not None:
        return _with_agent_extras(base.abort(agent_error), agent)
    while True:
        try:
            action = agent.act(observation, info)
        except Exception:  # noqa: BLE001 - any agent bug is recorded, never fatal to the run
            record = base.abort(_error_text())
            break
        try:
            observation, _reward, terminated, truncated, info = env.step(action)
            if terminated or truncated:
                record = dict(info["abstention"])
                break
        except Exception:  # noqa: BLE001 - nor is an env bug, which is recorded apart from agent errors
            record = base.abort(_error_text(), kind="env")
            break
    return _with_agent_extras(record, agent)


def _with_agent_extras(record: dict[str, Any], agent: Agent) -> dict[str, Any]:
    """``record`` with the agent's ``episode_extras()`` merged into ``extras``, as strict-JSON-safe values."""
    extras = getattr(agent, "episode_extras", None)  # e.g. the LLM agent's transcript
    if callable(extras):
        merged = dict(record.get("extras") or {})
        try:
            # the agent's keys win, except the error keys: only the runner says an episode failed, and why
            own = {k: v for k, v in dict(extras()).items() if k not in _ERROR_KEYS}
            merged = {**merged, **json_safe(own)}
        except Exception:  # noqa: BLE001 - a broken extras hook is the agent's error, not the run's
            merged.setdefault("error", _error_text())
        record["extras"] = merged
    return record  # the env's part is strict-JSON safe already (AbstainEnv records go through json_safe)


class Worker:
    """Holds one env per env id and one agent per spec, reused across episodes (per process)."""

    def __init__(self, env_kwargs: dict[str, dict[str, Any]],
                 build_lock: contextlib.AbstractContextManager[Any] | None = None) -> None:
        self.env_kwargs = env_kwargs
        self.envs: dict[str, gym.Env] = {}
        self.agents: dict[tuple[str, str], Agent] = {}
        self.build_seconds = 0.0  # spent building envs and agents: what a new worker would spend again
        # threads share one lock here: building an env or agent may fill a lazy cache or import a user's file
        self.build_lock = build_lock if build_lock is not None else contextlib.nullcontext()

    def prepare(self, episode: Episode) -> tuple[gym.Env, Agent]:
        """The env and agent for ``episode``, built on first use (the time it takes adds to ``build_seconds``)."""
        t0 = time.perf_counter()
        env = self.envs.get(episode.env_id)
        if env is None:
            with self.build_lock:
                env = gym.make(episode.env_id, **self.env_kwargs.get(episode.env_id, {}))
                # every record carries the env's fingerprint, computed on first use (up to ~0.3 s): that is build
                # time, not the first episode's, or the pool would judge episodes by it and fork for a tiny run
                getattr(env.unwrapped, "fingerprint", None)
            self.envs[episode.env_id] = env
        agent = self.agents.get((episode.agent, episode.env_id))
        if agent is None:
            with self.build_lock:
                agent = build_agent(episode.agent, episode.env_id)
            self.agents[(episode.agent, episode.env_id)] = agent
        self.build_seconds += time.perf_counter() - t0
        return env, agent

    def run(self, episode: Episode) -> dict[str, Any]:
        """Play one planned episode on this worker's cached env and return its record, labelled with the
        agent.
        """
        env, agent = self.prepare(episode)
        record = run_episode(env, agent, episode.task_id, episode.seed)
        record["agent"] = agent_label(episode.agent, agent)
        record["agent_spec"] = episode.agent
        if "env_error" in record["extras"]:  # the env may be left half-way through a step: start the next afresh
            self.envs.pop(episode.env_id, None)
            with contextlib.suppress(Exception):
                env.close()
        return record

    def failure(self, episode: Episode, text: str) -> dict[str, Any]:
        """The record of an episode that could not be run at all (e.g. it killed its worker process): an env error."""
        env, agent = self.prepare(episode)
        record = env.unwrapped.failure_record(text, kind="env", task_id=episode.task_id, seed=episode.seed)
        record["agent"] = agent_label(episode.agent, agent)
        record["agent_spec"] = episode.agent
        return record

    def close(self, keep_agents: bool = False) -> None:
        """Close every env (and forget the agents, unless ``keep_agents``: they hold no sandbox, and stay warm)."""
        envs, self.envs = list(self.envs.values()), {}
        if not keep_agents:
            self.agents = {}
        for env in envs:
            with contextlib.suppress(Exception):
                env.close()


class ThreadWorkers:
    """One :class:`_Worker` per thread, so each running episode has its own env and agent instances (the LLM
    agent keeps the episode's conversation on itself); read-only data behind them (datasets) is shared."""

    def __init__(self, env_kwargs: dict[str, dict[str, Any]]) -> None:
        self.env_kwargs = env_kwargs
        self.local = threading.local()
        self.all: list[Worker] = []
        self.lock = threading.Lock()
        self.build_lock = threading.RLock()

    def run(self, episode: Episode) -> dict[str, Any]:
        """Play one episode on the calling thread's own worker (envs are not shared between threads)."""
        worker = getattr(self.local, "worker", None)
        if worker is None:
            worker = self.local.worker = Worker(self.env_kwargs, build_lock=self.build_lock)
            with self.lock:
                self.all.append(worker)
        return worker.run(episode)

    def close(self) -> None:
        """Close every thread's worker and its envs."""
        for worker in self.all:
            with contextlib.suppress(Exception):
                worker.close()


def _windowed(pool: ThreadPoolExecutor, fn: Callable[[Episode], dict[str, Any]],
              episodes: list[Episode], window: int) -> Iterator[dict[str, Any]]:
    """Run ``fn`` over ``episodes`` keeping at most ``window`` in flight (so a crash wastes little work), yielding
    results in completion order."""
    pending: set[Future[dict[str, Any]]] = set()
    queue = iter(episodes)
    for episode in queue:
        pending.add(pool.submit(fn, episode))
        if len(pending) >= window:
            break
    while pending:
        finished, pending = wait(pending, return_when=FIRST_COMPLETED)
        for future in finished:
            yield future.result()
            nxt = next(queue, None)
            if nxt is not None:
                pending.add(pool.submit(fn, nxt))


def iter_batches(episodes: list[Episode], *, workers: int = 1, env_kwargs: dict[str, dict[str, Any]] | None = None,
                 concurrency: int = 1, backend: str = "local", address: str | None = None
                 ) -> Iterator[list[dict[str, Any]]]:
    """Yield records in batches as episodes finish (in plan order with one worker and one thread, else completion
    order); a batch is what arrived together, so the caller can write it with one flush.

    ``workers`` > 1 runs a process pool (:mod:`agentabstain_gym.pool`: forked once, fed in chunks, and only when
    the work pays for it); ``concurrency`` > 1 runs that many episodes at once on threads (one env and one agent
    per thread), in this process or in each worker; ``backend="ray"`` runs the episodes as Ray tasks
    (:mod:`agentabstain_gym.distributed`). Records are yielded to the caller's thread only, so the caller stays the
    single writer.
    """
    env_kwargs = env_kwargs or {}
    if backend == "ray":
        from agentabstain_gym.distributed import run_on_ray

        yield from run_on_ray(episodes, env_kwargs=env_kwargs, workers=workers, concurrency=concurrency,
                              address=address)
        return
    if backend != "local":
        raise ValueError(f"unknown backend {backend!r}; valid backends: local, ray")
    if workers > 1 and len(episodes) > 1:
        from agentabstain_gym.pool import run_pooled

        yield from run_pooled(episodes, workers, env_kwargs, concurrency)
        return
    if concurrency > 1 and len(episodes) > 1:
        threads = ThreadWorkers(env_kwargs)
        pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="episode")
        try:
            for record in _windowed(pool, threads.run, episodes, 2 * concurrency):
                yield [record]
        finally:  # stopped early (an error, Ctrl-C): let running episodes end, start no queued one
            pool.shutdown(wait=True, cancel_futures=True)
            threads.close()
        return
    worker = Worker(env_kwargs)
    try:
        for episode in episodes:
            yield [worker.run(episode)]
    finally:
        worker.close()


def iter_run(episodes: list[Episode], **options: Any) -> Iterator[dict[str, Any]]:
    """:func:`iter_batches`, one record at a time."""
    for batch in iter_batches(episodes, **options):
        yield from batch


class EvalInterrupted(Exception):
    """Ctrl-C during :func:`evaluate`: ``recorded`` episodes are in the run file (all of them, old and new)."""

    def __init__(self, recorded: int, finished: int) -> None:
        super().__init__(f"interrupted: {recorded} episodes recorded")
        self.recorded = recorded
        self.finished = finished


def evaluate(config: EvalConfig, *, out: str | Path | None = None, workers: int = 1,
             progress: Callable[[dict[str, Any], int, int], None] | None = None,
             force_new: bool = False, say: Callable[[str], None] | None = None,
             backend: str = "local", address: str | None = None) -> list[dict[str, Any]]:
    """Run the plan (skipping episodes already in ``out``) and return all of the plan's records.

    ``out`` is locked first, before planning (a second ``eval`` on the same file fails at once), then checked
    against the run's manifest (see :mod:`agentabstain_gym.runfile`), so a run never mixes into another's file;
    ``force_new`` starts it afresh. Ctrl-C raises :class:`EvalInterrupted` saying how much is recorded.
    """
    for env_id in config.env_ids:
        check_env_id(env_id)
    for spec in config.agents:
        check_agent(spec)
    options = {"workers": workers, "env_kwargs": config.env_kwargs, "concurrency": config.concurrency,
               "backend": backend, "address": address}
    if out is None:
        return _evaluate(_plan(config), None, options, progress)
    from agentabstain_gym.runfile import adopt, locked, manifest_for

    with locked(out) as handle:
        episodes = _plan(config)
        run_file = adopt(out, handle, manifest_for(config, episodes), {e.key for e in episodes},
                         force_new=force_new, say=say)
        return _evaluate(episodes, run_file, options, progress)


class PlanError(Exception):
    """The run could not be planned (e.g. a broken pair file): one line for the user."""


def _plan(config: EvalConfig) -> list[Episode]:
    try:
        return plan(config)
    except KeyError:
        raise
    except Exception as exc:  # noqa: BLE001 - whatever a broken data file raises becomes one line
        line = " ".join(str(exc).split()) or type(exc).__name__
        raise PlanError(line[:300]) from exc


def _evaluate(episodes: list[Episode], run_file: Any, options: dict[str, Any],
              progress: Callable[[dict[str, Any], int, int], None] | None) -> list[dict[str, Any]]:
    wanted = {e.key for e in episodes}
    done_keys: set[tuple[str, str, str, int]] = set()
    records: list[dict[str, Any]] = []
    if run_file is not None:
        done_keys, old = recorded_keys(run_file.path)
        records = [r for r in old if (r["env_id"], r.get("agent_spec") or r.get("agent"), r["task_id"],
                                      r.get("seed")) in wanted]
    todo = [e for e in episodes if e.key not in done_keys]
    total, finished = len(episodes), len(episodes) - len(todo)
    try:
        for batch in iter_batches(todo, **options):
            if run_file is not None:
                run_file.append_many(batch)
            records.extend(batch)
            for record in batch:
                finished += 1
                if progress is not None:
                    progress(record, finished, total)
    except KeyboardInterrupt:
        recorded = run_file.recorded if run_file is not None else 0
        raise EvalInterrupted(recorded, finished) from None
    return records
