"""The episode record (docs/design.md, section 5): one JSON object per episode, and its crash-safe JSONL file.

Fields may be added but never renamed: other people's tools parse these files.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

RECORD_FIELDS = (
    "env_id", "family", "task_id", "pair_id", "split", "category", "scenario", "should_abstain", "w", "tau",
    "evidence_turn", "turns", "outcome", "success", "task_reward", "committed", "agent", "seed", "steps",
)


@dataclass
class EpisodeRecord:
    """Everything needed to score an episode and to replay what the agent saw."""

    env_id: str
    family: str
    task_id: str
    pair_id: str | None
    split: str
    category: str
    scenario: str | None
    should_abstain: bool
    w: int | None
    tau: int | None
    evidence_turn: int | None
    turns: int
    outcome: str
    success: bool
    task_reward: float
    committed: bool | None = None
    agent: str | None = None
    seed: int | None = None
    steps: list[dict[str, Any]] = field(default_factory=list)
    max_turns: int | None = None
    delay: int | None = None
    reaction_delay: int | None = None
    extras: dict[str, Any] = field(default_factory=dict)
    #: The task's grace window (should-abstain only; 0 unless the task declares one) and whether the ABSTAIN fell in
    #: it: w <= tau <= w + grace_turns (with 0, the same as AbsRec@1's timely).
    grace_turns: int | None = None
    timely_within_grace: bool | None = None
    #: The env's benchmark fingerprint (sha256 of its task list and data) when the task is one of its listed tasks;
    #: None for a task built from reset options, and absent from files written before fingerprints existed.
    fingerprint: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The record as a plain ``dict``, ready for ``json.dumps``."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> EpisodeRecord:
        """A record from a parsed JSON line; unknown keys are ignored, so files from newer versions still
        load.
        """
        missing = [name for name in RECORD_FIELDS if name not in data and name not in ("committed", "agent", "seed")]
        if missing:
            raise ValueError(f"episode record lacks field(s) {missing}")
        known = {f for f in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in data.items() if k in known})


class AbstentionRecord(Mapping[str, Any]):
    """The read-only episode record an env puts in ``info["abstention"]``: a Mapping, deliberately not a ``dict``.

    Gymnasium's vector envs merge ``info`` key by key and descend into every ``dict``, building one typed array per
    leaf from the first sub-env that has it; a field that is an int in one finished sub-env and ``None`` in another
    (``tau``, ``w``, ``delay``...) then raises. Any other object is stored whole in an object array, so this class
    keeps records intact in ``SyncVectorEnv`` / ``AsyncVectorEnv`` for any mix of finished and running sub-envs.
    ``record["tau"]``, ``.get``, ``in``, ``{**record}``, ``dict(record)`` and ``==`` with a dict work as before; it
    pickles (for sub-processes); ``json.dumps`` needs ``dict(record)`` (the values are plain JSON already).
    """

    __slots__ = ("_data",)

    def __init__(self, data: Mapping[str, Any]) -> None:
        self._data: dict[str, Any] = dict(data)

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._data!r})"

    def __reduce__(self) -> tuple[type[AbstentionRecord], tuple[dict[str, Any]]]:
        return type(self), (self._data,)

    def to_dict(self) -> dict[str, Any]:
        """A plain ``dict`` copy (top level), e.g. for ``json.dumps``."""
        return dict(self._data)


def as_dict(record: EpisodeRecord | Mapping[str, Any]) -> Mapping[str, Any]:
    """A record of any of the three forms (dataclass, ``AbstentionRecord``, mapping) as a mapping."""
    if isinstance(record, EpisodeRecord | AbstentionRecord):
        return record.to_dict()
    return record


def append_records(path: str | os.PathLike[str], records: Iterable[EpisodeRecord | Mapping[str, Any]]) -> None:
    """Append records as whole lines, flushed and fsynced, so a crash loses at most the line being written.

    A file that ends in a partial line (a crash mid-write) is first closed off with a newline, so the next record
    starts on a line of its own and the broken line stays isolated.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(as_dict(r), ensure_ascii=False, sort_keys=True) + "\n" for r in records]
    with open(path, "a+b") as fh:
        fh.seek(0, os.SEEK_END)
        if fh.tell() > 0:
            fh.seek(-1, os.SEEK_END)
            if fh.read(1) != b"\n":
                fh.write(b"\n")
        fh.write("".join(lines).encode("utf-8"))
        fh.flush()
        os.fsync(fh.fileno())


def iter_records(path: str | os.PathLike[str], *, warn: bool = True) -> Iterator[dict[str, Any]]:
    """Yield the records of a JSONL file, skipping (with a warning naming the line) any unreadable line."""
    with open(path, encoding="utf-8", errors="replace") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
                if not isinstance(data, dict):
                    raise ValueError("not a JSON object")
                EpisodeRecord.from_dict(data)
            except ValueError as exc:
                if warn:
                    warnings.warn(f"{path}:{lineno}: skipped unreadable record ({exc})", stacklevel=2)
                continue
            yield data


def read_records(paths: Iterable[str | os.PathLike[str]], *, warn: bool = True) -> list[dict[str, Any]]:
    """Every readable record of ``paths``, in file order (unreadable lines are skipped with a warning)."""
    return [r for p in paths for r in iter_records(p, warn=warn)]
