"""Users' own tasks against the store: one from reset options, or many from a JSONL file.

A task is ``{"instruction": str, "should_abstain": bool}`` with optional ``category``, ``w`` (default 2 for
``missing_target``, else 1, on should-abstain tasks), ``goal`` (``product_type``, ``attributes``, ``options``,
``price_upper``: what a purchase is scored against; without it a purchase scores 0), and in files ``task_id``,
``split`` and ``pair_id``. A ``missing_target`` task with a goal hides every product that could earn 1.0 for it.
Errors name the file, the line and the field, because these files are written by hand.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentabstain_gym.core.task import SPLITS, Task
from agentabstain_gym.envs.web.dataset import MISSING_TARGET, SOLVABLE, digest
from agentabstain_gym.envs.web.goals import goal_from_dict, goal_to_dict

CUSTOM_KEYS = ("instruction", "should_abstain", "category", "w", "goal")
FILE_KEYS = (*CUSTOM_KEYS, "task_id", "split", "pair_id")


def custom_task(data: Mapping[str, Any], where: str = "reset options", occurrence: int = 0) -> Task:
    """A task from a user's dict; raises ``ValueError`` naming ``where`` and the field at fault. ``occurrence``
    counts earlier rows of a file with the same default id, so that rows alike still get distinct ids."""
    instruction = data.get("instruction")
    if not isinstance(instruction, str) or not instruction.strip():
        raise ValueError(f"{where}: field 'instruction' must be a non-empty string")
    should_abstain = data.get("should_abstain")
    if not isinstance(should_abstain, bool):
        raise ValueError(f"{where}: field 'should_abstain' must be true or false")
    category = data.get("category")
    if category is None:
        category = "custom_abstain" if should_abstain else SOLVABLE
    if not isinstance(category, str) or not category:
        raise ValueError(f"{where}: field 'category' must be a non-empty string")
    w = data.get("w")
    if should_abstain:
        w = (2 if category == MISSING_TARGET else 1) if w is None else w
        if isinstance(w, bool) or not isinstance(w, int) or w < 1:
            raise ValueError(f"{where}: field 'w' must be a positive integer")
    elif w is not None:
        raise ValueError(f"{where}: field 'w' is only for should-abstain tasks")
    goal = data.get("goal")
    payload: dict[str, Any] = {"variant": "custom"}
    if goal is not None:
        payload["goal"] = goal_to_dict(goal_from_dict(goal, f"{where}: field 'goal'"))
    split = data.get("split", "test")
    if split not in SPLITS:
        raise ValueError(f"{where}: field 'split' must be one of {list(SPLITS)}")
    pair_id = data.get("pair_id")
    if pair_id is not None and not isinstance(pair_id, str):
        raise ValueError(f"{where}: field 'pair_id' must be a string")
    task_id = data.get("task_id")
    if task_id is None:
        key = json.dumps([instruction, should_abstain, category, w, payload.get("goal")], sort_keys=True)
        if occurrence:
            key += f"#{occurrence}"
        task_id = f"ws-custom-{digest('custom', key)}"
    if not isinstance(task_id, str) or not task_id:
        raise ValueError(f"{where}: field 'task_id' must be a non-empty string")
    return Task(task_id=task_id, family="web", instruction=instruction.strip(), should_abstain=should_abstain,
                category=category, split=split, pair_id=pair_id, w=w if should_abstain else None,
                evidence=str(data.get("evidence", "")), payload=payload)


def load_tasks_file(path: str | Path) -> list[Task]:
    """Tasks from a JSONL file, one object per line (blank lines skipped)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"tasks file {path} does not exist")
    tasks: list[Task] = []
    seen: dict[str, int] = {}  # default id -> rows that had it so far
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}: line {lineno}"
        try:
            data = json.loads(line)
        except ValueError as exc:
            raise ValueError(f"{where}: not valid JSON ({exc})") from None
        if not isinstance(data, dict):
            raise ValueError(f"{where}: expected a JSON object")
        unknown = sorted(set(data) - set(FILE_KEYS) - {"evidence"})
        if unknown:
            raise ValueError(f"{where}: unknown field(s) {unknown}; known fields are {list(FILE_KEYS)}")
        task = custom_task(data, where)
        if data.get("task_id") is None:  # rows alike get ids alike: number the repeats
            repeat = seen.get(task.task_id, 0)
            seen[task.task_id] = repeat + 1
            task = custom_task(data, where, occurrence=repeat) if repeat else task
        tasks.append(task)
    if not tasks:
        raise ValueError(f"{path}: no tasks")
    ids = [t.task_id for t in tasks]
    duplicate = next((i for i in ids if ids.count(i) > 1), None)
    if duplicate is not None:
        raise ValueError(f"{path}: task_id {duplicate!r} occurs more than once")
    return tasks
