"""The terminal family's task set from a folder: our own task folders and Terminal-Bench folders side by side,
with an abstention overlay laid over both, as :class:`~agentabstain_gym.core.task.Task` records.

A Terminal-Bench task needs only its original variant; every other variant comes from the overlay (or not at all).
Ids are opaque hashes of (base, variant) as for our own tasks; every variant of a base shares its ``pair_id`` and
split. :func:`runnable` says which tasks a backend can run here and why the others cannot.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from agentabstain_gym.core.task import Task
from agentabstain_gym.envs.terminal.native.folders import NativeSpec, load_native, task_folders
from agentabstain_gym.envs.terminal.native.overlay import OverlayRow, read_overlay
from agentabstain_gym.envs.terminal.tasks import _EVIDENCE_SENTENCES, _hex, _splits, load_tasks

#: Turn budget of a Terminal-Bench task (its own limit is time: ``max_agent_timeout_sec``).
NATIVE_MAX_TURNS = 50


_SIGNATURE_FILES = ("task.json", "task.yaml", "task.toml", "instruction.md", "Dockerfile", "docker-compose.yaml",
                    "run-tests.sh", "solution.sh", "solution.yaml", "environment/Dockerfile", "tests/test.sh")


def signature(root: Path) -> tuple[tuple[str, int], ...]:
    """Modification times of a folder, its subfolders and their task files: a cache key that changes when a task
    folder is added, removed or edited."""
    out = []
    for folder in [root, *sorted(p for p in root.iterdir() if p.is_dir())] if root.is_dir() else []:
        for path in (folder, *(folder / name for name in _SIGNATURE_FILES)):
            try:
                out.append((str(path), path.stat().st_mtime_ns))
            except OSError:
                continue
    return tuple(out)


def spec_of(folder: str) -> NativeSpec:
    """The parsed Terminal-Bench folder (cached until one of its files changes: the env looks it up at every
    reset)."""
    return _spec(folder, signature(Path(folder)))


@lru_cache(maxsize=256)
def _spec(folder: str, _signature: tuple[tuple[str, int], ...]) -> NativeSpec:
    return load_native(Path(folder))


def _native_task(spec: NativeSpec, split: str) -> Task:
    return Task(
        task_id="term-" + _hex(f"{spec.name}\0original"), family="terminal", instruction=spec.instruction,
        should_abstain=False, category="original", split=split, pair_id="tpair-" + _hex("pair:" + spec.name),
        payload={"folder": str(spec.folder), "base_id": spec.name, "variant": "original", "native": spec.layout,
                 "skill": spec.category or "terminal-bench", "limits": {"max_turns": NATIVE_MAX_TURNS},
                 "evidence": None, "probe": None, "requires": [], "edits": None})


def _variant(base: Task, row: OverlayRow) -> Task:
    payload: dict[str, Any] = {**base.payload, "variant": row.category, "edits": row.edits,
                               "evidence": row.evidence_regex, "probe": None,
                               "setup_variant": base.payload.get("setup_variant", "original"),
                               "overlay": {"variant": row.variant, "task_name": row.name, "timing": row.timing,
                                           "trigger_style": row.trigger_style}}
    if row.task_dir is not None:
        spec = spec_of(str(row.task_dir))
        payload.update(folder=str(spec.folder), native=spec.layout)
    if row.should_abstain and row.timing is None:
        evidence = _EVIDENCE_SENTENCES.get(row.category, "")
    else:
        evidence = row.trigger_evidence or ""
    instruction = row.instruction or base.instruction
    return dataclasses.replace(
        base, task_id="term-" + _hex(f"{base.payload['base_id']}\0overlay\0{row.variant}"), instruction=instruction,
        should_abstain=row.should_abstain, category=row.category, w=row.w if row.should_abstain else None,
        grace_turns=row.grace if row.should_abstain else None, evidence=evidence, payload=payload)


def load_task_set(root: str, overlay: str | None = None) -> tuple[Task, ...]:
    """Every task under ``root`` (our folders and Terminal-Bench folders), plus the overlay's variants, sorted by
    id. ``ValueError`` (one line per problem) for an unreadable folder, a duplicate base name or an overlay row
    naming no task. Cached until a folder or the overlay changes."""
    overlay_stamp = Path(overlay).stat().st_mtime_ns if overlay is not None and Path(overlay).is_file() else None
    return _task_set(root, overlay, signature(Path(root)), overlay_stamp)


@lru_cache(maxsize=16)
def _task_set(root: str, overlay: str | None, _signature: object, _overlay_stamp: object) -> tuple[Task, ...]:
    root_path = Path(root)
    ours = list(load_tasks(root_path)) if any(root_path.glob("*/task.json")) else []
    specs = []
    for folder in task_folders(root_path):
        try:
            specs.append(spec_of(str(folder.resolve())))
        except ValueError as exc:
            raise ValueError(f"Terminal-Bench task folder {folder}: {exc}") from None
    names = [s.name for s in specs]
    clash = sorted({n for n in names if names.count(n) > 1} | ({t.payload["base_id"] for t in ours} & set(names)))
    if clash:
        raise ValueError(f"task names appear twice under {root}: {', '.join(clash)}")
    splits = _splits(names)
    tasks = ours + [_native_task(s, splits[s.name]) for s in specs]
    if overlay is not None:
        bases = {t.payload["base_id"]: t for t in tasks if t.category == "original"}
        for row in read_overlay(overlay):
            base = bases.get(row.base)
            if base is None:
                raise ValueError(f"{Path(overlay).name}:{row.line}: no task named {row.base!r} under {root}")
            tasks.append(_variant(base, row))
    return tuple(sorted(tasks, key=lambda t: t.task_id))


def runnable(tasks: Sequence[Task], backend: str) -> tuple[list[Task], dict[str, list[str]]]:
    """(the tasks ``backend`` can run here, {Terminal-Bench task name: why not} for the rest). Our own tasks
    always run; a Terminal-Bench task runs where :mod:`.compat` finds nothing missing."""
    keep: list[Task] = []
    skipped: dict[str, list[str]] = {}
    for task in tasks:
        if not task.payload.get("native"):
            keep.append(task)
            continue
        reasons = _reasons(task.payload["folder"], backend)
        if reasons:
            skipped.setdefault(task.payload["base_id"], reasons)
        else:
            keep.append(task)
    return keep, skipped


def _reasons(folder: str, backend: str) -> list[str]:
    from agentabstain_gym.envs.terminal.native.compat import docker_reasons, host_reasons

    spec = spec_of(folder)
    if backend in ("bwrap", "unshare"):
        return host_reasons(spec)
    if backend == "docker":
        return docker_reasons(spec)
    return [f"the {backend} backend cannot give a task its own working directory; use bwrap, unshare or docker"]
