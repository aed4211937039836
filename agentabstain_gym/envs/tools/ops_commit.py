"""Commit operations: create, update, transition, delete, transfer; the only operations that write state.

Values come from ``values`` / ``set`` sources (a parameter, a literal, a context value); ``unique``, ``refs`` and
``require`` are checked before anything is written, so a refused commit leaves the state as it was.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from agentabstain_gym.envs.tools.errors import ToolError
from agentabstain_gym.envs.tools.ops import Compiler, ConfigError, Runner, check_requires, fetch, project
from agentabstain_gym.envs.tools.predicates import MISSING

if TYPE_CHECKING:
    from agentabstain_gym.envs.tools.engine import ToolContext
    from agentabstain_gym.envs.tools.spec import CollectionSpec


def _sources(c: Compiler, coll: CollectionSpec, key: str = "values") -> dict[str, tuple[str, Any]]:
    """``values: {field: source}``: a parameter name, ``{param, default}``, ``{value}`` or ``{ctx}``."""
    out: dict[str, tuple[str, Any]] = {}
    for field, source in (c.get(key, {}) or {}).items():
        if field not in coll.fields:
            raise ConfigError(f"{key}: {field!r} is not a field of {coll.name}")
        if isinstance(source, str):
            source = {"param": source}
        if not isinstance(source, Mapping) or len(set(source) & {"param", "value", "ctx"}) != 1:
            raise ConfigError(f"{key}.{field}: a source is a parameter name, {{param}}, {{value}} or {{ctx}}")
        if "param" in source:
            if source["param"] not in c.tool.params:
                raise ConfigError(f"{key}.{field}: {source['param']!r} is not a parameter of the tool")
            out[field] = ("param", (source["param"], source.get("default", MISSING)))
        elif "value" in source:
            out[field] = ("value", source["value"])
        else:
            out[field] = ("ctx", source["ctx"])
    return out


def _fill(sources: dict[str, tuple[str, Any]], ctx: ToolContext, args: dict[str, Any],
          only_given: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for field, (kind, source) in sources.items():
        if kind == "param":
            name, default = source
            if name in args:
                out[field] = args[name]
            elif default is not MISSING and not only_given:
                out[field] = default
        elif kind == "value":
            out[field] = source
        else:
            out[field] = ctx.values.get(source)
    return out


def _uniques(c: Compiler, coll: CollectionSpec) -> list[tuple[str, ...]]:
    spec = c.get("unique", [])
    groups = [tuple(g) if isinstance(g, list) else (g,) for g in spec]
    for g in groups:
        if any(f not in coll.fields for f in g):
            raise ConfigError(f"unique: {g!r} names fields not in {coll.name}")
    return groups


def _check_unique(ctx: ToolContext, coll: CollectionSpec, record: Mapping[str, Any], groups: list) -> None:
    key = record.get(coll.key)
    for group in groups:
        values = [str(record.get(f, "")).casefold() for f in group]
        for other in ctx.state.records(coll.name).values():
            if other.get(coll.key) != key and [str(other.get(f, "")).casefold() for f in group] == values:
                shown = ", ".join(f"{f}={record.get(f)!r}" for f in group)
                raise ToolError("conflict", f"Another {coll.singular} already has {shown}.")


def _refs(c: Compiler, coll: CollectionSpec) -> dict[str, str]:
    refs = c.get("refs", {}) or {}
    for field, target in refs.items():
        if field not in coll.fields or target not in c.collections:
            raise ConfigError(f"refs: {field!r} -> {target!r} needs a field of {coll.name} and a collection")
    return dict(refs)


def _check_refs(ctx: ToolContext, record: Mapping[str, Any], refs: dict[str, str]) -> None:
    for field, target in refs.items():
        value = record.get(field)
        for item in value if isinstance(value, list) else [value]:
            if item is not None and ctx.state.get(target, item) is None:
                raise ToolError("not_found", f"No {c_singular(target)} {item!r} (referenced by {field}).")


def c_singular(name: str) -> str:
    """A collection name's singular (a trailing s dropped), for messages."""
    return name[:-1] if name.endswith("s") else name


