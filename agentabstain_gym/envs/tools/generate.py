"""Declarative generation of seed records, so a sandbox can hold hundreds of realistic records in a few lines.

A collection's ``generate`` block makes ``count`` records whose fields come from small generators (``pick``,
``cycle``, ``sample``, ``int``, ``datetime``, ``after``, ``format`` ...). Choices are drawn from a hash of
(sandbox, collection, record number, field), never from a global random state, so the same spec gives the same
records in every process and adding one field does not reshuffle the others.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any

from agentabstain_gym.envs.tools.predicates import PredicateError, compile_predicate

GENERATORS = ("value", "pick", "cycle", "sample", "pick_from", "int", "number", "bool", "date", "datetime", "after",
              "format")
_FIELD_REF = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)(?::([^{}]*))?\}")


class GenerateError(ValueError):
    """A malformed ``generate`` block."""


def _unit(*parts: Any) -> float:
    digest = hashlib.blake2b("\x1f".join(map(str, parts)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


def _pick(items: list[Any], *salt: Any) -> Any:
    return items[int(_unit(*salt) * len(items))]


def fill_template(template: str, values: Mapping[str, Any]) -> str:
    """``{name}`` / ``{name:04d}`` from ``values``; no attribute or index access (this is not ``str.format``)."""

    def sub(m: re.Match[str]) -> str:
        if m.group(1) not in values:
            raise GenerateError(f"template {template!r}: no field {m.group(1)!r} (yet)")
        value = values[m.group(1)]
        try:
            return format(value, m.group(2) or "")
        except (ValueError, TypeError) as exc:
            raise GenerateError(f"template {template!r}: {exc}") from None

    return _FIELD_REF.sub(sub, template)


def _k(spec: Any, salt: tuple[Any, ...], size: int) -> int:
    if isinstance(spec, int):
        return min(spec, size)
    if isinstance(spec, list) and len(spec) == 2 and all(isinstance(v, int) for v in spec):
        lo, hi = spec
        return min(size, lo + int(_unit(*salt, "k") * (hi - lo + 1)))
    raise GenerateError(f"k is an integer or [min, max], got {spec!r}")


def _moments(spec: Mapping[str, Any], with_time: bool) -> _Moments:
    key = (json.dumps(spec, sort_keys=True, default=str), with_time)
    if key not in _MOMENTS:
        _MOMENTS[key] = _Moments(spec, with_time)
    return _MOMENTS[key]


class _Moments:
    """The dates (or date-times) a ``date`` / ``datetime`` generator draws from, in order, computed by index: a
    600-day, minute-step range has 864,000 of them and only a few are ever drawn."""

    def __init__(self, spec: Mapping[str, Any], with_time: bool) -> None:
        start = dt.date.fromisoformat(str(spec["from"])[:10])
        weekdays = bool(spec.get("weekdays", False))
        dates = [start + dt.timedelta(days=i) for i in range(int(spec.get("days", 30)))]
        self.dates = [d.isoformat() for d in dates if not weekdays or d.weekday() < 5]
        self.times: list[str] | None = None
        if with_time:
            lo, hi = spec.get("hours", [9, 17])
            self.times = [f"T{h:02d}:{m:02d}" for h in range(lo, hi) for m in range(0, 60, int(spec.get("step", 30)))]

    def __len__(self) -> int:
        return len(self.dates) * (len(self.times) if self.times is not None else 1)

    def __getitem__(self, i: int) -> str:
        if self.times is None:
            return self.dates[i]
        day, moment = divmod(i, len(self.times))
        return self.dates[day] + self.times[moment]


_MOMENTS: dict[tuple[str, bool], _Moments] = {}


def _value(gen: Any, record: dict[str, Any], salt: tuple[Any, ...], done: Mapping[str, list[dict[str, Any]]]) -> Any:
    if not isinstance(gen, Mapping) or len(set(gen) & set(GENERATORS)) != 1:
        raise GenerateError(f"a field generator has exactly one of {GENERATORS}, got {gen!r}")
    kind = next(k for k in gen if k in GENERATORS)
    arg = gen[kind]
    if kind == "value":
        out: Any = arg
    elif kind == "pick":
        out = _pick(list(arg), *salt)
    elif kind == "cycle":
        out = arg[salt[2] % len(arg)]
    elif kind in ("sample", "pick_from"):
        pool = _pool(arg, done)
        if kind == "pick_from":
            out = _pick(pool, *salt)
        else:
            ranked = sorted(pool, key=lambda v: _unit(*salt, v))
            out = ranked[: _k(gen.get("k", 1), salt, len(ranked))]
            also = [v for v in gen.get("also", []) if v not in out]  # values every record gets
            out = also + out
            if gen.get("sorted", False):
                out = sorted(out)
    elif kind == "int":
        lo, hi = arg
        out = lo + int(_unit(*salt) * (hi - lo + 1))
    elif kind == "number":
        lo, hi = arg
        out = round(lo + _unit(*salt) * (hi - lo), int(gen.get("decimals", 2)))
    elif kind == "bool":
        out = _unit(*salt) < float(arg)
    elif kind in ("date", "datetime"):
        out = _pick(_moments(arg, kind == "datetime"), *salt)
    elif kind == "after":
        base = record.get(arg)
        if not isinstance(base, str):
            raise GenerateError(f"'after: {arg}' needs an earlier datetime field {arg!r}")
        minutes = gen.get("minutes", 30)
        minutes = _pick(minutes, *salt) if isinstance(minutes, list) else int(minutes)
        out = (dt.datetime.fromisoformat(base) + dt.timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M")
    else:
        out = fill_template(str(arg), record)
    if gen.get("lower") and isinstance(out, str):
        out = out.lower()
    return out


def _pool(arg: Any, done: Mapping[str, list[dict[str, Any]]]) -> list[Any]:
    if isinstance(arg, list):
        return list(arg)
    if isinstance(arg, Mapping) and arg.get("collection") in done and isinstance(arg.get("field"), str):
        where = compile_predicate(arg.get("where", True))
        pool = [r.get(arg["field"]) for r in done[arg["collection"]] if where({"record": r})]
        pool = [v for v in pool if v is not None]
        if not pool:
            raise GenerateError(f"no values to draw from {dict(arg)!r}")
        return pool
    raise GenerateError(f"draw from a list or {{collection, field[, where]}} of an earlier collection, got {arg!r}")


def generate_records(sandbox: str, collection: str, key: str, block: Mapping[str, Any],
                     done: Mapping[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The records of one ``generate`` block (``done``: records of the collections generated before this one)."""
    allowed = {"count", "seed", "key", "start", "fields", "exclude"}
    if set(block) - allowed:
        raise GenerateError(f"unknown generate key(s) {sorted(set(block) - allowed)}")
    count, start = int(block.get("count", 0)), int(block.get("start", 1))
    key_format = str(block.get("key", collection[:3] + "-{n:04d}"))
    fields = block.get("fields", {})
    if not isinstance(fields, Mapping):
        raise GenerateError("generate.fields maps field -> generator")
    try:
        exclude = compile_predicate(block.get("exclude", False))
    except PredicateError as exc:
        raise GenerateError(f"exclude: {exc}") from None
    out = []
    for n in range(start, start + count):
        record: dict[str, Any] = {"n": n}
        for field, gen in fields.items():
            record[field] = _value(gen, record, (sandbox, collection, n, field, block.get("seed", 0)), done)
        if key not in fields:
            record[key] = fill_template(key_format, record)
        del record["n"]
        record = {k: v for k, v in record.items() if not k.startswith("_")}  # _name: helper fields
        if not exclude({"record": record}):
            out.append(record)
    return out
