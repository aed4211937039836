"""Fresh tool pairs from the sandboxes' T+ templates: instances no model has seen, made offline and deterministically.

A template (``data/tools/templates/<sandbox>.yaml``) is a pair entry written over one record of a collection:
``{field}`` placeholders (with filters such as ``{start|date}``) are filled from a candidate record, and every listed
delta is tried on the result. Each candidate pair goes through the same replay validation as the curated pairs and
is kept only if it passes, so a generated file holds only valid pairs. Records that curated pairs already use are
skipped, and the seed decides which of the remaining records are drawn.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import re
import zlib
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agentabstain_gym.envs.tools import catalog
from agentabstain_gym.envs.tools.deltas import DeltaError
from agentabstain_gym.envs.tools.engine import world
from agentabstain_gym.envs.tools.predicates import compile_predicate
from agentabstain_gym.envs.tools.spec import read_yaml
from agentabstain_gym.envs.tools.tasks import Pair, _pair, _positive, read_pair_file
from agentabstain_gym.envs.tools.validate import pair_problems

TEMPLATE_DIR = catalog.DATA_DIR / "templates"
TEMPLATE_KEYS = {"id", "type", "pick", "instruction", "tools", "state", "clock", "gold", "critical", "answers",
                 "distractors", "expect", "deltas"}
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)(?:\|([a-z_]+))?\}")


class TemplateError(ValueError):
    """A malformed template or a placeholder the record cannot fill."""


def _datetime(value: Any) -> dt.datetime:
    return dt.datetime.fromisoformat(str(value))


FILTERS = {
    "date": lambda v: _datetime(v).date().isoformat(),
    "time": lambda v: _datetime(v).strftime("%H:%M"),
    "weekday": lambda v: _datetime(v).strftime("%A"),
    "day": lambda v: f"{_datetime(v).day} {_datetime(v).strftime('%B')}",
    "lower": lambda v: str(v).lower(),
    "first": lambda v: str(v).split()[0],
    "money": lambda v: f"{float(v):,.2f}",
    "int": lambda v: str(round(float(v))),
    "monthday": lambda v: f"{_datetime(v).strftime('%B')} {_datetime(v).day}",
    "pointer": lambda v: str(v).replace("~", "~0").replace("/", "~1"),  # a key inside a JSON-patch path
}


def fill(value: Any, record: Mapping[str, Any]) -> Any:
    """``value`` with every ``{field}`` / ``{field|filter}`` replaced from ``record``; a string that is exactly one
    unfiltered placeholder keeps the field's type (a number stays a number, a list a list)."""
    if isinstance(value, str):
        whole = _PLACEHOLDER.fullmatch(value)
        if whole and whole.group(2) is None:
            return _field(record, whole.group(1))

        def sub(m: re.Match[str]) -> str:
            raw = _field(record, m.group(1))
            if m.group(2) is None:
                return str(raw)
            if m.group(2) not in FILTERS:
                raise TemplateError(f"unknown filter {m.group(2)!r}; known: {', '.join(FILTERS)}")
            try:
                return str(FILTERS[m.group(2)](raw))
            except (TypeError, ValueError) as exc:
                raise TemplateError(f"{m.group(0)}: {exc}") from None

        return _PLACEHOLDER.sub(sub, value)
    if isinstance(value, Mapping):
        return {k: fill(v, record) for k, v in value.items()}
    if isinstance(value, list):
        return [fill(v, record) for v in value]
    return value


def _field(record: Mapping[str, Any], name: str) -> Any:
    if record.get(name) is None:
        raise TemplateError(f"the record has no {name!r}")
    return record[name]


def template_files() -> dict[str, Path]:
    """Sandbox name -> its template file (sandboxes without templates are left out)."""
    files = catalog.sandbox_files()
    return {name: TEMPLATE_DIR / f"{path.stem}.yaml" for name, path in files.items()
            if (TEMPLATE_DIR / f"{path.stem}.yaml").is_file()}