def _write(ctx: ToolContext, coll: CollectionSpec, record: dict[str, Any], uniques: list, refs: dict[str, str],
           result_fields: tuple[str, ...] | None, verb: str) -> dict[str, Any]:
    _check_unique(ctx, coll, record, uniques)
    _check_refs(ctx, record, refs)
    ctx.state.put(coll.name, record[coll.key], record)
    return {verb: project(record, coll, result_fields)}


def op_create(c: Compiler) -> Runner:
    """The ``create`` operation: a new record from the arguments, with unique and reference checks."""
    coll = c.collection()
    sources = _sources(c, coll)
    key_param = c.param("key_param") if "key_param" in c.config else None
    uniques, refs, requires = _uniques(c, coll), _refs(c, coll), c.requires()
    result_fields = c.fields(coll, "result_fields")
    c.done()

    def run(ctx: ToolContext, args: dict[str, Any]) -> Any:
        record = coll.defaults()
        record.update(_fill(sources, ctx, args, only_given=False))
        if key_param is not None:
            key = args.get(key_param)
            if ctx.state.get(coll.name, key) is not None:
                raise ToolError("conflict", f"A {coll.singular} with {coll.key} {key!r} already exists.")
        else:
            key = ctx.new_key(coll)
        record[coll.key] = key
        check_requires(requires, ctx.scope(record=record, args=args))
        return _write(ctx, coll, record, uniques, refs, result_fields, "created")

    return run


def op_update(c: Compiler) -> Runner:
    """The ``update`` operation: change fields of one record, with unique and reference checks."""
    coll = c.collection()
    key_of = c.keyer(coll)
    sources = _sources(c, coll)
    fixed = _sources(c, coll, "set")
    uniques, refs, requires = _uniques(c, coll), _refs(c, coll), c.requires()
    result_fields = c.fields(coll, "result_fields")
    c.done()

    def run(ctx: ToolContext, args: dict[str, Any]) -> Any:
        current = fetch(ctx, coll, key_of(ctx, args))
        changes = _fill(sources, ctx, args, only_given=True)
        if not changes:
            names = sorted({s[1][0] for s in sources.values() if s[0] == "param"})
            raise ToolError("invalid_request", f"Nothing to change: give at least one of {', '.join(names)}.")
        record = {**current, **changes, **_fill(fixed, ctx, args, only_given=False)}
        check_requires(requires, ctx.scope(record=current, args=args, target=record))
        return _write(ctx, coll, record, uniques, refs, result_fields, "updated")

    return run


def op_transition(c: Compiler) -> Runner:
    """The ``transition`` operation: set a record's status field, only from the states listed in ``from``."""
    coll = c.collection()
    key_of = c.keyer(coll)
    field = c.get("field", "status")
    if field not in coll.fields:
        raise ConfigError(f"field {field!r} is not a field of {coll.name}")
    to_param = c.param("to_param") if "to_param" in c.config else None
    to_value = c.get("to") if "to" in c.config else MISSING
    if (to_param is None) == (to_value is MISSING):
        raise ConfigError("transition needs exactly one of 'to' or 'to_param'")
    allowed = c.get("from", None)
    if allowed is not None and not isinstance(allowed, list):
        raise ConfigError("'from' must list the states a transition may start from")
    fixed = _sources(c, coll, "set")
    requires = c.requires()
    result_fields = c.fields(coll, "result_fields")
    c.done()

    def run(ctx: ToolContext, args: dict[str, Any]) -> Any:
        current = fetch(ctx, coll, key_of(ctx, args))
        target = args[to_param] if to_param is not None else to_value
        state = current.get(field)
        if allowed is not None and state not in allowed:
            raise ToolError("conflict", f"The {coll.singular} {current[coll.key]!r} is {state!r}; it must be one of "
                                        f"{', '.join(map(str, allowed))} for this.")
        record = {**current, field: target, **_fill(fixed, ctx, args, only_given=False)}
        check_requires(requires, ctx.scope(record=current, args=args, target=record))
        ctx.state.put(coll.name, record[coll.key], record)
        return {"updated": project(record, coll, result_fields), "previous": {field: state}}

    return run


