"""Worker processes for ``eval --workers N``: started once per run, fed in chunks, and never slower than one worker.

Starting a process can cost more than a whole small run: a spawned Python imports numpy and gymnasium and loads the
family's data again (2 s for the tool sandboxes) while a QA episode takes 0.4 ms. So:

* the parent runs the first episodes itself (about 20 ms of work, one env at a time; their records are kept, so
  nothing is wasted), estimates what is left, and finishes in-process when that is too little to pay for workers;
* on Linux, workers are forked after planning, so the family data is already in memory (copy on write) and a worker
  is ready in milliseconds; elsewhere, or when the parent already runs threads (fork copies no thread), they are
  spawned, and the estimate charges for that;
* episodes go out in chunks of about 50 ms of work, two chunks per worker in flight, and every record comes back as
  its episode ends, so the parent (the only writer) records it at once;
* workers die with the parent (``PR_SET_PDEATHSIG``), ignore Ctrl-C (the parent stops them), and a worker that
  dies is replaced: the episode it was running is tried once more, and recorded as an env error if it kills a
  second worker, so one bad episode cannot stop a run.

Records do not depend on any of this: each episode's seed comes from the run seed and the task alone.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import math
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Generator, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor
from concurrent.futures import wait as wait_futures
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import Any

from agentabstain_gym.runner import Episode, ThreadWorkers, Worker

#: In-process work (seconds) before deciding whether workers pay off.
CALIBRATION_SECONDS = 0.005
#: Target work per chunk (seconds): small enough to balance, large enough that messages cost little.
CHUNK_SECONDS = 0.05
#: What starting one worker costs beyond building its envs: a fork, or a spawned interpreter importing the package.
STARTUP_SECONDS = {"fork": 0.01, "spawn": 2.0}
#: A worker sends what it finished at most this often: waking the parent per 0.3 ms episode costs a core's tenth.
SEND_SECONDS = 0.01
#: Attempts per episode before a worker death is recorded as the episode's env error.
MAX_ATTEMPTS = 2
_PR_SET_PDEATHSIG = 1

Record = dict[str, Any]


def start_method() -> str:
    """``fork`` on Linux when this process runs no other thread (fork would copy none of them), else ``spawn``."""
    if sys.platform.startswith("linux") and threading.active_count() == 1:
        return "fork"
    return "spawn"


def worth_starting(remaining_seconds: float, startup_seconds: float, workers: int) -> bool:
    """Whether ``workers`` processes finish ``remaining_seconds`` of one-process work sooner, with a margin:
    starting them must cost at most half of the time they save."""
    return workers > 1 and startup_seconds < 0.5 * remaining_seconds * (1 - 1 / workers)


class Feeder:
    """Hands out chunks of episode indices: about :data:`CHUNK_SECONDS` of work each by the latest estimate of an
    episode's cost, never more than a ``2 * workers``-th of what is left (so the workers finish together), never
    fewer than ``floor`` (one per thread). Requeued chunks go first."""

    def __init__(self, episodes: list[Episode], workers: int, floor: int, seconds: dict[str, float]) -> None:
        self.episodes = episodes
        self.workers = workers
        self.floor = floor
        self.seconds = dict(seconds)  # env id -> seconds per episode
        self.next = 0
        self.requeued: deque[list[int]] = deque()

    def __bool__(self) -> bool:
        return bool(self.requeued) or self.next < len(self.episodes)

    def __len__(self) -> int:
        """Chunks that can still be handed out at least (for deciding how many workers to start)."""
        return len(self.requeued) + math.ceil((len(self.episodes) - self.next) / max(1, self.floor))

    def take(self) -> list[int]:
        """The next chunk of episode indexes: requeued chunks first, then a chunk sized to take about
        ``CHUNK_SECONDS``.
        """
        if self.requeued:
            return self.requeued.popleft()
        left = len(self.episodes) - self.next
        cost = self.seconds.get(self.episodes[self.next].env_id)
        by_time = CHUNK_SECONDS / cost if cost else 4 * self.floor
        step = max(1, self.floor, min(int(by_time), math.ceil(left / (2 * self.workers))))
        chunk = list(range(self.next, min(len(self.episodes), self.next + step)))
        self.next += len(chunk)
        return chunk

    def peek(self) -> list[int] | None:
        """The next requeued chunk, if the next chunk is one."""
        return self.requeued[0] if self.requeued else None

    def requeue(self, chunks: list[list[int]]) -> None:
        """Put the chunks of a lost worker back at the front, in their order, so no episode is skipped."""
        self.requeued.extendleft(reversed(chunks))

    def observe(self, env_id: str, seconds: float) -> None:
        """An episode of ``env_id`` took ``seconds`` here: move the estimate a fifth of the way."""
        old = self.seconds.get(env_id)
        self.seconds[env_id] = seconds if old is None else 0.8 * old + 0.2 * seconds


# ----- the worker process -------------------------------------------------------------------------------------------
def _die_with_parent(parent_pid: int) -> None:
    """SIGKILL this process when the parent dies, however it dies (Linux); exit now if it is already gone."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent_pid:
        os._exit(1)


