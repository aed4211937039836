"""The tool engine: validates a call against the tool's schema, runs it deterministically, traces it.

One :class:`Engine` runs one episode over a :class:`World` (one or more sandboxes). It never raises on agent input:
unknown tools, wrong types, missing or extra arguments and huge strings come back as ``invalid_request`` errors
with the state untouched. Runtime overrides (a tool that errors, times out, returns nothing, stale or conflicting
data) wrap any tool. Every call lands in :attr:`Engine.trace`; :meth:`Engine.diff` says what commits changed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from agentabstain_gym.envs.tools.errors import ERROR_CODES, ToolError
from agentabstain_gym.envs.tools.generate import fill_template
from agentabstain_gym.envs.tools.predicates import PredicateError, compile_predicate
from agentabstain_gym.envs.tools.spec import CollectionSpec, SandboxSpec, SpecError, ToolSpec, load_sandbox
from agentabstain_gym.envs.tools.state import Snapshot, State
from agentabstain_gym.envs.tools.values import Invalid, _short, coerce

OVERRIDE_MODES = ("error", "timeout", "empty", "stale", "conflict")
#: Most distinct argument names reported back in one error message.
_MAX_NAMES_SHOWN = 8
_OUT_OF_RANGE = "{tool}: these arguments lead to numbers too large to represent; use realistic values."


def dumps(value: Any) -> str:
    """Tool results as agents see them: canonical, strict JSON (sorted keys, ASCII; NaN and infinities raise)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=True, allow_nan=False)


class World:
    """The collections and tools of one or more sandboxes (a pair may span two, e.g. email and calendar).

    Collection and tool names must not clash. Context values may: each sandbox's tools read their own sandbox's
    context (:attr:`contexts`), so a calendar's ``user_email`` never leaks into a CRM's tools; :attr:`context`, for
    predicates and witnesses, holds every sandbox's values, the first sandbox's winning a clash.
    """

    def __init__(self, names: tuple[str, ...], specs: Sequence[SandboxSpec] | None = None) -> None:
        specs = list(specs) if specs is not None else [load_sandbox(n) for n in names]
        self.names = tuple(names)
        self.collections: dict[str, CollectionSpec] = {}
        self.tools: dict[str, ToolSpec] = {}
        collections: dict[str, Any] = {}
        context: dict[str, Any] = {}
        self.contexts: dict[str, dict[str, Any]] = {}
        for spec in specs:
            clash = (set(spec.collections) & set(self.collections)) | (set(spec.tools) & set(self.tools))
            if clash:
                raise SpecError(f"world {'+'.join(names)}", [f"name(s) {sorted(clash)} defined by two sandboxes"])
            self.collections.update(spec.collections)
            self.tools.update(spec.tools)
            collections.update(spec.snapshot.collections)
            context.update({k: v for k, v in spec.context.items() if k not in context})
            self.contexts[spec.name] = dict(spec.context)
        self.clock = specs[0].clock
        self.context = context
        self.snapshot = Snapshot(collections, world_snapshot, (self.names,)) if len(specs) > 1 else specs[0].snapshot

    def __reduce__(self) -> Any:
        return (world, (self.names,))


@cache
def world(names: tuple[str, ...]) -> World:
    """The shared, cached :class:`World` of these sandboxes."""
    return World(tuple(names))


def world_snapshot(names: tuple[str, ...]) -> Snapshot:
    """The initial collections of a world of several sandboxes (a picklable reference for snapshots)."""
    return world(names).snapshot