@functools.cache
def _curated_calls() -> tuple[tuple[tuple[str, ...], tuple[Mapping[str, Any], ...]], ...]:
    """(sandboxes, gold calls) of every curated pair, read once (a pair of another sandbox's file may span this
    sandbox too: a trip in the calendar file books its flight in FlightTravel)."""
    out = []
    for name, path in catalog.pair_files().items():
        out.extend((pair.positive.sandboxes, pair.positive.gold) for pair in read_pair_file(name, path)[0])
    return tuple(out)


@functools.cache
def _used_keys(sandbox: str) -> frozenset[str]:
    """Every string argument of the gold calls of the curated pairs that span ``sandbox``: the records those pairs
    are about (read once per sandbox, not once per template)."""
    used: set[str] = set()
    for sandboxes, gold in _curated_calls():
        if sandbox in sandboxes:
            for call in gold:
                used.update(v for v in call["arguments"].values() if isinstance(v, str))
    return frozenset(used)


def _candidates(sandbox: str, pick: Mapping[str, Any], rng: np.random.Generator,
                exclude: frozenset[str] = frozenset()) -> list[dict[str, Any]]:
    """Records of ``pick.collection`` that satisfy ``pick.where`` and, with ``pick.unique: [fields]``, that no other
    record shares those fields' values with (so the T+ request names exactly one record), in a seeded order."""
    w = world((sandbox,))
    records = w.snapshot.collections.get(pick.get("collection", ""))
    if records is None:
        raise TemplateError(f"pick.collection {pick.get('collection')!r} is not a collection of {sandbox}")
    where = compile_predicate(pick.get("where", True))
    unique = pick.get("unique") or []
    if not isinstance(unique, list) or not all(isinstance(f, str) for f in unique):
        raise TemplateError("pick.unique lists field names")
    shared = Counter(json.dumps([r.get(f) for f in unique], sort_keys=True, default=str) for r in records.values())
    scope: dict[str, Any] = {"ctx": {**w.context, "now": w.clock}, "values": {}, "args": {}}
    used = _used_keys(sandbox) | exclude
    keep = []
    for key in sorted(records):
        scope["item"] = records[key]
        if key in used or not where(scope):
            continue
        if unique and shared[json.dumps([records[key].get(f) for f in unique], sort_keys=True, default=str)] > 1:
            continue
        keep.append(dict(records[key]))
    return [keep[i] for i in rng.permutation(len(keep))]


def _entry(sandbox: str, template: Mapping[str, Any], record: Mapping[str, Any], seed: int) -> dict[str, Any]:
    body = {k: fill(v, record) for k, v in template.items() if k not in ("id", "pick", "deltas")}
    collection = template["pick"]["collection"]
    key = record[world((sandbox,)).collections[collection].key]
    return {"id": f"gen{seed}-{template['id']}-{key}", "sandboxes": [sandbox], **body,
            "origin": {"template": template["id"], "collection": collection, "key": key}}


def origins(entries: Sequence[Mapping[str, Any]]) -> dict[str, frozenset[str]]:
    """Sandbox -> the keys of the records ``entries`` were made from (their T+ records)."""
    out: dict[str, set[str]] = {}
    for entry in entries:
        origin = entry.get("origin")
        if isinstance(origin, Mapping):
            out.setdefault(str(entry["sandboxes"][0]), set()).add(str(origin["key"]))
    return {k: frozenset(v) for k, v in sorted(out.items())}


