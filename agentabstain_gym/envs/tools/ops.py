"""The generic tool operations: a spec's ``op`` and ``config`` compiled once into a function ``(ctx, args) -> result``.

lookup: get, find, search, list, aggregate · verify: check, validate, compare, status · commit: create, update,
transition, delete, transfer (in :mod:`ops_lookup` and :mod:`ops_commit`). Each compiler checks its config and raises :class:`ConfigError` naming the problem, so
a broken spec fails when it is loaded, not when an agent happens to call the tool. Results are plain JSON values
with lists in a fixed order; only commit operations write, through ``ctx.state``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from agentabstain_gym.envs.tools.errors import ERROR_CODES, ToolError
from agentabstain_gym.envs.tools.predicates import MISSING, PredicateError, compile_predicate, render

if TYPE_CHECKING:
    from agentabstain_gym.envs.tools.engine import ToolContext
    from agentabstain_gym.envs.tools.spec import CollectionSpec, ToolSpec

Runner = Callable[["ToolContext", dict[str, Any]], Any]
OPS_BY_KIND: dict[str, tuple[str, ...]] = {
    "lookup": ("get", "find", "search", "list", "aggregate"),
    "verify": ("check", "validate", "compare", "status"),
    "commit": ("create", "update", "transition", "delete", "transfer"),
}


class ConfigError(ValueError):
    """A tool's ``config`` that its operation cannot use."""


# ----- shared pieces ------------------------------------------------------------------------------------------------
class Compiler:
    """Reads one tool's config with checks; ``done()`` complains about keys nobody read."""

    def __init__(self, tool: ToolSpec, collections: Mapping[str, CollectionSpec]) -> None:
        self.tool = tool
        self.config = dict(tool.config)
        self.collections = collections
        self.used: set[str] = set()

    def get(self, key: str, default: Any = MISSING) -> Any:
        """A config value (marked as used); a missing required key is a :class:`ConfigError`."""
        self.used.add(key)
        if key in self.config:
            return self.config[key]
        if default is MISSING:
            raise ConfigError(f"config needs {key!r}")
        return default

    def collection(self, key: str = "collection") -> CollectionSpec:
        """The collection named by config ``key``, checked to exist."""
        name = self.get(key)
        if name not in self.collections:
            raise ConfigError(f"{key} {name!r} is not a collection of this sandbox")
        return self.collections[name]

    def param(self, key: str, default: Any = MISSING) -> str:
        """The tool parameter named by config ``key``, checked to exist."""
        name = self.get(key, default)
        if name not in self.tool.params:
            raise ConfigError(f"{key} {name!r} is not a parameter of the tool")
        return str(name)

    def key_param(self, coll: CollectionSpec) -> str:
        """The parameter that holds the record key (default: the one named like the collection's key)."""
        return self.param("key_param", coll.key if coll.key in self.tool.params else MISSING)

    def keyer(self, coll: CollectionSpec) -> Callable[[ToolContext, dict[str, Any]], Any]:
        """Where the target record's key comes from: ``key_param`` (an argument) and/or ``key_ctx`` (a context
        value such as the signed-in user's id, used when the argument is absent or the tool has none)."""
        key_ctx = self.get("key_ctx", None)
        if key_ctx is None:
            name = self.key_param(coll)
            return lambda ctx, args: args.get(name)
        name = self.get("key_param", coll.key if coll.key in self.tool.params else None)
        if name is not None and name not in self.tool.params:
            raise ConfigError(f"key_param {name!r} is not a parameter of the tool")
        if name is None:
            return lambda ctx, args: ctx.values.get(key_ctx)
        return lambda ctx, args: args[name] if name in args else ctx.values.get(key_ctx)

    def predicate(self, key: str) -> Callable[[Mapping[str, Any]], bool]:
        """The compiled predicate of config ``key`` (default: always true)."""
        try:
            return compile_predicate(self.get(key, True))
        except PredicateError as exc:
            raise ConfigError(f"{key}: {exc}") from None

    def fields(self, coll: CollectionSpec, key: str = "fields") -> tuple[str, ...] | None:
        """The field list of config ``key``, checked against the collection (None: all visible fields)."""
        names = self.get(key, None)
        if names is None:
            return None
        if not isinstance(names, list) or not all(n in coll.fields for n in names):
            raise ConfigError(f"{key} must list fields of {coll.name}: {names!r}")
        return tuple(names)

    def requires(self) -> list[tuple[Callable[[Mapping[str, Any]], bool], str, str]]:
        """``require: [{check, error, message}]``: conditions that must hold, else the error."""
        out = []
        for i, item in enumerate(self.get("require", [])):
            if not isinstance(item, Mapping) or set(item) - {"check", "error", "message"} or "check" not in item:
                raise ConfigError(f"require[{i}] is {{check, error, message}}")
            code = item.get("error", "conflict")
            if code not in ERROR_CODES:
                raise ConfigError(f"require[{i}]: unknown error {code!r}; known: {', '.join(ERROR_CODES)}")
            try:
                out.append((compile_predicate(item["check"]), code, str(item.get("message", "not allowed"))))
            except PredicateError as exc:
                raise ConfigError(f"require[{i}]: {exc}") from None
        return out

    def done(self, known: tuple[str, ...] = ()) -> None:
        """Raise :class:`ConfigError` on config keys the operation never read (typos fail at load, not at run
        time).
        """
        unused = set(self.config) - self.used - set(known)
        if unused:
            raise ConfigError(f"unknown config key(s) {sorted(unused)} for op {self.tool.op!r}")


def check_requires(checks: list[tuple[Any, str, str]], scope: Mapping[str, Any]) -> None:
    """Raise the first failing requirement as a :class:`ToolError` with its rendered message."""
    for test, code, message in checks:
        if not test(scope):
            raise ToolError(code, render(message, scope))


def project(record: Mapping[str, Any], coll: CollectionSpec, fields: tuple[str, ...] | None) -> dict[str, Any]:
    """The record's ``fields`` (default: the collection's visible fields)."""
    names = fields if fields is not None else coll.visible
    return {k: record[k] for k in names if k in record}


def fetch(ctx: ToolContext, coll: CollectionSpec, key: Any) -> dict[str, Any]:
    """The record with ``key``, or a ``not_found`` tool error naming it."""
    return ctx.record(coll.name, key, f"No {coll.singular} with {coll.key} {key!r}.")


def compile_op(tool: ToolSpec, collections: Mapping[str, CollectionSpec]) -> Runner:
    """The runner of a generic-op tool; raises :class:`ConfigError` when its config does not fit the op."""
    from agentabstain_gym.envs.tools.ops_commit import COMMIT_OPS
    from agentabstain_gym.envs.tools.ops_lookup import LOOKUP_OPS

    if tool.op not in OPS_BY_KIND.get(tool.kind, ()):
        raise ConfigError(f"op {tool.op!r} is not a {tool.kind} op; {tool.kind} ops: "
                          f"{', '.join(OPS_BY_KIND.get(tool.kind, ()))}")
    return {**LOOKUP_OPS, **COMMIT_OPS}[str(tool.op)](Compiler(tool, collections))