@dataclass(frozen=True)
class Override:
    """A runtime behaviour put around one tool for a task: ``mode`` of :data:`OVERRIDE_MODES`.

    ``error`` / ``timeout`` fail the call (``code``, ``message``); ``empty`` returns ``result`` (default: no
    results); ``stale`` / ``conflict`` run the tool and then ``set`` fields on the returned records matching
    ``where`` (``stale`` also adds ``as_of``). ``on_call`` is the first affected call (1-based), ``times`` how many.
    """

    tool: str
    mode: str
    code: str = "unavailable"
    message: str = ""
    set: Mapping[str, Any] = field(default_factory=dict)
    where: Any = True
    as_of: str | None = None
    result: Any = None
    on_call: int = 1
    times: int | None = None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Override:
        """An override from its pair-file form; unknown keys or modes are a ``ValueError``."""
        allowed = {"tool", "mode", "code", "message", "set", "where", "as_of", "result", "on_call", "times"}
        if not isinstance(data, Mapping) or set(data) - allowed or "tool" not in data:
            raise ValueError(f"an override is a mapping with keys among {sorted(allowed)}, got {data!r}")
        if data.get("mode") not in OVERRIDE_MODES:
            raise ValueError(f"override mode must be one of {OVERRIDE_MODES}, got {data.get('mode')!r}")
        try:
            compile_predicate(data.get("where", True))
        except PredicateError as exc:
            raise ValueError(f"override where: {exc}") from None
        code = data.get("code", "timeout" if data["mode"] == "timeout" else "unavailable")
        if code not in ERROR_CODES:
            raise ValueError(f"override code must be one of {sorted(ERROR_CODES)}, got {code!r}")
        return cls(tool=str(data["tool"]), mode=str(data["mode"]), code=code, message=str(data.get("message", "")),
                   set=dict(data.get("set") or {}), where=data.get("where", True), as_of=data.get("as_of"),
                   result=data.get("result"), on_call=int(data.get("on_call", 1)), times=data.get("times"))

    def applies(self, nth: int) -> bool:
        """Whether the override acts on the ``nth`` call of its tool."""
        return nth >= self.on_call and (self.times is None or nth < self.on_call + int(self.times))


@dataclass
class CallRecord:
    """One tool call as the trace keeps it."""

    tool: str
    arguments: Any
    kind: str | None
    result: Any = None
    error: dict[str, str] | None = None
    changed: bool = False
    override: str | None = None
    observation: str = ""

    @property
    def ok(self) -> bool:
        """Whether the call succeeded."""
        return self.error is None

    def to_dict(self) -> dict[str, Any]:
        """The call as a plain ``dict`` (for the trace in the episode record)."""
        return {"tool": self.tool, "arguments": self.arguments, "kind": self.kind, "result": self.result,
                "error": self.error, "changed": self.changed, "override": self.override}


class ToolContext:
    """What a running tool may use: the state, the frozen clock and context values, and fresh ids."""

    __slots__ = ("state", "values", "now", "collections", "_counters", "_scope")

    def __init__(self, state: State, values: dict[str, Any],
                 collections: Mapping[str, CollectionSpec] | None = None,
                 counters: dict[str, int] | None = None) -> None:
        self.state = state
        self.values = values
        self.collections = dict(collections or {})
        self.now: str = values["now"]
        self._counters: dict[str, int] = counters if counters is not None else {}
        self._scope = {"ctx": values, "state": state}

    @property
    def counters(self) -> dict[str, int]:
        """The next id number per collection (shared by the contexts of one engine)."""
        return self._counters

    def scope(self, **roots: Any) -> dict[str, Any]:
        """A predicate scope: ``ctx`` and ``state`` plus the given roots (``record``, ``args``, ``target``...)."""
        out = dict(self._scope)
        out.update(roots)
        return out

    def record(self, collection: str, key: Any, message: str | None = None) -> dict[str, Any]:
        """The record ``key`` of ``collection``, or a ``not_found`` error saying ``message`` (default: "No <record>
        with <key field> <key>.") - what every tool does before touching a record it was given the id of."""
        found = self.state.get(collection, key)
        if found is None:
            spec = self.collections.get(collection)
            raise ToolError("not_found", message or (f"No {spec.singular} with {spec.key} {key!r}." if spec
                                                     else f"No {collection} record {key!r}."))
        return found

    def new_key(self, coll: CollectionSpec) -> str:
        """The next id of ``coll``: counter-based from ``id_start``, never clock- or random-based."""
        n = self._counters.get(coll.name, coll.id_start)
        while True:
            key = fill_template(coll.id_format, {"n": n}) if coll.id_format else f"{coll.name[:3]}-{n}"
            n += 1
            if self.state.get(coll.name, key) is None:
                break
        self._counters[coll.name] = n
        return key

    def new_id(self, collection: str) -> str:
        """:meth:`new_key` by collection name (for custom tools)."""
        return self.new_key(self.collections[collection])