def generate(seed: int, *, sandboxes: Sequence[str] | None = None, per_template: int = 2,
             max_tries: int = 12, exclude: Mapping[str, frozenset[str]] | None = None,
             ) -> tuple[list[dict[str, Any]], Counter[str]]:
    """Validated pair entries (pair-file form) and a count of the candidates rejected, by reason.

    For each template, candidates are drawn in a seed-decided order until ``per_template`` of them yield at least
    one valid pair (or ``max_tries`` were tried); each kept entry lists only its valid deltas. Records the curated
    pairs use are never drawn, nor the keys in ``exclude`` (sandbox -> keys: e.g. the training split's records).
    """
    files = template_files()
    unknown = set(sandboxes or ()) - set(files)
    if unknown:
        raise TemplateError(f"no templates for {sorted(unknown)}; sandboxes with templates: {', '.join(files)}")
    entries: list[dict[str, Any]] = []
    rejected: Counter[str] = Counter()
    for name in sandboxes or sorted(files):
        data = read_yaml(files[name])
        for t_index, template in enumerate(data.get("templates") or []):
            if set(template) - TEMPLATE_KEYS or not {"id", "pick", "deltas"} <= set(template):
                raise TemplateError(f"{files[name].name}: template {t_index} needs id, pick, deltas and keys among "
                                    f"{sorted(TEMPLATE_KEYS)}")
            rng = np.random.default_rng([seed, t_index, zlib.crc32(name.encode())])
            kept = 0
            skip = (exclude or {}).get(name, frozenset())
            for record in _candidates(name, template["pick"], rng, skip)[:max_tries]:
                entry, reason = _validated(name, template, record, seed)
                if entry is None:
                    rejected[reason] += 1
                    continue
                entries.append(entry)
                kept += 1
                if kept == per_template:
                    break
    return entries, rejected


def _validated(sandbox: str, template: Mapping[str, Any], record: Mapping[str, Any],
               seed: int) -> tuple[dict[str, Any] | None, str]:
    try:
        entry = _entry(sandbox, template, record, seed)
        positive = _positive(entry, sandbox)
    except (TemplateError, DeltaError, ValueError, KeyError, TypeError) as exc:
        return None, f"template: {exc}"
    good, reason = [], "no delta holds"
    for spec in template["deltas"]:
        try:
            delta = _natural_key(sandbox, fill(spec, record))
            pair: Pair = _pair(f"{sandbox}/{entry['id']}", positive, delta, "test")
        except (TemplateError, DeltaError, ValueError, KeyError, TypeError) as exc:
            reason = f"delta {spec.get('op')}: {exc}"
            continue
        problems = pair_problems(pair)
        if problems:
            reason = f"delta {spec.get('op')}: {problems[0].split(': ', 1)[-1]}"
            continue
        good.append(delta)
    if not good:
        return None, reason
    entry["deltas"] = good
    return entry, ""


_NUMBERED = re.compile(r"^(\D*?)([0-9a-f]+)$")


def _natural_key(sandbox: str, delta: dict[str, Any]) -> dict[str, Any]:
    """An added record gets the next id in its collection's own numbering (``evt-1149``, ``i-0e100036``), not the
    template's ``{event_id}-x``: an id of an odd shape would tell the agent which record the twin added."""
    if delta.get("op") != "add_matching_entity":
        return delta
    records = world((sandbox,)).snapshot.collections.get(str(delta.get("collection")), {})
    numbered = [m for m in map(_NUMBERED.match, records) if m]
    if not numbered or str(delta.get("key")) in records:
        return delta
    prefix = Counter(m.group(1) for m in numbered).most_common(1)[0][0]
    same = [m.group(2) for m in numbered if m.group(1) == prefix]
    base = 10 if all(d.isdigit() for d in same) else 16
    width = max(len(d) for d in same)
    top = max(int(d, base) for d in same) + 1
    fresh = prefix + (f"{top:0{width}d}" if base == 10 else f"{top:0{width}x}")
    return json.loads(json.dumps(delta).replace(json.dumps(str(delta["key"]))[1:-1], fresh))


def write_pairs(entries: list[dict[str, Any]], path: str | Path, *, seed: int) -> None:
    import yaml

    text = yaml.safe_dump({"generated": {"seed": seed, "by": "abstain-gym tools generate"}, "pairs": entries},
                          sort_keys=False, allow_unicode=True, width=120)
    Path(path).write_text(text, encoding="utf-8")
