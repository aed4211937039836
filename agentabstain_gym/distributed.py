"""``eval --backend ray``: the planned episodes as Ray actor calls, on one machine or a cluster.

Each actor holds warm envs and agents (a :class:`~agentabstain_gym.runner.Worker`, or one per thread with
``concurrency`` > 1) and runs chunks of episodes; the driver (the ``eval`` process) writes every record to the run
file, so resuming works exactly as with local workers, and records are the same (seeds come from the plan). Ray core
only: ``ray[rllib]`` pins an older Gymnasium. Actors are owned by the driver, so Ray removes them when the driver
exits; a one-machine cluster started here is also registered with the sandbox reaper, so even a SIGKILLed driver
leaves none of Ray's processes behind. A chunk whose actor dies is re-run one episode at a time, and an episode that kills
:data:`~agentabstain_gym.pool.MAX_ATTEMPTS` actors is recorded as an env error.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
from collections import deque
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from agentabstain_gym.pool import MAX_ATTEMPTS
from agentabstain_gym.runner import Episode, ThreadWorkers, Worker

Record = dict[str, Any]
RAY_MISSING = ("--backend ray needs Ray core: pip install ray (the [ray] extra; not ray[rllib], which pins an "
               "older gymnasium)")


def check_ray() -> None:
    """Raise a one-line ``RuntimeError`` when Ray is not installed."""
    try:
        import ray  # noqa: F401
    except ImportError:
        raise RuntimeError(RAY_MISSING) from None


class EpisodeRunner:
    """The body of a Ray actor: warm envs and agents reused across the chunks it is given."""

    def __init__(self, env_kwargs: dict[str, dict[str, Any]], concurrency: int) -> None:
        self.worker: Worker | ThreadWorkers = ThreadWorkers(env_kwargs) if concurrency > 1 else Worker(env_kwargs)
        self.threads = ThreadPoolExecutor(max_workers=concurrency) if concurrency > 1 else None

    def run_chunk(self, episodes: list[Episode]) -> list[Record]:
        """Run a chunk of episodes on this actor (on threads when it has several) and return their records."""
        if self.threads is None:
            return [self.worker.run(e) for e in episodes]
        return list(self.threads.map(self.worker.run, episodes))


def run_on_ray(episodes: list[Episode], *, env_kwargs: dict[str, dict[str, Any]], workers: int = 1,
               concurrency: int = 1, address: str | None = None) -> Iterator[list[Record]]:
    """Yield each chunk's records as it finishes. Uses the Ray session already initialised in this process, else
    ``ray.init(address)`` (``None``: a new one-machine cluster, ended with the run; ``auto`` or ``ray://...``:
    an existing cluster). ``workers`` > 1 is the number of actors; else one per CPU of the cluster."""
    check_ray()
    import ray

    if not episodes:
        return
    started = False
    if not ray.is_initialized():
        ray.init(address=address, include_dashboard=False, logging_level=logging.WARNING, log_to_driver=False,
                 configure_logging=False)
        started = True
    actors: list[Any] = []
    reaped: list[tuple[str, ...]] = []
    try:
        if started:
            reaped += _reap_with_us(reaped)
        cpus = int(ray.cluster_resources().get("CPU", 1))
        count = max(1, min(workers if workers > 1 else cpus, len(episodes)))
        # the LLM options travel as ABSTAIN_GYM_* variables; workers on other nodes do not share our environment
        settings = {k: v for k, v in sorted(os.environ.items()) if k.startswith("ABSTAIN_GYM_")}
        actor_class = ray.remote(num_cpus=0.5 if concurrency > 1 else 1,
                                 runtime_env={"env_vars": settings} if settings else None)(EpisodeRunner)
        actors = [actor_class.remote(env_kwargs, concurrency) for _ in range(count)]
        size = max(concurrency, min(64, math.ceil(len(episodes) / (4 * count))))
        for number, batch in enumerate(_dispatch(ray, actor_class, actors, episodes, size, env_kwargs, concurrency)):
            if started and number == 0:  # Ray starts some of its helpers late
                reaped += _reap_with_us(reaped)
            yield batch
    finally:
        for actor in actors:
            with contextlib.suppress(Exception):
                ray.kill(actor)
        if started:
            ray.shutdown()
            _forget(reaped)


def _reap_with_us(known: list[tuple[str, ...]]) -> list[tuple[str, ...]]:
    """Register the processes of the one-machine cluster we started (all our descendants) with the reaper, which
    kills them when we die, however we die: Ray's own agents outlive a SIGKILLed driver otherwise."""
    from agentabstain_gym.envs.terminal.sandbox import reaper

    client = reaper.client()
    ours = client.pid
    added = []
    for pid in sorted(_descendants(os.getpid()) - {ours}):
        entry = reaper.pid_entry(pid)
        if entry not in known:
            added.append(client.add(*entry))
    return added