def validate_arguments(tool: ToolSpec, arguments: Any) -> dict[str, Any]:
    """The arguments checked and normalised against the tool's parameters; raises ``invalid_request``."""
    if not isinstance(arguments, Mapping):
        raise ToolError("invalid_request", f"{tool.name}: arguments must be a JSON object.")
    extra = [k for k in arguments if k not in tool.params]
    if extra:
        shown = ", ".join(repr(str(k)[:40]) for k in sorted(map(str, extra))[:_MAX_NAMES_SHOWN])
        accepted = ", ".join(tool.params) or "none"
        raise ToolError("invalid_request", f"{tool.name}: unexpected argument(s) {shown}; accepted: {accepted}.")
    missing = [n for n in tool.required if n not in arguments or arguments[n] is None]
    if missing:
        raise ToolError("invalid_request", f"{tool.name}: missing required argument(s): {', '.join(missing)}.")
    out: dict[str, Any] = {}
    for name, value in arguments.items():
        if value is None:  # an optional argument given as null is the same as leaving it out
            continue
        p = tool.params[name]
        try:
            out[name] = coerce(p.type, value, items=p.items, enum=p.enum, max_length=p.max_length,
                               max_items=p.max_items, minimum=p.minimum, maximum=p.maximum)
        except Invalid as exc:
            raise ToolError("invalid_request", f"{tool.name}: argument {name!r} {exc}.") from None
    return out


