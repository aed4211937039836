"""Keeping an ``eval --out`` run file safe: a manifest, a lock, and refusing files that are not run files.

A run file is resumed by re-running the same command, so it must never silently mix two runs. Next to
``runs.jsonl`` a sidecar ``runs.jsonl.manifest.json`` records what the run is (env ids, agents, split, seed,
episodes, package version, a fingerprint of each env's planned tasks). A sidecar, not a first line, so the JSONL
stays one record per line for every existing reader. Resuming needs a matching manifest; a file written before
manifests existed is adopted only if every record in it belongs to the planned run. While ``eval`` writes, it holds
a non-blocking ``flock`` on the run file itself, so a second ``eval`` on the same file fails at once.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any

from agentabstain_gym.core.record import EpisodeRecord, append_records

MANIFEST_SUFFIX = ".manifest.json"
MANIFEST_FORMAT = 1

#: Manifest keys in the order differences are reported, with how to name them to the user.
_OPTION_NAMES = {"split": "--split", "seed": "--seed", "episodes": "--episodes", "env_ids": "env ids",
                 "agents": "--agent", "env_kwargs": "--pairs", "package_version": "agentabstain-gym"}


class RunFileError(Exception):
    """A run file that cannot be used as asked: one line for the user, exit code 2."""


def manifest_path(out: str | os.PathLike[str]) -> Path:
    """The manifest beside a run file: ``runs.jsonl`` -> ``runs.jsonl.manifest.json``."""
    return Path(str(out) + MANIFEST_SUFFIX)


def data_fingerprint(tasks: Iterable[Any]) -> str:
    """sha256 of the sorted (task id, instruction) pairs, so a changed dataset is not resumed as if the same."""
    items = sorted((str(t.task_id), str(t.instruction)) for t in tasks)
    return hashlib.sha256(json.dumps(items, ensure_ascii=False).encode("utf-8")).hexdigest()


def build_manifest(*, env_ids: list[str], agents: list[str], split: str | None, seed: int, episodes: int | None,
                   env_kwargs: Mapping[str, Any], fingerprints: Mapping[str, str]) -> dict[str, Any]:
    """The run's identity: everything that decides which records belong in the file."""
    import agentabstain_gym

    return {"format": MANIFEST_FORMAT, "env_ids": sorted(env_ids), "agents": sorted(agents), "split": split,
            "seed": seed, "episodes": episodes, "env_kwargs": json.loads(json.dumps(env_kwargs, sort_keys=True)),
            "package_version": agentabstain_gym.__version__, "data": dict(sorted(fingerprints.items()))}


def manifest_difference(old: Mapping[str, Any], new: Mapping[str, Any], name: str) -> str | None:
    """A one-line description of the first difference that matters, or None when the runs are the same."""
    for key, option in _OPTION_NAMES.items():
        if old.get(key) != new.get(key):
            if key in ("env_ids", "agents", "env_kwargs"):
                return f"{name} was written with other {option} ({_short(old.get(key))}, not {_short(new.get(key))})"
            return f"{name} was written with {option} {_short(old.get(key))}, not {_short(new.get(key))}"
    old_data, new_data = old.get("data") or {}, new.get("data") or {}
    for env_id in sorted(set(old_data) | set(new_data)):
        if old_data.get(env_id) != new_data.get(env_id):
            return f"{name} was written with other task data for {env_id} (the dataset or the task sample changed)"
    return None


def _short(value: Any) -> str:
    if isinstance(value, list):
        return ",".join(map(str, value)) or "none"
    if isinstance(value, dict):
        return json.dumps(value, sort_keys=True)[:80]
    return str(value)


def _first_line(path: Path) -> str | None:
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            if line.strip():
                return line
    return None


def check_out(out: str | os.PathLike[str]) -> None:
    """Refuse an ``--out`` that is a directory, or an existing file that is not a run file (e.g. README.md)."""
    path = Path(out)
    if path.is_dir():
        raise RunFileError(f"--out {out} is a directory; give a file name such as {Path(out) / 'runs.jsonl'}")
    if not path.exists() or manifest_path(path).exists():
        return
    if not path.is_file():
        raise RunFileError(f"--out {out} is not a regular file")
    try:
        line = _first_line(path)
    except OSError as exc:
        raise RunFileError(f"cannot read --out {out}: {exc.strerror or exc}") from None
    if line is None:
        return
    try:
        data = json.loads(line)
        if not isinstance(data, dict):
            raise ValueError("not an object")
        EpisodeRecord.from_dict(data)
    except ValueError:
        raise RunFileError(f"--out {out} exists and is not a run file (its first line is not an episode record); "
                           "give another --out") from None


def _record_key(rec: Mapping[str, Any]) -> tuple[Any, Any, Any, Any]:
    return (rec.get("env_id"), rec.get("agent_spec") or rec.get("agent"), rec.get("task_id"), rec.get("seed"))


