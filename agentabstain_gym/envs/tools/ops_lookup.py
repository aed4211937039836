"""Lookup and verify operations: get, find, search, list, aggregate; check, validate, compare, status.

Filters come from ``match`` (applied when the agent gives the parameter) and ``where`` (always); range filters on a
snapshot collection use a cached sorted index, and ``where`` predicates over plain record fields run without a scope,
so a dated listing over hundreds of records costs tens of microseconds. Results are sorted, so they never depend on
dict order.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from agentabstain_gym.envs.tools.errors import ToolError
from agentabstain_gym.envs.tools.ops import Compiler, ConfigError, Runner, check_requires, fetch, project
from agentabstain_gym.envs.tools.predicates import (
    MISSING,
    PredicateError,
    compile_predicate,
    record_predicate,
    render,
)

if TYPE_CHECKING:
    from agentabstain_gym.envs.tools.engine import ToolContext
    from agentabstain_gym.envs.tools.spec import CollectionSpec

DEFAULT_LIMIT = 25
_TOKEN = re.compile(r"[a-z0-9]+")
_STOPWORDS = frozenset("a an and the of to in on at for with my me i is are from by".split())  # noqa: SIM905


def _sort_key(fields: tuple[tuple[str, bool], ...]) -> Callable[[Mapping[str, Any]], Any]:
    def key(record: Mapping[str, Any]) -> tuple:
        out = []
        for name, desc in fields:
            value = record.get(name)
            rank = (value is None, _orderable(value))
            out.append(_Desc(rank) if desc else rank)
        return tuple(out)

    return key


def _orderable(value: Any) -> Any:
    if isinstance(value, bool):
        return (0, int(value), "")
    if isinstance(value, int | float):
        return (0, value, "")
    return (1, 0, str(value))


class _Desc:
    __slots__ = ("v",)

    def __init__(self, v: Any) -> None:
        self.v = v

    def __lt__(self, other: _Desc) -> bool:
        return other.v < self.v

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Desc) and other.v == self.v


def _sorter(c: Compiler, coll: CollectionSpec) -> Callable[[Mapping[str, Any]], Any]:
    spec = c.get("sort", [coll.key])
    spec = [spec] if isinstance(spec, str) else spec
    fields = []
    for item in spec:
        name = str(item).lstrip("-")
        if name not in coll.fields:
            raise ConfigError(f"sort field {name!r} is not a field of {coll.name}")
        fields.append((name, str(item).startswith("-")))
    if all(name != coll.key for name, _ in fields):
        fields.append((coll.key, False))  # a total order: ties broken by key
    return _sort_key(tuple(fields))


def _filters(c: Compiler, coll: CollectionSpec) -> list[tuple[str, Callable[[Any, Any], bool], str, str]]:
    """``match: {param: field | {field, op}}``: a filter for each param, applied when the agent gives it."""
    from agentabstain_gym.envs.tools.predicates import BINARY

    out = []
    for param, target in (c.get("match", {}) or {}).items():
        if param not in c.tool.params:
            raise ConfigError(f"match: {param!r} is not a parameter of the tool")
        field, op = (target, None) if isinstance(target, str) else (target.get("field"), target.get("op"))
        if field not in coll.fields:
            raise ConfigError(f"match: {field!r} is not a field of {coll.name}")
        if op is None:
            ftype, ptype = coll.fields[field].type, c.tool.params[param].type
            op = ("on_date" if ftype == "datetime" and ptype == "date" else
                  "contains" if ftype == "array" and ptype != "array" else
                  "overlaps" if ftype == "array" else "ieq" if ftype == "string" else "eq")
        if op not in BINARY:
            raise ConfigError(f"match: unknown operator {op!r}")
        out.append((param, BINARY[op], field, op))
    return out


_RANGE_OPS = ("date_ge", "date_le", "on_date", "ge", "gt", "le", "lt")
_INDEX: dict[tuple[int, str, str], tuple[Any, list[Any], list[dict[str, Any]]]] = {}


def _sorted_by(records: Mapping[str, dict[str, Any]], field: str, kind: str) -> tuple[list[Any], list[dict]]:
    """Records of an immutable snapshot collection whose ``field`` is a string (or a number), sorted by it."""
    key = (id(records), field, kind)
    hit = _INDEX.get(key)
    if hit is None or hit[0] is not records:
        typed = [r for r in records.values() if (isinstance(r.get(field), str) if kind == "str" else
                                                 isinstance(r.get(field), int | float)
                                                 and not isinstance(r.get(field), bool))]
        typed.sort(key=lambda r: r[field])
        if len(_INDEX) > 4096:
            _INDEX.clear()
        hit = _INDEX[key] = (records, [r[field] for r in typed], typed)
    return hit[1], hit[2]


def _narrow(records: Mapping[str, dict[str, Any]], ranged: list[tuple[Any, str, str]]) -> list[dict[str, Any]] | None:
    """The slice of records that range filters on one field can match (None: no usable range filter)."""
    field = ranged[0][2]
    values = [(v, op) for v, op, f in ranged if f == field]
    kinds = {"str" if isinstance(v, str) else "num" for v, _ in values}
    if len(kinds) != 1 or any(isinstance(v, bool) for v, _ in values):
        return None
    keys, typed = _sorted_by(records, field, kinds.pop())
    lo, hi = 0, len(keys)
    for v, op in values:
        if op in ("date_ge", "on_date"):
            lo = max(lo, bisect.bisect_left(keys, v[:10]))
        if op in ("date_le", "on_date"):
            hi = min(hi, bisect.bisect_right(keys, v[:10] + "\uffff"))
        if op in ("ge", "gt"):
            lo = max(lo, (bisect.bisect_left if op == "ge" else bisect.bisect_right)(keys, v))
        if op in ("le", "lt"):
            hi = min(hi, (bisect.bisect_right if op == "le" else bisect.bisect_left)(keys, v))
    return typed[lo:hi]


def _selector(c: Compiler, coll: CollectionSpec) -> Callable[[ToolContext, dict[str, Any]], list[dict[str, Any]]]:
    """Records of ``coll`` passing the tool's ``match`` filters and ``where`` predicate, sorted.

    Range filters (dates, numbers) on a snapshot collection use a cached sorted index, so a dated listing over
    hundreds of records looks at the day's records only; the result is the same as a full scan.
    """
    filters = _filters(c, coll)
    where = c.predicate("where")
    fast_where = record_predicate(c.config.get("where", True))
    sort_key = _sorter(c, coll)
    trivial_where = "where" not in c.config
    require_any = c.get("require_any", [])
    if any(p not in c.tool.params for p in require_any):
        raise ConfigError(f"require_any names unknown parameters: {require_any!r}")

    def select(ctx: ToolContext, args: dict[str, Any], first: Callable[[dict[str, Any]], bool] | None = None,
               only: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
        """``first``: a test applied after the field filters and before ``where`` (a search's words); ``only``: the
        records to consider instead of the whole collection (a search's word-index hits)."""
        if require_any and not any(p in args for p in require_any):
            raise ToolError("invalid_request", f"Give at least one of: {', '.join(require_any)}.")
        active = [(args[p], test, f) for p, test, f, _ in filters if p in args]
        records = ctx.state.records(coll.name)
        candidates: Any = only
        if only is None and records is ctx.state.snapshot.collections.get(coll.name):
            ranged = [(args[p], op, f) for p, _, f, op in filters if p in args and op in _RANGE_OPS]
            if ranged:
                candidates = _narrow(records, ranged)
        scope = ctx.scope(args=args)
        out = []
        for record in records.values() if candidates is None else candidates:
            ok = True
            for value, test, f in active:  # field filters (a group, an account) first: they discard most records
                if not test(record.get(f, MISSING), value):
                    ok = False
                    break
            if not ok or (first is not None and not first(record)):
                continue
            if fast_where is not None:
                if not fast_where(record):
                    continue
            elif not trivial_where:
                scope["record"] = record
                if not where(scope):
                    continue
            out.append(record)
        out.sort(key=sort_key)
        return out

    return select


def _listing(records: list[dict[str, Any]], coll: CollectionSpec, fields: tuple[str, ...] | None,
             limit: int) -> dict[str, Any]:
    return {"count": len(records), "results": [project(r, coll, fields) for r in records[:limit]]}


def _limit(c: Compiler) -> int:
    limit = c.get("limit", DEFAULT_LIMIT)
    if not isinstance(limit, int) or limit < 1:
        raise ConfigError(f"limit must be a positive integer, got {limit!r}")
    return limit


# ----- lookup ---------------------------------------------------------------------------------------------------------
def op_get(c: Compiler) -> Runner:
    """The ``get`` operation: one record by key."""
    coll = c.collection()
    key_of = c.keyer(coll)
    fields = c.fields(coll)
    where = c.predicate("where")
    requires = c.requires()
    c.done()

    def run(ctx: ToolContext, args: dict[str, Any]) -> Any:
        key = key_of(ctx, args)
        record = fetch(ctx, coll, key)
        scope = ctx.scope(record=record, args=args)
        if not where(scope):
            raise ToolError("not_found", f"No {coll.singular} with {coll.key} {key!r}.")
        check_requires(requires, scope)
        return project(record, coll, fields)

    return run


def op_find(c: Compiler) -> Runner:
    """The ``find`` operation: the records matching the arguments' filters."""
    coll = c.collection()
    select = _selector(c, coll)
    fields, limit = c.fields(coll), _limit(c)
    c.done()
    return lambda ctx, args: _listing(select(ctx, args), coll, fields, limit)


def _search_text(record: Mapping[str, Any], names: tuple[str, ...], cache: dict[int, tuple[Any, str]]) -> str:
    hit = cache.get(id(record))
    if hit is not None and hit[0] is record:
        return hit[1]
    parts = []
    for name in names:
        value = record.get(name)
        if isinstance(value, list):
            parts.extend(str(v) for v in value)
        elif value is not None:
            parts.append(str(value))
    text = " ".join(_TOKEN.findall(" ".join(parts).casefold()))
    if len(cache) > 200_000:
        cache.clear()
    cache[id(record)] = (record, f" {text} ")
    return cache[id(record)][1]


class _WordIndex:
    """The words of a snapshot collection's search fields, sorted, each with the positions of the records that
    have it: a query term selects the records with a word it starts, by bisection instead of a scan."""

    def __init__(self, records: Mapping[str, dict[str, Any]], names: tuple[str, ...],
                 cache: dict[int, tuple[Any, str]]) -> None:
        self.records = records
        self.order = list(records.values())
        postings: dict[str, set[int]] = {}
        for i, record in enumerate(self.order):
            for word in _search_text(record, names, cache).split():
                postings.setdefault(word, set()).add(i)
        self.words = sorted(postings)
        self.postings = [postings[w] for w in self.words]

    def hits(self, terms: list[str]) -> list[dict[str, Any]]:
        """Records (in collection order) with, for every term, a word that starts with it."""
        found: set[int] | None = None
        for term in terms:
            here: set[int] = set()
            i = bisect.bisect_left(self.words, term)
            while i < len(self.words) and self.words[i].startswith(term):
                here |= self.postings[i]
                i += 1
            found = here if found is None else found & here
            if not found:
                return []
        return [self.order[i] for i in sorted(found or ())]


def query_terms(query: str) -> list[str]:
    """Search terms of a query: lower-case words without stop words, plural 's' dropped (so 'reviews' finds 'review')."""
    terms = []
    for token in _TOKEN.findall(query.casefold()):
        if token in _STOPWORDS:
            continue
        if len(token) > 3 and token.endswith("s") and not token.endswith("ss"):
            token = token[:-1]
        terms.append(token)
    return terms


def op_search(c: Compiler) -> Runner:
    """The ``search`` operation: records whose search fields contain every word of the query."""
    coll = c.collection()
    query_param = c.param("query_param", "query")
    names = tuple(c.get("search_fields"))
    if not names or any(n not in coll.fields for n in names):
        raise ConfigError(f"search_fields must list fields of {coll.name}")
    select = _selector(c, coll)
    fields, limit = c.fields(coll), _limit(c)
    c.done()
    cache: dict[int, tuple[Any, str]] = {}
    indexes: dict[int, _WordIndex] = {}

    def run(ctx: ToolContext, args: dict[str, Any]) -> Any:
        words = query_terms(str(args.get(query_param, "")))
        if not words:
            raise ToolError("invalid_request", f"{query_param} needs at least one word to search for.")
        records = ctx.state.records(coll.name)
        if records is ctx.state.snapshot.collections.get(coll.name):  # unchanged since the snapshot: use its index
            index = indexes.get(id(records))
            if index is None or index.records is not records:
                if len(indexes) > 64:
                    indexes.clear()
                index = indexes[id(records)] = _WordIndex(records, names, cache)
            return _listing(select(ctx, args, only=index.hits(words)), coll, fields, limit)
        terms = [f" {t}" for t in words]

        def has_terms(record: dict[str, Any]) -> bool:
            text = _search_text(record, names, cache)
            return all(t in text for t in terms)

        return _listing(select(ctx, args, has_terms), coll, fields, limit)

    return run


def op_list(c: Compiler) -> Runner:
    """The ``list`` operation: ``find`` under another name."""
    return op_find(c)


def op_aggregate(c: Compiler) -> Runner:
    """The ``aggregate`` operation: count, sum, mean, min or max of a field, optionally grouped."""
    coll = c.collection()
    select = _selector(c, coll)
    metric = c.get("metric", "count")
    field = c.get("field", None)
    group_by = c.get("group_by", None)
    if metric not in ("count", "sum", "avg", "min", "max"):
        raise ConfigError(f"metric must be count, sum, avg, min or max, got {metric!r}")
    if metric != "count" and field not in coll.fields:
        raise ConfigError(f"metric {metric!r} needs 'field', a field of {coll.name}")
    if group_by is not None and group_by not in coll.fields:
        raise ConfigError(f"group_by {group_by!r} is not a field of {coll.name}")
    c.done()

    def value(records: list[dict[str, Any]]) -> Any:
        if metric == "count":
            return len(records)
        nums = [r[field] for r in records if isinstance(r.get(field), int | float) and not isinstance(r[field], bool)]
        if not nums:
            return None
        result = {"sum": sum(nums), "avg": sum(nums) / len(nums), "min": min(nums), "max": max(nums)}[metric]
        return round(result, 6) if isinstance(result, float) else result

    def run(ctx: ToolContext, args: dict[str, Any]) -> Any:
        records = select(ctx, args)
        if group_by is None:
            return {"metric": metric, "field": field, "value": value(records), "records": len(records)}
        groups: dict[str, list[dict[str, Any]]] = {}
        for r in records:
            groups.setdefault(str(r.get(group_by)), []).append(r)
        return {"metric": metric, "field": field, "group_by": group_by,
                "groups": [{"key": k, "value": value(v), "records": len(v)} for k, v in sorted(groups.items())]}

    return run


# ----- verify ---------------------------------------------------------------------------------------------------------
def _named_checks(c: Compiler, key: str) -> list[tuple[str, Callable[[Mapping[str, Any]], bool], str]]:
    out = []
    items = c.get(key)
    if not isinstance(items, list) or not items:
        raise ConfigError(f"{key} must be a non-empty list of {{name, check, message}}")
    for i, item in enumerate(items):
        if not isinstance(item, Mapping) or set(item) - {"name", "check", "message"} or "check" not in item:
            raise ConfigError(f"{key}[{i}] is {{name, check, message}}")
        try:
            out.append((str(item.get("name", f"check_{i + 1}")), compile_predicate(item["check"]),
                        str(item.get("message", ""))))
        except PredicateError as exc:
            raise ConfigError(f"{key}[{i}]: {exc}") from None
    return out


def op_check(c: Compiler) -> Runner:
    """The ``check`` operation: named yes/no checks on a record or the arguments."""
    coll = c.collection() if "collection" in c.config else None
    key_of = c.keyer(coll) if coll is not None else None
    checks = _named_checks(c, "checks")
    c.done()

    def run(ctx: ToolContext, args: dict[str, Any]) -> Any:
        record = fetch(ctx, coll, key_of(ctx, args)) if coll is not None and key_of is not None else None
        scope = ctx.scope(record=record, args=args)
        results = []
        for name, test, message in checks:
            passed = test(scope)
            entry: dict[str, Any] = {"name": name, "passed": passed}
            if not passed and message:
                entry["message"] = render(message, scope)
            results.append(entry)
        return {"ok": all(r["passed"] for r in results), "checks": results}

    return run


def op_validate(c: Compiler) -> Runner:
    """The ``validate`` operation: the problems, if any, of the arguments against named rules."""
    rules = _named_checks(c, "rules")
    c.done()

    def run(ctx: ToolContext, args: dict[str, Any]) -> Any:
        scope = ctx.scope(args=args)
        problems = [render(message or f"{name} failed", scope) for name, test, message in rules if not test(scope)]
        return {"valid": not problems, "problems": problems}

    return run


def op_compare(c: Compiler) -> Runner:
    """The ``compare`` operation: two records' fields split into the same and the different ones."""
    coll = c.collection()
    params = c.get("key_params")
    if not isinstance(params, list) or len(params) != 2 or any(p not in c.tool.params for p in params):
        raise ConfigError("key_params must name two parameters of the tool")
    fields = c.fields(coll) or coll.visible
    c.done()

    def run(ctx: ToolContext, args: dict[str, Any]) -> Any:
        a, b = fetch(ctx, coll, args.get(params[0])), fetch(ctx, coll, args.get(params[1]))
        same = [f for f in fields if a.get(f) == b.get(f)]
        different = {f: [a.get(f), b.get(f)] for f in fields if a.get(f) != b.get(f)}
        return {"first": a[coll.key], "second": b[coll.key], "same": same, "different": different}

    return run


def op_status(c: Compiler) -> Runner:
    """The ``status`` operation: the status fields of one record (``get``) or of many (``find``)."""
    coll = c.collection()
    if c.get("fields", None) is None:
        raise ConfigError("status needs 'fields': the status fields it reports")
    if "key_param" in c.config or "key_ctx" in c.config or coll.key in c.tool.params:
        return op_get(c)
    return op_find(c)


# ----- commit ---------------------------------------------------------------------------------------------------------


LOOKUP_OPS: dict[str, Callable[[Compiler], Runner]] = {
    "get": op_get, "find": op_find, "search": op_search, "list": op_list, "aggregate": op_aggregate,
    "check": op_check, "validate": op_validate, "compare": op_compare, "status": op_status,
}
