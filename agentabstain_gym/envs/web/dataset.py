"""AbstainWebShop-v1's task set: a catalogue, solvable goals, and an abstain twin for each goal.

The default mirrors the paper: 500 solvable goals; 249 of them get a request-based rewrite (83 subjective, 83
underspecified intent, 83 false premise or contradiction; w = 1); the other 251 get a Missing Target twin (w = 2)
whose catalogue view hides *every* product that could earn reward 1.0 for the goal. Twins share a ``pair_id``;
splits (60/20/20) are drawn per pair, so no source goal is in two splits. :func:`build_dataset` is cached, so every
env of a process over the same arguments shares one catalogue, one task list and one search index.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from agentabstain_gym.core.task import Task
from agentabstain_gym.envs.web.catalogue import (
    DEFAULT_PRODUCTS,
    Catalogue,
    GeneratedCatalogue,
    generated_catalogue,
)
from agentabstain_gym.envs.web.goals import GoalSpec, goal_from_dict, goal_to_dict, make_goals
from agentabstain_gym.envs.web.matching import Goal
from agentabstain_gym.envs.web.rewrites import REWRITE_KINDS, authored, authored_rewrites, rewrite, slot_key
from agentabstain_gym.envs.web.vocab import ProductType, type_by_name

SOLVABLE = "solvable"
MISSING_TARGET = "missing_target"
CATEGORIES = (SOLVABLE, *REWRITE_KINDS, MISSING_TARGET)
#: The paper's shares: 249 of 500 goals get a request-based rewrite, the other 251 a Missing Target twin.
REWRITE_SHARE = 249 / 500
SPLIT_SHARES = {"train": 0.6, "val": 0.2, "test": 0.2}
#: What a Missing Target episode hides: ``strict`` every product that could earn 1.0 for the goal; ``paper`` only the
#: target product (the paper's release removed the one ASIN a goal was written for, other matches stayed).
MISSING_TARGET_MODES = ("strict", "paper")


def check_mode(mode: object) -> str:
    if mode not in MISSING_TARGET_MODES:
        raise ValueError(f"missing_target must be one of {list(MISSING_TARGET_MODES)}, got {mode!r}")
    return str(mode)


def digest(*parts: object) -> str:
    return hashlib.sha256(":".join(map(str, parts)).encode()).hexdigest()[:10]


@dataclass(frozen=True)
class Derived:
    """What an episode needs beyond the task record: the goal a purchase is scored against and the positions the
    catalogue view leaves out (non-empty only for Missing Target)."""

    goal: Goal | None
    hidden: frozenset[int]


def goal_key(task: Task) -> str:
    """A task's goal as canonical JSON: what derived state depends on (never the task id, which two task files
    may give to different goals)."""
    return json.dumps(task.payload.get("goal"), sort_keys=True)


class WebDataset:
    """A catalogue and its tasks. ``goal(task)`` is the goal a purchase is scored against (None for custom tasks
    without one); ``hidden(task)`` the positions a Missing Target episode's catalogue view leaves out.

    Both are computed for every task here, when the dataset is built, not at a task's first reset: a hidden set
    costs a catalogue scan, and work done lazily at the first reset of Missing Target tasks only made that reset
    measurably slower (a timing agent told them from their twins at AUC 0.99). Tasks from elsewhere (a tasks file,
    reset options) go through :meth:`derive`, which caches by goal content on this dataset, never by task id.
    """

    def __init__(self, catalogue: Catalogue, tasks: Sequence[Task], seed: int = 0,
                 missing_target: str = "strict") -> None:
        self.catalogue = catalogue
        self.tasks = tuple(tasks)
        self.seed = seed
        self.missing_target = check_mode(missing_target)
        self._by_id = {t.task_id: t for t in self.tasks}
        if len(self._by_id) != len(self.tasks):
            raise ValueError("task ids are not unique")
        self._satisfying: dict[str, frozenset[int]] = {}
        self._derived: dict[str, Derived] = {t.task_id: self._derive(t, scan_all=False) for t in self.tasks}

    def documents(self) -> Sequence[str]:
        return self.catalogue.documents()

    def task(self, task_id: str) -> Task:
        return self._by_id[task_id]

    def _satisfy(self, key: str, goal: Goal) -> frozenset[int]:
        if key not in self._satisfying:
            self._satisfying[key] = frozenset(int(i) for i in self.catalogue.satisfying(goal))
        return self._satisfying[key]

    def _derive(self, task: Task, scan_all: bool) -> Derived:
        """``scan_all``: scan the catalogue for every task with a goal, whatever its category, so that deriving
        at a reset costs the same for a Missing Target task and its twin (own tasks are derived here, in the
        constructor, where only Missing Target needs the scan)."""
        data = task.payload.get("goal")
        if not data:
            return Derived(None, frozenset())
        goal = goal_from_dict(data)
        if task.category != MISSING_TARGET and not scan_all:
            return Derived(goal, frozenset())
        satisfying = self._satisfy(goal_key(task), goal)
        if task.category != MISSING_TARGET:
            return Derived(goal, frozenset())
        if self.missing_target == "strict":
            return Derived(goal, satisfying)
        return Derived(goal, self._target(task, satisfying))

    def _target(self, task: Task, satisfying: frozenset[int]) -> frozenset[int]:
        """``paper`` mode: the product the goal was written for (its ``source_asin``), else the first that earns
        1.0 for it, else nothing."""
        asin = task.payload.get("source_asin")
        index = self.catalogue.index_of(asin) if isinstance(asin, str) else None
        if index is not None:
            return frozenset({index})
        return frozenset({min(satisfying)}) if satisfying else frozenset()

    def derive(self, task: Task) -> Derived:
        """Goal and hidden set of ``task``: precomputed for this dataset's own tasks (checked by identity, so a
        foreign task that reuses an id is not mistaken for one), computed from the goal for any other task."""
        if self._by_id.get(task.task_id) is task:
            return self._derived[task.task_id]
        return self._derive(task, scan_all=True)

    def goal(self, task: Task) -> Goal | None:
        return self.derive(task).goal

    def hidden(self, task: Task) -> frozenset[int]:
        """Missing Target: every product that could earn 1.0 for the goal (empty for every other category)."""
        return self.derive(task).hidden

    def canonical(self) -> str:
        tasks = [[t.task_id, t.instruction, t.should_abstain, t.category, t.split, t.pair_id, t.w, t.evidence,
                  t.payload] for t in self.tasks]
        mode = {"missing_target": self.missing_target} if self.missing_target != "strict" else {}
        return json.dumps({"seed": self.seed, "n": len(self.catalogue), "tasks": tasks, **mode}, sort_keys=True)

    def fingerprint(self) -> str:
        return hashlib.sha256(self.canonical().encode()).hexdigest()

    def __repr__(self) -> str:
        return f"WebDataset({self.catalogue.name}, products={len(self.catalogue)}, tasks={len(self.tasks)})"


def _assign_splits(n_pairs: int, rng: np.random.Generator) -> list[str]:
    order = rng.permutation(n_pairs)
    n_train = round(n_pairs * SPLIT_SHARES["train"])
    n_val = round(n_pairs * SPLIT_SHARES["val"])
    out = [""] * n_pairs
    for rank, i in enumerate(order):
        out[int(i)] = "train" if rank < n_train else "val" if rank < n_train + n_val else "test"
    return out


def make_tasks(catalogue: Catalogue, goals: list[GoalSpec], seed: int,
               ptype_of: Callable[[GoalSpec], ProductType] | None = None,
               written: Mapping[str, Mapping[str, str]] | None = None) -> list[Task]:
    """Each goal as a solvable task plus its twin; the tasks come in a seeded shuffled order with opaque ids.
    ``ptype_of`` gives the product type a rewrite talks about (default: the generated type of that name);
    ``written``: authored rewrite texts by :func:`slot_key` (a slot without one is generated). Each slot's
    generator has its own seeded stream, so authored texts change no other task."""
    rng = np.random.default_rng([seed, 0x7A5C])
    n = len(goals)
    per_kind = int(round(n * REWRITE_SHARE)) // len(REWRITE_KINDS)
    order = rng.permutation(n)
    kind_of = {int(i): REWRITE_KINDS[rank // per_kind] for rank, i in enumerate(order[: per_kind * 3])}
    splits = _assign_splits(n, rng)
    sides: list[dict[str, Any]] = []
    for i, spec in enumerate(goals):
        if ptype_of is not None:
            ptype = ptype_of(spec)
        elif isinstance(catalogue, GeneratedCatalogue):  # its own vocabulary, shipped or not
            ptype = catalogue.ptype(spec.source)
        else:
            ptype = type_by_name()[spec.goal.product_type]
        pair_id = f"wp-{digest('webpair', seed, i)}"
        base = {"goal": goal_to_dict(spec.goal), "source_asin": catalogue.product(spec.source).asin}
        common = {"split": splits[i], "pair_id": pair_id}
        sides.append({**common, "instruction": spec.instruction, "should_abstain": False, "category": SOLVABLE,
                      "w": None, "evidence": "", "payload": {**base, "variant": "original"}})
        kind = kind_of.get(i)
        if kind is not None:
            entry = (written or {}).get(slot_key(spec.goal, kind))
            if entry is not None:
                rw = authored(entry, kind)
            else:
                turn = sum(1 for j in range(i) if kind_of.get(j) == kind)
                rw = rewrite(kind, spec.goal, ptype, np.random.default_rng([seed, 0x2E17, i]), turn)
            sides.append({**common, "instruction": rw.instruction, "should_abstain": True, "category": kind,
                          "w": 1, "evidence": rw.evidence,
                          "payload": {**base, "variant": "rewrite", "form": rw.form}})
        else:
            sides.append({**common, "instruction": spec.instruction, "should_abstain": True,
                          "category": MISSING_TARGET, "w": 2,
                          "evidence": "no product in this store can meet every requirement; a search shows it",
                          "payload": {**base, "variant": "missing_target"}})
    tasks = []
    for position, k in enumerate(rng.permutation(len(sides))):
        side = sides[int(k)]
        tasks.append(Task(task_id=f"ws-{digest('webtask', seed, position)}", family="web", **side))
    return tasks


def build_dataset(seed: int = 0, n_products: int = DEFAULT_PRODUCTS, n_goals: int = 500,
                  missing_target: str = "strict") -> WebDataset:
    """Catalogue and ``2 * n_goals`` tasks for ``seed`` (cached: the same object for the same arguments, however
    they are passed)."""
    return _build_dataset(int(seed), int(n_products), int(n_goals), check_mode(missing_target))


build_dataset.cache_clear = lambda: _build_dataset.cache_clear()  # type: ignore[attr-defined]


@lru_cache(maxsize=4)
def _build_dataset(seed: int, n_products: int, n_goals: int, missing_target: str) -> WebDataset:
    if n_goals < 3:
        raise ValueError(f"n_goals must be at least 3 (one per rewrite kind), got {n_goals}")
    if missing_target != "strict":  # the same tasks; only what Missing Target hides differs
        strict = build_dataset(seed, n_products, n_goals)
        return WebDataset(strict.catalogue, strict.tasks, seed=seed, missing_target=missing_target)
    catalogue = generated_catalogue(seed, n_products)
    goals = make_goals(catalogue, seed, n_goals)
    written = authored_rewrites(seed, n_products, n_goals)
    return WebDataset(catalogue, make_tasks(catalogue, goals, seed, written=written), seed=seed)
