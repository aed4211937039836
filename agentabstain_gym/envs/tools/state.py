"""Sandbox state as collections of records: copy-on-write over a shared snapshot, a journal for rollback, a diff.

A task's initial collections (the sandbox's seed records plus the task's patch) are built once per process and
shared by every episode as a :class:`Snapshot`; an episode's :class:`State` copies a collection only when a commit
first writes to it. Records are never changed in place: a write puts a new dict, so unchanged records stay shared
and reset costs no copying. Snapshots pickle by reference (a builder and its arguments), so pickling an env
mid-episode carries only what the episode changed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

Record = dict[str, Any]
Collections = dict[str, dict[str, Record]]
_EMPTY: dict[str, Record] = {}


class PatchError(ValueError):
    """A JSON-Patch-style operation that does not apply (raised while building tasks, never during an episode)."""


class Snapshot:
    """Immutable initial collections; ``builder(*args)`` rebuilds the same snapshot in another process."""

    __slots__ = ("collections", "builder", "args")

    def __init__(self, collections: Collections, builder: Callable[..., Snapshot] | None = None,
                 args: tuple[Any, ...] = ()) -> None:
        self.collections = collections
        self.builder = builder
        self.args = args

    def __reduce__(self) -> Any:
        if self.builder is not None:
            return (self.builder, self.args)
        return (Snapshot, (self.collections,))


class State:
    """One episode's collections: reads fall through to the snapshot; writes copy the collection once."""

    __slots__ = ("snapshot", "own", "journal")

    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot
        self.own: Collections = {}
        self.journal: list[tuple[str, str, Record | None]] = []

    # ----- reading ----------------------------------------------------------------------------------------------
    def records(self, name: str) -> Mapping[str, Record]:
        """The records of collection ``name``, this episode's copy if it changed them, else the snapshot's."""
        own = self.own.get(name)
        return own if own is not None else self.snapshot.collections.get(name, _EMPTY)

    def get(self, name: str, key: Any) -> Record | None:
        """The record with ``key`` in ``name``, or None (a non-string key finds nothing)."""
        if not isinstance(key, str):
            return None
        return self.records(name).get(key)

    def names(self) -> list[str]:
        """The collection names, sorted."""
        return sorted(self.snapshot.collections)

    # ----- writing ----------------------------------------------------------------------------------------------
    def _writable(self, name: str) -> dict[str, Record]:
        own = self.own.get(name)
        if own is None:
            own = dict(self.snapshot.collections.get(name, _EMPTY))
            self.own[name] = own
        return own

    def put(self, name: str, key: str, record: Record) -> None:
        """Write a record (copying the collection first), journalled for rollback."""
        own = self._writable(name)
        self.journal.append((name, key, own.get(key)))
        own[key] = record

    def remove(self, name: str, key: str) -> None:
        """Remove a record if present, journalled for rollback."""
        own = self._writable(name)
        if key in own:
            self.journal.append((name, key, own.pop(key)))

    def mark(self) -> int:
        """A point to :meth:`rollback` to (a failed commit undoes its partial writes)."""
        return len(self.journal)

    def rollback(self, mark: int) -> None:
        """Undo every write after ``mark`` (used when a call fails half-way)."""
        while len(self.journal) > mark:
            name, key, old = self.journal.pop()
            own = self.own[name]
            if old is None:
                own.pop(key, None)
            else:
                own[key] = old

    # ----- comparing --------------------------------------------------------------------------------------------
    def diff(self) -> dict[str, dict[str, list[str]]]:
        """Keys added, updated and removed per collection, against the snapshot (sorted; empty collections left out)."""
        out: dict[str, dict[str, list[str]]] = {}
        for name in sorted(self.own):
            own, base = self.own[name], self.snapshot.collections.get(name, _EMPTY)
            added = sorted(k for k in own if k not in base)
            removed = sorted(k for k in base if k not in own)
            updated = sorted(k for k in own if k in base and own[k] is not base[k] and own[k] != base[k])
            if added or removed or updated:
                out[name] = {"added": added, "updated": updated, "removed": removed}
        return out

    def changes(self) -> dict[str, dict[str, Record | None]]:
        """Changed records by collection and key (``None`` = removed), for fingerprints and tests."""
        out: dict[str, dict[str, Record | None]] = {}
        for name, d in self.diff().items():
            own = self.own[name]
            out[name] = {k: own.get(k) for k in d["added"] + d["updated"] + d["removed"]}
        return out

    def fingerprint(self) -> str:
        """A canonical string of what the episode changed ('' when nothing): equal fingerprints, equal states."""
        if not self.journal:
            return ""
        changes = self.changes()
        return json.dumps(changes, sort_keys=True, separators=(",", ":")) if changes else ""

    def canonical(self) -> str:
        """The whole state as canonical JSON (slow; for tests and validation)."""
        data = {name: dict(self.records(name)) for name in sorted(set(self.snapshot.collections) | set(self.own))}
        return json.dumps(data, sort_keys=True, separators=(",", ":"))