class Engine:
    """One episode's tools over one task's state. ``available`` is the inventory the agent was given."""

    def __init__(self, world: World, snapshot: Snapshot, available: tuple[str, ...] | None = None,
                 overrides: tuple[Override, ...] = (), clock: str | None = None,
                 context: Mapping[str, Any] | None = None) -> None:
        self.world = world
        self.available = tuple(available) if available is not None else tuple(world.tools)
        self.overrides = tuple(overrides)
        self.state = State(snapshot)
        values = {**world.context, **(context or {}), "now": clock or world.clock}
        self.ctx = ToolContext(self.state, values, world.collections)
        # tools of a sandbox whose context differs from the merged one run with their own (shared state and ids)
        self._ctx_of: dict[str, ToolContext] = {}
        for name, own in world.contexts.items():
            mine = {**own, **(context or {}), "now": values["now"]}
            if any(values.get(k) != v for k, v in mine.items()):
                self._ctx_of[name] = ToolContext(self.state, mine, world.collections, counters=self.ctx.counters)
        self.trace: list[CallRecord] = []
        self._calls: dict[str, int] = {}
        self._available = frozenset(self.available)

    @property
    def committed(self) -> bool:
        """Whether any commit tool ran successfully."""
        return any(c.kind == "commit" and c.ok for c in self.trace)

    def commits(self) -> list[CallRecord]:
        """The successful commit calls so far (what the scoring checks)."""
        return [c for c in self.trace if c.kind == "commit" and c.ok]

    def diff(self) -> dict[str, dict[str, list[str]]]:
        """What the episode changed, by collection and key."""
        return self.state.diff()

    def call(self, name: Any, arguments: Any) -> CallRecord:
        """Run one tool call; never raises, never changes state on error."""
        tool = self.world.tools.get(name) if isinstance(name, str) and name in self._available else None
        if tool is not None and isinstance(arguments, Mapping):  # a null optional is an omitted one, in the trace too
            arguments = {k: v for k, v in arguments.items() if v is not None or k not in tool.params}
        record = CallRecord(tool=str(name)[:200], arguments=_safe_arguments(arguments),
                            kind=tool.kind if tool is not None else None)
        mark = self.state.mark()
        try:
            if tool is None:
                names = ", ".join(self.available)
                raise ToolError("invalid_request", f"No tool named {str(name)[:80]!r}. Available tools: {names}.")
            args = validate_arguments(tool, arguments)
            record.arguments = args
            nth = self._calls.get(tool.name, 0) + 1
            self._calls[tool.name] = nth
            override = next((o for o in self.overrides if o.tool == tool.name and o.applies(nth)), None)
            if override is not None:
                record.override = override.mode
                result = self._overridden(tool, args, override)
            else:
                result = self._run(tool, args)
            try:
                text = dumps(result)
            except ValueError:  # NaN or an infinity: a number overflowed; strict JSON (and records) hold neither
                raise ToolError("invalid_request", _OUT_OF_RANGE.format(tool=tool.name)) from None
            record.result = result
        except ToolError as exc:
            self.state.rollback(mark)
            record.error = exc.to_dict()
            text = dumps({"error": record.error})
        except OverflowError:  # arguments so large that the tool's arithmetic overflowed: the agent's to fix
            self.state.rollback(mark)
            record.error = ToolError("invalid_request", _OUT_OF_RANGE.format(tool=record.tool)).to_dict()
            text = dumps({"error": record.error})
        except Exception as exc:  # a bug in a custom tool must not crash the episode or half-change the state
            self.state.rollback(mark)
            record.error = {"code": "unavailable", "message": f"{record.tool}: internal error ({type(exc).__name__})."}
            text = dumps({"error": record.error})
        record.changed = self.state.mark() > mark
        record.observation = text
        self.trace.append(record)
        return record

    def _run(self, tool: ToolSpec, args: dict[str, Any]) -> Any:
        assert tool.runner is not None
        mark = self.state.mark()
        result = tool.runner(self._ctx_of.get(tool.sandbox, self.ctx), args)
        if tool.kind != "commit" and self.state.mark() > mark:
            self.state.rollback(mark)
            raise ToolError("unavailable", f"{tool.name}: internal error (a {tool.kind} tool tried to write).")
        return result

    def _overridden(self, tool: ToolSpec, args: dict[str, Any], o: Override) -> Any:
        if o.mode == "error":
            raise ToolError(o.code, o.message or f"{tool.name} is temporarily unavailable. Try again later.")
        if o.mode == "timeout":
            raise ToolError("timeout", o.message or f"{tool.name} did not respond within 30 seconds.")
        if o.mode == "empty":
            return o.result if o.result is not None else {"count": 0, "results": []}
        result = self._run(tool, args)
        return _patched(result, o, compile_predicate(o.where))


def _patched(result: Any, o: Override, where: Any) -> Any:
    """``result`` with ``o.set`` applied to its records that match ``o.where`` (a copy; the state is untouched)."""

    def fix(record: Any) -> Any:
        if isinstance(record, dict) and where({"record": record}):
            return {**record, **o.set}
        return record

    if isinstance(result, dict) and isinstance(result.get("results"), list):
        out = {**result, "results": [fix(r) for r in result["results"]]}
    elif isinstance(result, dict) and len(result) == 1 and isinstance(next(iter(result.values())), dict):
        k = next(iter(result))
        out = {k: fix(result[k])}
    elif isinstance(result, list):
        return [fix(r) for r in result]
    else:
        out = fix(result)
    if o.as_of is not None and isinstance(out, dict):
        out = {**out, "as_of": o.as_of}
    return out


def _safe_arguments(arguments: Any) -> Any:
    """A small, JSON-safe copy of what the agent sent, for the trace (huge strings cut). Arguments JSON cannot
    hold (huge integers, thousands of nesting levels, other types) are kept as a short text instead."""
    try:
        text = json.dumps(arguments, sort_keys=True)
    except (TypeError, ValueError, RecursionError):
        return _short(arguments, 500)
    if len(text) > 2000:
        return text[:2000] + "..."
    return arguments