class RunFile:
    """An open, locked run file. Use :func:`open_run_file`; :meth:`append` writes one record."""

    def __init__(self, path: Path, handle: IO[bytes], recorded: int) -> None:
        self.path = path
        self._handle = handle
        self.recorded = recorded  # records in the file, old and new

    def append(self, record: Mapping[str, Any]) -> None:
        """Append one record; a full or read-only disk becomes one line saying how much was recorded."""
        self.append_many([record])

    def append_many(self, records: list[Mapping[str, Any]]) -> None:
        """Append records that arrived together, with one flush and fsync (each still a whole line)."""
        try:
            append_records(self.path, records)
        except OSError as exc:
            raise RunFileError(f"cannot write {self.path}: {exc.strerror or exc}; {self.recorded} episode(s) are "
                               "recorded there, re-run the same command to resume") from None
        self.recorded += len(records)

    def close(self) -> None:
        """Release the lock and close the file."""
        with contextlib.suppress(OSError):
            fcntl.flock(self._handle.fileno(), fcntl.LOCK_UN)
        self._handle.close()


def _count_records(path: Path) -> int:
    from agentabstain_gym.core.record import iter_records

    return sum(1 for _ in iter_records(path, warn=False)) if path.exists() else 0


def _write_manifest(path: Path, manifest: Mapping[str, Any]) -> None:
    """Write the sidecar atomically (temporary file, then rename), so a crash never leaves half a manifest."""
    target = manifest_path(path)
    tmp = target.with_name(target.name + ".tmp")
    try:
        tmp.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        os.replace(tmp, target)
    except OSError as exc:
        raise RunFileError(f"cannot write {target}: {exc.strerror or exc}") from None


@contextlib.contextmanager
def locked(out: str | os.PathLike[str]) -> Iterator[IO[bytes]]:
    """Hold the run file's lock (taken before anything else, planning included); raises :class:`RunFileError`
    at once when another process holds it or when ``out`` is not a run file."""
    path = Path(out)
    check_out(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle = open(path, "ab")  # noqa: SIM115 - held open for the lock's lifetime; creates no content
    except OSError as exc:
        raise RunFileError(f"cannot open --out {out}: {exc.strerror or exc}") from None
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        raise RunFileError(f"{out} is in use by another abstain-gym eval; wait for it or give another --out") from None
    try:
        yield handle
    finally:
        with contextlib.suppress(OSError):
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
        handle.close()


@contextlib.contextmanager
def open_run_file(out: str | os.PathLike[str], manifest: Mapping[str, Any], planned_keys: set[tuple[Any, ...]], *,
                  force_new: bool = False, say: Any = None) -> Iterator[RunFile]:
    """Lock ``out`` and check it belongs to this run (or start it afresh with ``force_new``).

    Raises :class:`RunFileError` when another process holds the lock, when ``out`` is not a run file, or when its
    manifest (or, for a file without one, its records) says it was written by a different run.
    """
    with locked(out) as handle:
        yield adopt(out, handle, manifest, planned_keys, force_new=force_new, say=say)


def adopt(out: str | os.PathLike[str], handle: IO[bytes], manifest: Mapping[str, Any],
          planned_keys: set[tuple[Any, ...]], *, force_new: bool = False, say: Any = None) -> RunFile:
    """The locked file ``out`` as this run's :class:`RunFile`, once its manifest matches (see :func:`open_run_file`)."""
    path = Path(out)
    name = path.name
    mpath = manifest_path(path)
    if force_new:
        dropped = _count_records(path)
        try:
            handle.truncate(0)
        except OSError as exc:
            raise RunFileError(f"cannot empty {out} for --force-new: {exc.strerror or exc}") from None
        _write_manifest(path, manifest)
        if say is not None and (dropped or mpath.exists()):
            say(f"{out}: --force-new: started a new run file ({dropped} old record(s) discarded)")
    elif mpath.exists() and _count_records(path) == 0:  # a stale sidecar of a deleted or empty file
        _write_manifest(path, manifest)
    elif mpath.exists():
        try:
            old = json.loads(mpath.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            raise RunFileError(f"{mpath} is unreadable; use another --out or --force-new") from None
        diff = manifest_difference(old, manifest, name)
        if diff is not None:
            raise RunFileError(f"{diff}; use another --out or --force-new")
    else:  # a file from before manifests, or a new one: adopt it only if every record is of this run
        from agentabstain_gym.core.record import iter_records

        for rec in iter_records(path, warn=False):
            if _record_key(rec) not in planned_keys:
                raise RunFileError(
                    f"{name} holds episodes of another run ({rec.get('env_id')} {rec.get('agent')} task "
                    f"{rec.get('task_id')} is not in this run's plan: another --seed, --split, --episodes or "
                    "agent?); use another --out or --force-new")
        _write_manifest(path, manifest)
    return RunFile(path, handle, _count_records(path))


def manifest_for(config: Any, episodes: Iterable[Any]) -> dict[str, Any]:
    """The manifest of an ``EvalConfig`` and its planned episodes (fingerprinting the planned tasks per env)."""
    import gymnasium as gym

    planned: dict[str, set[str]] = {}
    for e in episodes:
        planned.setdefault(e.env_id, set()).add(e.task_id)
    fingerprints = {}
    for env_id in config.env_ids:
        env = gym.make(env_id, **config.env_kwargs.get(env_id, {}))
        try:
            tasks = [t for t in env.unwrapped.tasks(split=config.split) if t.task_id in planned.get(env_id, ())]
        finally:
            env.close()
        fingerprints[env_id] = data_fingerprint(tasks)
    return build_manifest(env_ids=list(config.env_ids), agents=list(config.agents), split=config.split,
                          seed=config.seed, episodes=config.episodes, env_kwargs=config.env_kwargs,
                          fingerprints=fingerprints)