# ----- JSON-Patch-style operations over collections ---------------------------------------------------------------
PATCH_OPS = ("add", "replace", "remove")


def _unescape(part: str) -> str:
    return part.replace("~1", "/").replace("~0", "~")


def split_pointer(path: Any) -> list[str]:
    """``/collection/key[/field[/index|-]]`` -> its parts (RFC 6901 escapes ``~1`` for ``/`` and ``~0`` for ``~``)."""
    if not isinstance(path, str) or not path.startswith("/"):
        raise PatchError(f"a patch path is '/collection/key[/field[/index]]', got {path!r}")
    parts = [_unescape(p) for p in path[1:].split("/")]
    if len(parts) < 2 or len(parts) > 4 or not all(parts[:3]):
        raise PatchError(f"a patch path is '/collection/key[/field[/index]]', got {path!r}")
    return parts


def apply_patch(collections: Collections, ops: list[Mapping[str, Any]]) -> Collections:
    """A new collections dict with ``ops`` applied; touched collections and records are copied, others shared."""
    out = dict(collections)
    copied: set[str] = set()
    for op in ops:
        if not isinstance(op, Mapping) or op.get("op") not in PATCH_OPS or "path" not in op:
            raise PatchError(f"a patch operation is {{op: add|replace|remove, path, value}}, got {op!r}")
        parts = split_pointer(op["path"])
        name, key = parts[0], parts[1]
        if name not in out:
            raise PatchError(f"patch {op['path']!r}: no collection {name!r}")
        if name not in copied:
            out[name] = dict(out[name])
            copied.add(name)
        coll = out[name]
        kind = op["op"]
        if kind != "remove" and "value" not in op:
            raise PatchError(f"patch {op['path']!r}: '{kind}' needs a value")
        value = op.get("value")
        if len(parts) == 2:
            if kind == "add" and key in coll:
                raise PatchError(f"patch {op['path']!r}: record {key!r} already exists (use replace)")
            if kind in ("replace", "remove") and key not in coll:
                raise PatchError(f"patch {op['path']!r}: no record {key!r}")
            if kind == "remove":
                del coll[key]
            else:
                if not isinstance(value, Mapping):
                    raise PatchError(f"patch {op['path']!r}: a record value must be a mapping")
                coll[key] = json.loads(json.dumps(value))
            continue
        if key not in coll:
            raise PatchError(f"patch {op['path']!r}: no record {key!r}")
        record = dict(coll[key])
        field = parts[2]
        if len(parts) == 3:
            if kind == "remove":
                if field not in record:
                    raise PatchError(f"patch {op['path']!r}: no field {field!r}")
                del record[field]
            elif kind == "replace" and field not in record:
                raise PatchError(f"patch {op['path']!r}: no field {field!r} to replace (use add)")
            else:
                record[field] = json.loads(json.dumps(value))
        else:
            items = record.get(field)
            if not isinstance(items, list):
                raise PatchError(f"patch {op['path']!r}: field {field!r} is not a list")
            items = list(items)
            index = parts[3]
            if index == "-" and kind == "add":
                items.append(json.loads(json.dumps(value)))
            elif index.isdigit() and int(index) < len(items) + (kind == "add"):
                i = int(index)
                if kind == "add":
                    items.insert(i, json.loads(json.dumps(value)))
                elif kind == "replace":
                    items[i] = json.loads(json.dumps(value))
                else:
                    del items[i]
            else:
                raise PatchError(f"patch {op['path']!r}: bad list index {index!r}")
            record[field] = items
        coll[key] = record
    return out