def _forget(entries: list[tuple[str, ...]]) -> None:
    from agentabstain_gym.envs.terminal.sandbox import reaper

    for entry in entries:
        reaper.client().remove(*entry)


def _descendants(pid: int) -> set[int]:
    found: set[int] = set()
    frontier = [pid]
    while frontier:
        parent = frontier.pop()
        for task in Path(f"/proc/{parent}/task").glob("*"):
            with contextlib.suppress(OSError, ValueError):
                for child in map(int, (task / "children").read_text().split()):
                    if child not in found:
                        found.add(child)
                        frontier.append(child)
    return found


def _dispatch(ray: Any, actor_class: Any, actors: list[Any], episodes: list[Episode], size: int,
              env_kwargs: dict[str, dict[str, Any]], concurrency: int) -> Iterator[list[Record]]:
    """Two chunks in flight per actor; a failed chunk is split into single episodes and retried on a new actor."""
    queue: deque[list[int]] = deque(list(range(i, min(i + size, len(episodes))))
                                    for i in range(0, len(episodes), size))
    attempts = [0] * len(episodes)
    in_flight: dict[Any, tuple[int, list[int]]] = {}  # object ref -> (actor slot, chunk)
    load = [0] * len(actors)
    alone = [False] * len(actors)  # running a retried episode, with nothing queued behind it
    while queue or in_flight:
        for slot in range(len(actors)):
            while load[slot] < 2 and queue and not alone[slot]:
                retried = attempts[queue[0][0]] > 0
                if retried and load[slot]:
                    break  # a retried episode runs by itself, so a second death names it for certain
                chunk = queue.popleft()
                ref = actors[slot].run_chunk.remote([episodes[i] for i in chunk])
                in_flight[ref] = (slot, chunk)
                load[slot] += 1
                alone[slot] = retried
        ready, _ = ray.wait(list(in_flight), num_returns=1)
        for ref in ready:
            slot, chunk = in_flight.pop(ref)
            load[slot] -= 1
            alone[slot] = False
            try:
                yield ray.get(ref)
            except ray.exceptions.RayError as exc:  # the actor died (or its call failed): retry, then record
                failed: list[Record] = []
                for index in chunk:  # every episode of a failed call counts an attempt: any of them may be to blame
                    attempts[index] += 1
                    if attempts[index] >= MAX_ATTEMPTS:
                        failed.append(Worker(env_kwargs).failure(
                            episodes[index], f"Ray actor failed while running this episode: {type(exc).__name__}"))
                    else:
                        queue.appendleft([index])
                if not _alive(ray, actors[slot]):
                    with contextlib.suppress(Exception):
                        ray.kill(actors[slot])
                    actors[slot] = actor_class.remote(env_kwargs, concurrency)
                if failed:
                    yield failed


def _alive(ray: Any, actor: Any) -> bool:
    try:
        ray.get(actor.__ray_ready__.remote(), timeout=10)
        return True
    except Exception:  # noqa: BLE001 - any failure to answer means it must be replaced
        return False
