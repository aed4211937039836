"""Pairs as data: reading pair files, making each T- with its delta operator, and the gym tasks of both sides.

A pair file (``data/tools/pairs/<sandbox>.yaml``) lists T+ tasks, each with one delta (or several, one pair each).
``w`` is never written by hand: pre-execution deltas give w = 1; for runtime deltas the T+ gold path is replayed on
both sides and w = 1 + the first call whose observation differs. Task and pair ids are hashes, so nothing about a
task's side or scenario can be read from its id; the task order interleaves sides deterministically.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from types import MappingProxyType
from typing import Any

from agentabstain_gym.core.task import SPLITS, Task
from agentabstain_gym.envs.tools import catalog
from agentabstain_gym.envs.tools.deltas import (
    DELTAS,
    LOCATION_PHASE,
    SCENARIOS,
    DeltaError,
    TaskData,
    apply_delta,
)
from agentabstain_gym.envs.tools.engine import CallRecord, Engine, Override, World, world
from agentabstain_gym.envs.tools.errors import SpecError
from agentabstain_gym.envs.tools.schemas import clear_schema_caches, schemas_json
from agentabstain_gym.envs.tools.spec import read_yaml
from agentabstain_gym.envs.tools.state import PatchError, Snapshot, apply_patch

SOLVABLE_CATEGORY = "solvable"
TYPES = ("informational", "operational")
PAIR_KEYS = {"id", "type", "sandboxes", "instruction", "tools", "state", "overrides", "clock", "gold", "critical",
             "answers", "distractors", "expect", "delta", "deltas", "split", "origin"}
DELTA_KEYS = {"op", "scenario", "witness"}


@dataclass(frozen=True)
class Pair:
    """A validated-shape pair: both sides, the delta that links them, and ``w`` of the T- side."""

    key: str
    positive: TaskData
    negative: TaskData
    op: str
    location: str
    scenario: str
    phase: str
    params: Mapping[str, Any]
    witness: Mapping[str, Any]
    w: int
    split: str = "test"

    @property
    def sandbox(self) -> str:
        return self.positive.sandboxes[0]

    def describe(self) -> str:
        shown = {k: v for k, v in self.params.items() if k not in ("record",)}
        return f"{self.op} ({self.location}): {json.dumps(shown, sort_keys=True)[:300]}"


def digest(*parts: Any, size: int = 10) -> str:
    return hashlib.blake2b("\x1f".join(map(str, parts)).encode(), digest_size=16).hexdigest()[:size]


# ----- engines for a task -------------------------------------------------------------------------------------------
@lru_cache(maxsize=4096)
def task_snapshot(sandboxes: tuple[str, ...], patch_json: str) -> Snapshot:
    """The initial collections of a task (the sandboxes' seed records with the task's patch), shared and cached."""
    base = world(sandboxes).snapshot
    if patch_json == "[]":
        return base
    return Snapshot(apply_patch(base.collections, json.loads(patch_json)), task_snapshot, (sandboxes, patch_json))


@dataclass(frozen=True)
class EngineSetup:
    """What an :class:`Engine` for one task side needs, resolved once (world, initial snapshot, inventory,
    compiled overrides, clock), so that making the engine is the same few assignments for every task."""

    world: World
    snapshot: Snapshot
    tools: tuple[str, ...]
    overrides: tuple[Override, ...]
    clock: str | None

    @classmethod
    def of(cls, data: TaskData) -> EngineSetup:
        patch = json.dumps(list(data.state), sort_keys=True)
        return cls(world(data.sandboxes), task_snapshot(data.sandboxes, patch), data.tools,
                   tuple(Override.from_dict(o) for o in data.overrides), data.clock)

    def engine(self) -> Engine:
        """A fresh engine (the snapshot and overrides are shared and never changed; the state is the engine's)."""
        return Engine(self.world, self.snapshot, self.tools, self.overrides, clock=self.clock)


def make_engine(data: TaskData) -> Engine:
    """A fresh engine over ``data``'s sandboxes, state patch, inventory, overrides and clock."""
    return EngineSetup.of(data).engine()


def replay(engine: Engine, calls: Any) -> list[CallRecord]:
    return [engine.call(c.get("tool"), c.get("arguments", {})) for c in calls]


def divergence(positive: TaskData, negative: TaskData) -> int | None:
    """1-based index of the first T+ gold call whose observation differs between the two sides (None: never)."""
    pos, neg = make_engine(positive), make_engine(negative)
    for i, call in enumerate(positive.gold, start=1):
        a = pos.call(call.get("tool"), call.get("arguments", {}))
        b = neg.call(call.get("tool"), call.get("arguments", {}))
        if a.observation != b.observation:
            return i
    return None


# ----- reading pair files ---------------------------------------------------------------------------------------------
def _tools(spec: Any, available: tuple[str, ...]) -> tuple[str, ...]:
    if spec in (None, "all"):
        return available
    if isinstance(spec, Mapping) and set(spec) == {"except"}:
        unknown = set(spec["except"]) - set(available)
        if unknown:
            raise DeltaError(f"tools.except names unknown tools {sorted(unknown)}")
        return tuple(t for t in available if t not in spec["except"])
    if isinstance(spec, list) and all(t in available for t in spec):
        return tuple(t for t in available if t in spec)  # spec order, so schemas list the same way everywhere
    raise DeltaError(f"tools is 'all', a list of the sandbox's tools or {{except: [...]}}; got {spec!r}")


def _calls(value: Any, where: str) -> tuple[dict[str, Any], ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(c, Mapping) and isinstance(c.get("tool"), str)
                                              and set(c) <= {"tool", "arguments"} for c in value):
        raise DeltaError(f"{where} is a list of {{tool, arguments}}")
    return tuple({"tool": c["tool"], "arguments": dict(c.get("arguments") or {})} for c in value)


def _positive(entry: Mapping[str, Any], default_sandbox: str) -> TaskData:
    sandboxes = tuple(entry.get("sandboxes") or [default_sandbox])
    w = world(sandboxes)
    if entry.get("type") not in TYPES:
        raise DeltaError(f"type must be one of {TYPES}")
    instruction = entry.get("instruction")
    if not isinstance(instruction, str) or len(instruction.strip()) < 10:
        raise DeltaError("instruction must be the user's request (a sentence)")
    for o in entry.get("overrides") or []:
        Override.from_dict(o)
    return TaskData(
        sandboxes=sandboxes, instruction=" ".join(instruction.split()), type=entry["type"],
        tools=_tools(entry.get("tools"), tuple(w.tools)), state=tuple(entry.get("state") or ()),
        overrides=tuple(entry.get("overrides") or ()), clock=entry.get("clock"),
        gold=_calls(entry.get("gold"), "gold"), critical=_calls(entry.get("critical"), "critical"),
        answers=tuple(str(a) for a in entry.get("answers") or ()),
        distractors=tuple(str(a) for a in entry.get("distractors") or ()), expect=entry.get("expect"))


def _pair(key: str, positive: TaskData, spec: Any, split: str) -> Pair:
    if not isinstance(spec, Mapping) or spec.get("op") not in DELTAS:
        raise DeltaError(f"delta needs op, one of {sorted(DELTAS)}")
    scenario = spec.get("scenario")
    if scenario not in SCENARIOS:
        raise DeltaError(f"scenario must be one of {sorted(SCENARIOS)}, got {scenario!r}")
    operator = DELTAS[spec["op"]]
    phase = SCENARIOS[scenario][1]
    if LOCATION_PHASE[operator.location] != phase:
        raise DeltaError(f"{scenario} is a {phase} scenario but {spec['op']} acts on the {operator.location}, "
                         f"which shows only {LOCATION_PHASE[operator.location]}")
    if not isinstance(spec.get("witness"), Mapping) or len(spec["witness"]) != 1:
        raise DeltaError("delta needs a witness: one of fails, ambiguous, unsatisfiable, unrecoverable, holds, "
                         "divergent")
    params = {k: v for k, v in spec.items() if k not in DELTA_KEYS}
    negative = apply_delta(positive, spec["op"], params)
    make_engine(negative)  # the patch and overrides apply
    if phase == "pre-execution":
        w = 1
    else:
        first = divergence(positive, negative)
        if first is None:
            raise DeltaError("no call of the T+ gold path shows the change; add the lookup that reveals it")
        w = first + 1
    return Pair(key, positive, negative, spec["op"], operator.location, scenario, phase, params,
                dict(spec["witness"]), w, split)


def read_pair_file(sandbox: str, path: Any) -> tuple[list[Pair], list[str]]:
    """Pairs of one file and the problems met (each problem names its pair)."""
    try:
        data = read_yaml(path)
    except Exception as exc:  # noqa: BLE001 - report unreadable files as problems
        return [], [f"{path}: cannot read: {exc}"]
    if not isinstance(data, Mapping) or not isinstance(data.get("pairs"), list):
        return [], [f"{path}: a pair file is {{sandbox, pairs: [...]}}"]
    default = data.get("sandbox", sandbox)
    file_split = data.get("split", "test")  # a generated split file says it once for all its pairs
    pairs, problems, seen = [], [], set()
    for i, entry in enumerate(data["pairs"]):
        name = entry.get("id") if isinstance(entry, Mapping) else None
        where = f"{path.name if hasattr(path, 'name') else path}: pair {name or i}"
        try:
            if not isinstance(entry, Mapping) or not isinstance(name, str) or set(entry) - PAIR_KEYS:
                raise DeltaError(f"a pair is a mapping with an id and keys among {sorted(PAIR_KEYS)}")
            if name in seen:
                raise DeltaError("duplicate id")
            seen.add(name)
            split = entry.get("split", file_split)
            if split not in SPLITS:
                raise DeltaError(f"split must be one of {SPLITS}")
            positive = _positive(entry, default)
            specs = entry.get("deltas") or [entry.get("delta")]
            for j, spec in enumerate(specs):
                suffix = f"#{j + 1}" if len(specs) > 1 else ""
                pairs.append(_pair(f"{default}/{name}{suffix}", positive, spec, split))
        except (DeltaError, PatchError, SpecError, ValueError, KeyError, TypeError) as exc:
            problems.append(f"{where}: {exc}")
    return pairs, problems


def use_sandbox_dirs(path: Path) -> None:
    """Make known the sandboxes a pair file's ``sandbox_dirs`` name (directories relative to the file, written by
    ``abstain-gym gen pairs`` for sandboxes made with ``gen sandbox``), so its pairs run like built-in ones."""
    try:
        data = read_yaml(path)
    except Exception:  # noqa: BLE001 - read_pair_file reports an unreadable file
        return
    dirs = data.get("sandbox_dirs") if isinstance(data, Mapping) else None
    if dirs is None:
        return
    if not isinstance(dirs, list) or not all(isinstance(d, str) for d in dirs):
        raise SpecError(str(path), ["sandbox_dirs is a list of directories (relative to the pair file)"])
    for d in dirs:
        directory = path.parent / d
        if not directory.is_dir():
            raise SpecError(str(path), [f"sandbox_dirs: no such directory {directory}"])
        catalog.add_sandbox_dir(directory)


@cache
def file_pairs(path: str) -> tuple[Pair, ...]:
    """The pairs of one pair file outside the package (e.g. made by ``abstain-gym tools generate``)."""
    if not Path(path).is_file():
        raise FileNotFoundError(f"no pair file {path}")
    use_sandbox_dirs(Path(path))
    pairs, problems = read_pair_file("generated", Path(path))
    if problems:
        raise SpecError(str(path), problems)
    return tuple(sorted(pairs, key=lambda p: digest("pair-order", p.key)))


@cache
def load_pairs() -> tuple[Pair, ...]:
    """Every curated pair (the benchmark: the ``test`` split), cached; raises :class:`SpecError` listing all
    problems. The generated ``train`` / ``val`` pairs are :func:`split_pairs`."""
    pairs, problems = [], []
    for sandbox, path in catalog.pair_files().items():
        found, bad = read_pair_file(sandbox, path)
        pairs.extend(found)
        problems.extend(bad)
    if problems:
        raise SpecError("tool pairs", problems)
    return tuple(sorted(pairs, key=lambda p: digest("pair-order", p.key)))


@cache
def split_pairs(split: str) -> tuple[Pair, ...]:
    """The pairs of a generated split (``train`` or ``val``: ``data/tools/splits/<split>.yaml``, written by
    ``python -m agentabstain_gym.envs.tools.splits``); none for ``test``, which is the curated pairs."""
    path = catalog.DATA_DIR / "splits" / f"{split}.yaml"
    if split == "test" or not path.is_file():
        return ()
    pairs, problems = read_pair_file("generated", path)
    if problems:
        raise SpecError(str(path), problems)
    if any(p.split != split for p in pairs):
        raise SpecError(str(path), [f"every pair of {path.name} must be in the {split} split"])
    return tuple(sorted(pairs, key=lambda p: digest("pair-order", p.key)))


def package_pairs() -> tuple[Pair, ...]:
    """Every built-in pair of every split: the generated train and val pairs, then the curated test pairs."""
    return split_pairs("train") + split_pairs("val") + load_pairs()


# ----- gym tasks ------------------------------------------------------------------------------------------------------
def _task(pair: Pair, negative: bool) -> Task:
    side = pair.negative if negative else pair.positive
    payload: dict[str, Any] = {**side.to_payload(), "variant": side.type, "pair_key": pair.key,
                               "sandbox": pair.sandbox}
    if negative:
        payload["delta"] = {"op": pair.op, "location": pair.location, "phase": pair.phase,
                            "params": json.loads(json.dumps(pair.params)), "witness": dict(pair.witness)}
        if pair.phase == "runtime":
            payload["twin"] = pair.positive.to_payload()
    return Task(task_id=f"tt-{digest('task', pair.key, negative)}", family="tools", instruction=side.instruction,
                should_abstain=negative, category=SCENARIOS[pair.scenario][0] if negative else SOLVABLE_CATEGORY,
                split=pair.split, pair_id=f"tp-{digest('pair', pair.key)}", w=pair.w if negative else None,
                scenario=pair.scenario, evidence=pair.describe() if negative else "", payload=payload)


@cache
def tool_tasks(sandbox: str | None = None, pairs_file: str | None = None) -> tuple[Task, ...]:
    """Both sides of every pair (of one sandbox, or all; of the package or of ``pairs_file``), the sides of each
    pair in a hash-decided order. A sandbox's tasks are the very objects of the full list, so that they find
    their prebuilt :class:`TaskSetup`."""
    if sandbox is not None:
        return tuple(t for t in tool_tasks(None, pairs_file) if sandbox in t.payload["sandboxes"])
    out: list[Task] = []
    for pair in (file_pairs(pairs_file) if pairs_file else package_pairs()):
        first_negative = int(digest("side", pair.key, size=2), 16) % 2 == 1
        out.extend([_task(pair, first_negative), _task(pair, not first_negative)])
    return tuple(out)


def pairs_for(sandbox: str | None = None, pairs_file: str | None = None) -> tuple[Pair, ...]:
    """The pairs of every split (built in, or of ``pairs_file``) that involve ``sandbox`` (None: all)."""
    pairs = file_pairs(pairs_file) if pairs_file else package_pairs()
    return tuple(p for p in pairs if sandbox is None or sandbox in p.positive.sandboxes)


# ----- what reset needs, per task, built for every task at once ---------------------------------------------------
@dataclass(frozen=True)
class TaskSetup:
    """Everything ``reset`` derives from one task, computed once for every task when the setups are built.

    Why: a reset that decoded the payload, replayed the delta's state patch, built the twin's engine or the schema
    list of a reduced inventory only for some tasks took measurably longer on should-abstain tasks, and an agent
    timing ``reset`` could guess the label. With this, every reset does the same steps: look the setup up, make
    one engine, parse the schema text. ``twin`` (runtime T- only) is not used at reset: the env replays the
    episode's calls on it when the episode ends, to find the evidence turn.
    """

    task: Task
    data: TaskData
    main: EngineSetup
    twin: EngineSetup | None
    schemas: str

    @classmethod
    def of(cls, task: Task) -> TaskSetup:
        data = TaskData.from_payload(task.payload)
        main = EngineSetup.of(data)
        twin = task.payload.get("twin")
        return cls(task, data, main, EngineSetup.of(TaskData.from_payload(twin)) if twin else None,
                   schemas_json(main.world.tools[t] for t in data.tools))


@cache
def task_setups(pairs_file: str | None = None) -> Mapping[str, TaskSetup]:
    """Task id -> :class:`TaskSetup` for every task of the built-in pairs (or of ``pairs_file``), all sandboxes,
    built in one go the first time it is asked for, never per task on first use (that too would show in timing)."""
    return MappingProxyType({t.task_id: TaskSetup.of(t) for t in tool_tasks(None, pairs_file)})


def clear_caches() -> None:
    """Forget the pairs, the tasks, their snapshots, setups and schemas (not the sandbox specs), so that the next
    env builds its task list anew: for tests that time what a newly built task list costs."""
    for fn in (load_pairs, split_pairs, file_pairs, tool_tasks, task_snapshot, task_setups):
        fn.cache_clear()
    clear_schema_caches()