def _worker_main(conn: Connection, env_kwargs: dict[str, dict[str, Any]], concurrency: int, parent_pid: int,
                 inherited: list[Connection]) -> None:
    """Run chunks of ``(index, Episode)`` from ``conn`` until ``None``, sending lists of ``(index, record)`` at
    most every :data:`SEND_SECONDS` (and at each chunk's end), so the parent wakes rarely yet records promptly."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle: it stops us
    _die_with_parent(parent_pid)
    for other in inherited:  # a forked child holds every pipe the parent had open; keep only ours
        with contextlib.suppress(OSError):
            other.close()
    if concurrency > 1:
        _threaded_loop(conn, ThreadWorkers(env_kwargs), concurrency)
        return
    worker = Worker(env_kwargs)
    try:
        while True:
            try:
                chunk = conn.recv()
            except EOFError:
                return
            if chunk is None:
                return
            batch: list[tuple[int, Record]] = []
            last = time.monotonic()
            for index, episode in chunk:
                batch.append((index, worker.run(episode)))
                if time.monotonic() - last >= SEND_SECONDS:
                    conn.send(batch)
                    batch, last = [], time.monotonic()
            if batch:
                conn.send(batch)
    finally:
        worker.close()


def _threaded_loop(conn: Connection, threads: ThreadWorkers, concurrency: int) -> None:
    """As :func:`_worker_main`, with up to ``concurrency`` episodes at once on threads; only this thread sends."""
    pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="episode")
    pending: dict[Future[Record], int] = {}
    stopping = False
    try:
        while pending or not stopping:
            while not stopping and conn.poll(0 if pending else None):
                try:
                    chunk = conn.recv()
                except EOFError:
                    chunk = None
                if chunk is None:
                    stopping = True
                    break
                for index, episode in chunk:
                    pending[pool.submit(threads.run, episode)] = index
            if pending:
                done, _ = wait_futures(pending, timeout=0.05, return_when=FIRST_COMPLETED)
                if done:
                    conn.send([(pending.pop(future), future.result()) for future in done])
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        threads.close()


# ----- the parent's side --------------------------------------------------------------------------------------------
@dataclass
class _Handle:
    process: Any  # multiprocessing.Process (BaseProcess subclasses differ per context)
    conn: Connection
    chunks: deque[list[int]] = field(default_factory=deque)  # in flight, in the order the worker runs them
    finished: set[int] = field(default_factory=set)
    alone: bool = False  # running a retried episode with nothing else, so a second death names it for certain


class WorkerPool:
    """Workers started once for a run; :meth:`run` yields batches of records as they arrive."""

    def __init__(self, workers: int, env_kwargs: dict[str, dict[str, Any]], concurrency: int = 1) -> None:
        self.size = workers
        self.env_kwargs = env_kwargs
        self.concurrency = concurrency
        self.handles: list[_Handle] = []
        self.started = 0  # processes started, replacements included

    def _start(self) -> _Handle:
        method = start_method()
        ctx = multiprocessing.get_context(method)
        ours, theirs = ctx.Pipe(duplex=True)
        inherited = [h.conn for h in self.handles] + [ours] if method == "fork" else []
        for stream in (sys.stdout, sys.stderr):  # a forked child flushes its copy of our buffers when it exits
            with contextlib.suppress(Exception):
                stream.flush()
        process = ctx.Process(target=_worker_main, name=f"abstain-gym-worker-{self.started}", daemon=True,
                              args=(theirs, self.env_kwargs, self.concurrency, os.getpid(), inherited))
        if method == "fork":  # objects made before the fork are never traversed by the child's collector, so
            gc.freeze()       # their pages stay shared instead of being copied on the first collection
        try:
            process.start()
        finally:
            if method == "fork":
                gc.unfreeze()
        theirs.close()
        self.started += 1
        handle = _Handle(process, ours)
        self.handles.append(handle)
        return handle

    def run(self, episodes: list[Episode], seconds: dict[str, float], fallback: Worker, own: Worker | None = None
            ) -> Iterator[list[Record]]:
        """Run ``episodes`` in chunks sized by ``seconds`` (per env id; see :class:`Feeder`); ``fallback`` writes the record of an episode that killed
        :data:`MAX_ATTEMPTS` workers. With ``own``, this process is one of the workers: between looks at the
        others' pipes it runs chunks itself (about :data:`SEND_SECONDS` at a time), so only ``workers - 1`` are
        forked and no core waits on a process that only forwards records."""
        queue = Feeder(episodes, self.size, self.concurrency, seconds)
        attempts = [0] * len(episodes)
        remaining = len(episodes)
        while len(self.handles) < min(self.size - (own is not None), len(queue)):
            self._start()
        mine: deque[int] = deque()
        try:
            while remaining:
                for handle in self.handles:
                    while len(handle.chunks) < 2 and queue and not handle.alone:
                        retried = self._retried(queue, attempts)
                        if retried and handle.chunks:
                            break
                        chunk = queue.take()
                        handle.conn.send([(i, episodes[i]) for i in chunk])
                        handle.chunks.append(chunk)
                        handle.alone = retried
                if own is not None and not mine and queue and not self._retried(queue, attempts):
                    mine.extend(queue.take())  # never an episode that killed a worker: it could kill the run
                waitables: list[Any] = [h.conn for h in self.handles] + [h.process.sentinel for h in self.handles]
                ready = set(wait(waitables, timeout=0 if mine else None)) if waitables else set()
                batch: list[Record] = []
                for handle in list(self.handles):
                    dead = False
                    if handle.conn in ready:
                        try:
                            while handle.conn.poll():
                                for index, record in handle.conn.recv():
                                    batch.append(record)
                                    remaining -= 1
                                    self._finish(handle, index)
                        except (EOFError, OSError):
                            dead = True
                    if dead or handle.process.sentinel in ready and not handle.process.is_alive():
                        remaining -= self._replace(handle, episodes, attempts, queue, batch, fallback)
                if own is not None:
                    deadline = time.monotonic() + SEND_SECONDS
                    while mine and time.monotonic() < deadline:
                        episode = episodes[mine.popleft()]
                        own.prepare(episode)
                        started = time.perf_counter()
                        batch.append(own.run(episode))
                        queue.observe(episode.env_id, time.perf_counter() - started)
                        remaining -= 1
                if batch:
                    yield batch
        finally:
            self.close()

    @staticmethod
    def _retried(queue: Feeder, attempts: list[int]) -> bool:
        nxt = queue.peek()
        return nxt is not None and any(attempts[i] for i in nxt)

    @staticmethod
    def _finish(handle: _Handle, index: int) -> None:
        handle.finished.add(index)
        while handle.chunks and all(i in handle.finished for i in handle.chunks[0]):
            handle.finished.difference_update(handle.chunks.popleft())
        handle.alone = handle.alone and bool(handle.chunks)

    def _replace(self, handle: _Handle, episodes: list[Episode], attempts: list[int], queue: Feeder,
                 batch: list[Record], fallback: Worker) -> int:
        """A worker died: requeue its unfinished episodes (the ones it was running count an attempt; past
        :data:`MAX_ATTEMPTS` they are recorded as env errors) and start a replacement. Returns records added."""
        added = 0
        with contextlib.suppress(OSError, EOFError):  # records it sent before dying still count
            while handle.conn.poll():
                for index, record in handle.conn.recv():
                    batch.append(record)
                    added += 1
                    self._finish(handle, index)
        handle.process.join(1)
        code = handle.process.exitcode
        self.handles.remove(handle)
        handle.conn.close()
        unfinished = [i for chunk in handle.chunks for i in chunk if i not in handle.finished]
        running, waiting = unfinished[:self.concurrency], unfinished[self.concurrency:]
        retry: list[list[int]] = []
        for index in running:
            attempts[index] += 1
            if attempts[index] >= MAX_ATTEMPTS:
                how = f"killed by signal {-code}" if code is not None and code < 0 else f"exit code {code}"
                batch.append(fallback.failure(episodes[index], f"worker process died ({how}) while running this "
                                                               f"episode, {attempts[index]} times"))
                added += 1
            else:
                retry.append([index])
        queue.requeue(retry + ([waiting] if waiting else []))
        if queue:
            self._start()
        return added

    def close(self) -> None:
        """Stop every worker: ask politely, then SIGTERM, then SIGKILL (their sandboxes go with them)."""
        for handle in self.handles:
            with contextlib.suppress(OSError, ValueError):
                handle.conn.send(None)
        deadline = time.monotonic() + 5
        for handle in self.handles:
            handle.process.join(max(0.0, deadline - time.monotonic()))
        for handle in self.handles:
            if handle.process.is_alive():
                handle.process.terminate()
                handle.process.join(2)
            if handle.process.is_alive():
                handle.process.kill()
                handle.process.join(2)
            with contextlib.suppress(OSError):
                handle.conn.close()
        self.handles = []

    def interrupt(self) -> None:
        """Ctrl-C: stop at once (the episodes in flight are lost and re-run on resume)."""
        for handle in self.handles:
            if handle.process.is_alive():
                handle.process.terminate()
        self.close()


# ----- choosing between one process and a pool ------------------------------------------------------------------------
def _calibration_order(episodes: list[Episode]) -> list[int]:
    """Indices round-robin over env ids (first episode of every env, then the second, ...), so every family's
    cost is sampled early."""
    by_env: dict[str, list[int]] = {}
    for i, e in enumerate(episodes):
        by_env.setdefault(e.env_id, []).append(i)
    order: list[int] = []
    lists = list(by_env.values())
    for depth in range(max(len(v) for v in lists)):
        order.extend(v[depth] for v in lists if depth < len(v))
    return order


def run_pooled(episodes: list[Episode], workers: int, env_kwargs: dict[str, dict[str, Any]],
               concurrency: int = 1) -> Iterator[list[Record]]:
    """Yield batches of records for ``episodes`` using up to ``workers`` processes, or only this one when the
    estimated work is too small for more to pay off (see the module docstring)."""
    local = Worker(env_kwargs)
    pool: WorkerPool | None = None
    try:
        seconds: dict[str, float] = {}
        todo = episodes
        if concurrency == 1:  # a threaded (I/O-bound) run always uses the pool: its episodes are long
            todo, per_episode = yield from _calibrate(episodes, local, workers)
            if not todo:
                return
            if not _wanted(todo, per_episode, local, workers):
                for episode in todo:
                    yield [local.run(episode)]
                return
            seconds = per_episode
        local.close(keep_agents=True)  # a terminal sandbox of ours must not be shared with forked children
        pool = WorkerPool(workers, env_kwargs, concurrency)
        yield from pool.run(todo, seconds, fallback=local, own=local if concurrency == 1 else None)
    except KeyboardInterrupt:
        if pool is not None:
            pool.interrupt()
        raise
    finally:
        local.close()


def _calibrate(episodes: list[Episode], local: Worker, workers: int
               ) -> Generator[list[Record], None, tuple[list[Episode], dict[str, float]]]:
    """Run episodes in this process for :data:`CALIBRATION_SECONDS`, then until workers clearly pay off or every env
    is sampled; returns the episodes left and the fastest episode's seconds by env id (a cautious estimate)."""
    spent: dict[str, list[float]] = {}
    done: set[int] = set()
    start = time.perf_counter()
    envs = {e.env_id for e in episodes}
    for index in _calibration_order(episodes):
        episode = episodes[index]
        local.prepare(episode)  # building envs and agents is startup cost, not episode cost
        t0 = time.perf_counter()
        record = local.run(episode)
        spent.setdefault(episode.env_id, []).append(time.perf_counter() - t0)
        done.add(index)
        yield [record]
        if time.perf_counter() - start < CALIBRATION_SECONDS:
            continue  # one episode may fill a lazy cache: judge from several, or from one long one
        per_episode = {env: min(ts) for env, ts in spent.items()}  # warm-up spikes must not start a pool
        todo = [e for i, e in enumerate(episodes) if i not in done]
        if _wanted(todo, per_episode, local, workers) or len(spent) == len(envs):
            return todo, per_episode
    return [], {}


def _wanted(todo: list[Episode], per_episode: dict[str, float], local: Worker, workers: int) -> bool:
    """Whether a pool pays off for ``todo``; envs not sampled yet count as free (a lower bound on the work)."""
    remaining = sum(per_episode.get(e.env_id, 0.0) for e in todo)
    startup = STARTUP_SECONDS[start_method()] + local.build_seconds
    return worth_starting(remaining, startup, min(workers, len(todo)))