def op_delete(c: Compiler) -> Runner:
    """The ``delete`` operation: remove a record (and, with ``cascade``, the records that refer to it)."""
    coll = c.collection()
    key_of = c.keyer(coll)
    requires = c.requires()
    cascade = c.get("cascade", [])
    for item in cascade:
        if not isinstance(item, Mapping) or item.get("collection") not in c.collections \
                or item.get("field") not in c.collections[item["collection"]].fields:
            raise ConfigError(f"cascade entries are {{collection, field}} of this sandbox: {item!r}")
    c.done()

    def run(ctx: ToolContext, args: dict[str, Any]) -> Any:
        current = fetch(ctx, coll, key_of(ctx, args))
        check_requires(requires, ctx.scope(record=current, args=args))
        key = current[coll.key]
        ctx.state.remove(coll.name, key)
        removed = 0
        for item in cascade:
            other = c.collections[item["collection"]]
            for k, r in sorted(ctx.state.records(other.name).items()):
                if r.get(item["field"]) == key:
                    ctx.state.remove(other.name, k)
                    removed += 1
        return {"deleted": key, "dependents_removed": removed}

    return run


def op_transfer(c: Compiler) -> Runner:
    """The ``transfer`` operation: move an amount between two records, or (``mode: owner``) give a record a new owner."""
    coll = c.collection()
    mode = c.get("mode", "amount")
    requires = c.requires()
    field = c.get("field")
    if field not in coll.fields:
        raise ConfigError(f"field {field!r} is not a field of {coll.name}")
    if mode == "owner":
        key_param, to_param = c.key_param(coll), c.param("to_param")
        target = c.collection("to_collection")
        c.done()

        def run_owner(ctx: ToolContext, args: dict[str, Any]) -> Any:
            item = fetch(ctx, coll, args.get(key_param))
            owner = fetch(ctx, target, args.get(to_param))
            record = {**item, field: owner[target.key]}
            check_requires(requires, ctx.scope(record=item, args=args, target=owner))
            ctx.state.put(coll.name, record[coll.key], record)
            return {"transferred": record[coll.key], "from": item.get(field), "to": owner[target.key]}

        return run_owner
    if mode != "amount":
        raise ConfigError(f"mode must be 'amount' or 'owner', got {mode!r}")
    src, dst, amount_param = c.param("from_param"), c.param("to_param"), c.param("amount_param")
    log = c.get("log", None)
    log_coll = c.collections.get(log.get("collection")) if isinstance(log, Mapping) else None
    if log is not None and log_coll is None:
        raise ConfigError("log needs {collection, values} with a collection of this sandbox")
    log_sources: dict[str, tuple[str, Any]] = {}
    if log_coll is not None:
        sub = Compiler(c.tool, c.collections)
        sub.config = {"values": log.get("values", {})}
        log_sources = _sources(sub, log_coll)
    c.done()

    def run(ctx: ToolContext, args: dict[str, Any]) -> Any:
        amount = args.get(amount_param)
        if not isinstance(amount, int | float) or isinstance(amount, bool) or amount <= 0:
            raise ToolError("invalid_request", f"{amount_param} must be a positive number.")
        a, b = fetch(ctx, coll, args.get(src)), fetch(ctx, coll, args.get(dst))
        if a[coll.key] == b[coll.key]:
            raise ToolError("invalid_request", "The source and the destination are the same.")
        check_requires(requires, ctx.scope(record=a, args=args, target=b))
        balance_a, balance_b = a.get(field, 0), b.get(field, 0)
        if not isinstance(balance_a, int | float) or balance_a < amount:
            raise ToolError("conflict", f"Insufficient {field}: {balance_a} available, {amount} requested.")
        new_a = {**a, field: round(balance_a - amount, 2)}
        new_b = {**b, field: round(balance_b + amount, 2)}
        ctx.state.put(coll.name, new_a[coll.key], new_a)
        ctx.state.put(coll.name, new_b[coll.key], new_b)
        out: dict[str, Any] = {"transferred": amount, "from": project(new_a, coll, None),
                               "to": project(new_b, coll, None)}
        if log_coll is not None:
            entry = log_coll.defaults()
            entry.update(_fill(log_sources, ctx, args, only_given=False))
            entry[log_coll.key] = ctx.new_key(log_coll)
            ctx.state.put(log_coll.name, entry[log_coll.key], entry)
            out["record"] = entry[log_coll.key]
        return out

    return run


COMMIT_OPS: dict[str, Callable[[Compiler], Runner]] = {
    "create": op_create, "update": op_update, "transition": op_transition, "delete": op_delete,
    "transfer": op_transfer,
}
