"""Benchmark fingerprints: one sha256 per task list, so that a changed generator cannot silently change an id.

A fingerprint hashes the canonical form of every task an env can run (id, family, instruction, label, category,
split, pair, ``w``, scenario, evidence text and the family's payload) in task-id order, together with the data that
gives the tasks their meaning (the QA corpus, the web catalogue, the tool sandboxes' records, the terminal task
scripts). Each env computes its own (:attr:`~agentabstain_gym.core.base_env.AbstainEnv.fingerprint`) and writes it
into every episode record; :mod:`agentabstain_gym.fingerprints` pins the registered ids' values.

Examples:
    >>> from agentabstain_gym.core.task import Task
    >>> one = Task("t1", "qa", "Who founded Acme?", False, "answerable")
    >>> two = Task("t2", "qa", "Who is the best?", True, "subjective", w=1)
    >>> fingerprint("qa", [one, two]) == fingerprint("qa", [two, one])  # the order of the list does not matter
    True
    >>> fingerprint("qa", [one, two]) == fingerprint("qa", [one])  # the tasks do
    False
    >>> len(fingerprint("qa", [one]))
    64
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from agentabstain_gym.core.task import Task

#: Bumped when the canonical form itself changes (every fingerprint changes with it).
FINGERPRINT_FORMAT = 1


def _plain(value: Any) -> Any:
    """JSON for the few non-JSON types task payloads and data files hold; anything else is a bug and raises."""
    if isinstance(value, set | frozenset):
        return sorted(value, key=canonical_json)
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, Path):
        return value.as_posix()
    item = getattr(value, "item", None)  # numpy scalars
    if callable(item):
        return item()
    raise TypeError(f"a fingerprint cannot hold a {type(value).__name__}: {value!r:.80}")


def canonical_json(value: Any) -> str:
    """``value`` as one canonical JSON text: sorted keys, no spaces, tuples as lists, sets sorted.

    Examples:
        >>> canonical_json({"b": (1, 2), "a": {3, 1}})
        '{"a":[1,3],"b":[1,2]}'
    """
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False,
                      default=_plain)


def sha256_text(text: str) -> str:
    """sha256 (hex) of ``text`` as UTF-8."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def file_digest(path: str | Path) -> str:
    """sha256 of a file's bytes, read in blocks (data files may be large)."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def folder_digests(folder: str | Path) -> dict[str, str]:
    """Relative path -> sha256 of every file under ``folder`` (sorted; hidden files and caches skipped)."""
    root = Path(folder)
    files = sorted(p for p in root.rglob("*") if p.is_file()
                   and not any(part.startswith(".") or part == "__pycache__" for part in p.relative_to(root).parts))
    return {p.relative_to(root).as_posix(): file_digest(p) for p in files}


def task_entry(task: Task, payload: Any) -> dict[str, Any]:
    """The canonical form of one task: every field, the label included, with ``payload`` as given."""
    return {"task_id": task.task_id, "family": task.family, "instruction": task.instruction,
            "should_abstain": task.should_abstain, "category": task.category, "split": task.split,
            "pair_id": task.pair_id, "w": task.w, "scenario": task.scenario, "evidence": task.evidence,
            "payload": payload}


def fingerprint(family: str, tasks: Iterable[Task], *, data: Any = None,
                payload: Callable[[Task], Any] | None = None) -> str:
    """sha256 (hex) of the canonical task list of ``family`` plus ``data``.

    ``payload`` maps a task to the part of its payload that defines it (default: the whole payload); a family
    drops what depends on the machine (an absolute folder path) there. The hashed text is one header line (format,
    family, data) and then one line per task, the tasks' canonical JSON sorted as text, so the order in which a
    generator lists them does not matter.
    """
    as_payload = payload if payload is not None else (lambda t: t.payload)
    entries = sorted(canonical_json(task_entry(t, as_payload(t))) for t in tasks)
    digest = hashlib.sha256(canonical_json({"format": FINGERPRINT_FORMAT, "family": family, "data": data}).encode())
    for entry in entries:
        digest.update(b"\n" + entry.encode("utf-8"))
    return digest.hexdigest()


def short(value: str | None, size: int = 12) -> str:
    """The first ``size`` hex digits, for tables and messages (the full value is what is compared)."""
    return value[:size] if value else "-"


def differences(expected: Mapping[str, str], actual: Mapping[str, str]) -> list[str]:
    """One line per id whose fingerprint is missing, new or changed (sorted by id)."""
    lines = []
    for env_id in sorted(set(expected) | set(actual)):
        old, new = expected.get(env_id), actual.get(env_id)
        if old != new:
            lines.append(f"{env_id}: {short(old)} -> {short(new)}" if old and new
                         else f"{env_id}: {'not pinned' if new else 'no longer registered'}")
    return lines
