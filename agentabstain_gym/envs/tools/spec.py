"""Sandbox specs: the YAML format, its loader and its meta-validator.

A sandbox is data: typed entity collections with seed records (written out or generated), and tools that each have
one kind (lookup, verify, commit) and either a generic ``op`` with a ``config`` or a ``custom`` function. Loading a
spec checks everything an author can get wrong and reports all problems at once (:class:`SpecError`), so a broken
file fails on load and in the test that runs :func:`check_sandbox` over every sandbox, never mid-episode.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from agentabstain_gym.core.fingerprint import canonical_json, sha256_text
from agentabstain_gym.envs.tools import catalog
from agentabstain_gym.envs.tools.custom import custom_functions
from agentabstain_gym.envs.tools.errors import SpecError
from agentabstain_gym.envs.tools.generate import GenerateError, fill_template, generate_records
from agentabstain_gym.envs.tools.ops import OPS_BY_KIND, ConfigError, Runner, compile_op
from agentabstain_gym.envs.tools.state import Snapshot
from agentabstain_gym.envs.tools.values import FIELD_TYPES, PARAM_TYPES, Invalid, coerce, normalize_datetime

KINDS = ("lookup", "verify", "commit")
NAME = re.compile(r"^[a-z][a-z0-9_]{1,63}$")
#: Words that would tell the agent a tool's kind; descriptions say what a tool does, not how it is scored.
KIND_WORDS = re.compile(r"\b(lookup|verify|commit|read-only|mutat\w*|side[- ]effect\w*)\b", re.IGNORECASE)
DEFAULT_MAX_LENGTH = 2000
DEFAULT_MAX_ITEMS = 50
SANDBOX_KEYS = {"name", "title", "description", "clock", "context", "collections", "tools"}
COLLECTION_KEYS = {"description", "key", "fields", "records", "generate", "id_format", "id_start", "singular"}
FIELD_KEYS = {"type", "items", "enum", "required", "default", "hidden", "description"}
TOOL_KEYS = {"name", "description", "kind", "op", "custom", "parameters", "config"}
PARAM_KEYS = {"type", "description", "required", "enum", "items", "minimum", "maximum", "max_length", "max_items"}


# ----- YAML without surprises -----------------------------------------------------------------------------------------
_Base: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_Base):  # type: ignore[misc, valid-type]
    """Safe YAML where dates stay strings and only true/false are booleans (no 'no' -> False surprises)."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag not in ("tag:yaml.org,2002:timestamp", "tag:yaml.org,2002:bool")]
    for first, resolvers in _Base.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver("tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
                              list("tTfF"))


def read_yaml(path: Path) -> Any:
    """A YAML file read with the safe loader."""
    with open(path, encoding="utf-8") as fh:
        return yaml.load(fh, Loader=_Loader)  # noqa: S506 - a SafeLoader subclass


#: Sandbox name -> sha256 of its spec file as parsed, filled by :func:`load_sandbox`.
_FILE_DIGESTS: dict[str, str] = {}


# ----- the model ----------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class FieldSpec:
    """A typed field of a collection (type, enum, required, default, hidden)."""
    name: str
    type: str
    items: str | None = None
    enum: tuple[Any, ...] | None = None
    required: bool = False
    default: Any = None
    hidden: bool = False
    description: str = ""


@dataclass(frozen=True)
class CollectionSpec:
    """A collection of a sandbox: its key, typed fields and how new ids are made."""
    name: str
    key: str
    fields: dict[str, FieldSpec]
    description: str = ""
    id_format: str = ""
    id_start: int = 9001
    singular: str = ""

    @property
    def visible(self) -> tuple[str, ...]:
        """The fields tools show by default (not hidden)."""
        return tuple(n for n, f in self.fields.items() if not f.hidden)

    def defaults(self) -> dict[str, Any]:
        """A new record's defaults (lists copied, so records never share them)."""
        return {n: (list(f.default) if isinstance(f.default, list) else f.default)
                for n, f in self.fields.items() if f.default is not None}


@dataclass(frozen=True)
class ParamSpec:
    """A typed parameter of a tool, as its schema shows it."""
    name: str
    type: str
    description: str
    required: bool = False
    enum: tuple[Any, ...] | None = None
    items: str | None = None
    minimum: float | None = None
    maximum: float | None = None
    max_length: int = DEFAULT_MAX_LENGTH
    max_items: int = DEFAULT_MAX_ITEMS


@dataclass(frozen=True)
class ToolSpec:
    """A tool: its kind (lookup, verify, commit), parameters and the operation or function that runs it."""
    name: str
    description: str
    kind: str
    params: dict[str, ParamSpec]
    sandbox: str
    op: str | None = None
    custom: str | None = None
    config: dict[str, Any] = field(default_factory=dict)
    runner: Runner | None = field(default=None, compare=False, repr=False)

    @property
    def required(self) -> tuple[str, ...]:
        """The names of the required parameters."""
        return tuple(n for n, p in self.params.items() if p.required)


@dataclass(frozen=True)
class SandboxSpec:
    """A parsed sandbox: clock, context values, collections with their seed records, and tools."""
    name: str
    title: str
    description: str
    clock: str
    context: dict[str, Any]
    collections: dict[str, CollectionSpec]
    tools: dict[str, ToolSpec]
    path: str
    snapshot: Snapshot = field(compare=False, repr=False, default_factory=lambda: Snapshot({}))

    def kind_counts(self) -> dict[str, int]:
        """How many tools of each kind the sandbox has."""
        return {k: sum(t.kind == k for t in self.tools.values()) for k in KINDS}

    def __reduce__(self) -> Any:
        return (load_sandbox, (self.name,))


# ----- parsing --------------------------------------------------------------------------------------------------------
class _Problems(list):
    def add(self, where: str, message: str) -> None:
        self.append(f"{where}: {message}")


def _unknown(p: _Problems, where: str, data: Mapping[str, Any], allowed: set[str]) -> None:
    extra = sorted(set(data) - allowed)
    if extra:
        p.add(where, f"unknown key(s) {extra}; allowed: {sorted(allowed)}")


def _field(p: _Problems, where: str, name: str, data: Any) -> FieldSpec | None:
    if isinstance(data, str):
        data = {"type": data}
    if not isinstance(data, Mapping):
        p.add(where, "a field is a type name or a mapping {type, ...}")
        return None
    _unknown(p, where, data, FIELD_KEYS)
    kind = data.get("type")
    if kind not in FIELD_TYPES:
        p.add(where, f"type {kind!r} is not one of {FIELD_TYPES}")
        return None
    items = data.get("items", "string" if kind == "array" else None)
    if kind == "array" and items not in PARAM_TYPES[:-1] + ("object",):
        p.add(where, f"array items {items!r} must be a scalar type or object")
    enum = tuple(data["enum"]) if isinstance(data.get("enum"), list) else None
    spec = FieldSpec(name, kind, items, enum, bool(data.get("required", False)), data.get("default"),
                     bool(data.get("hidden", False)), str(data.get("description", "")))
    if spec.default is not None:
        _check_value(p, f"{where}.default", spec, spec.default)
    return spec


def _check_value(p: _Problems, where: str, spec: FieldSpec, value: Any) -> Any:
    if value is None:
        return None
    try:
        return coerce(spec.type, value, items=spec.items, enum=spec.enum)
    except Invalid as exc:
        p.add(where, str(exc))
        return value


def _collection(p: _Problems, sandbox: str, name: str, data: Any,
                done: dict[str, list[dict[str, Any]]]) -> CollectionSpec | None:
    where = f"collections.{name}"
    if not isinstance(data, Mapping) or not NAME.match(name):
        p.add(where, "a collection is a mapping under a snake_case name")
        return None
    _unknown(p, where, data, COLLECTION_KEYS)
    fields = {}
    for fname, fdata in (data.get("fields") or {}).items():
        spec = _field(p, f"{where}.fields.{fname}", fname, fdata)
        if spec is not None:
            fields[fname] = spec
    key = data.get("key")
    if key not in fields or fields[key].type != "string":
        p.add(where, f"key {key!r} must be a string field of the collection")
        return None
    singular = str(data.get("singular") or (name[:-1] if name.endswith("s") else name)).replace("_", " ")
    coll = CollectionSpec(name, key, fields, str(data.get("description", "")), str(data.get("id_format", "")),
                          int(data.get("id_start", 9001)), singular)
    records = list(data.get("records") or [])
    if data.get("generate") is not None:
        try:
            records += generate_records(sandbox, name, key, data["generate"], done)
        except (GenerateError, KeyError, TypeError, ValueError) as exc:
            p.add(f"{where}.generate", str(exc))
    done[name] = _records(p, where, coll, records)
    if coll.id_format:
        keys = {r.get(key) for r in done[name]}
        for n in range(coll.id_start, coll.id_start + 50):
            try:
                taken = fill_template(coll.id_format, {"n": n}) in keys
            except GenerateError as exc:
                p.add(where, f"id_format: {exc}")
                break
            if taken:
                p.add(where, f"new ids from id_format {coll.id_format!r} collide with seed records; raise id_start")
                break
    return coll


def _records(p: _Problems, where: str, coll: CollectionSpec, records: list[Any]) -> list[dict[str, Any]]:
    out, seen = [], set()
    for i, record in enumerate(records):
        at = f"{where}.records[{i}]"
        if not isinstance(record, Mapping):
            p.add(at, "a record is a mapping")
            continue
        extra = sorted(set(record) - set(coll.fields))
        if extra:
            p.add(at, f"field(s) {extra} are not declared")
        clean = {}
        for fname, spec in coll.fields.items():
            if fname in record:
                clean[fname] = _check_value(p, f"{at}.{fname}", spec, record[fname])
            elif spec.required:
                p.add(at, f"required field {fname!r} is missing")
            elif spec.default is not None:
                clean[fname] = list(spec.default) if isinstance(spec.default, list) else spec.default
        key = clean.get(coll.key)
        if not isinstance(key, str) or not key:
            p.add(at, f"key field {coll.key!r} must be a non-empty string")
            continue
        if key in seen:
            p.add(at, f"duplicate key {key!r}")
        seen.add(key)
        out.append(clean)
    return out


def _param(p: _Problems, where: str, name: str, data: Any) -> ParamSpec | None:
    if not isinstance(data, Mapping) or not NAME.match(name):
        p.add(where, "a parameter is a mapping under a snake_case name")
        return None
    _unknown(p, where, data, PARAM_KEYS)
    kind = data.get("type")
    if kind not in PARAM_TYPES:
        p.add(where, f"type {kind!r} is not one of {PARAM_TYPES} (parameters are flat: no objects)")
        return None
    items = data.get("items", "string" if kind == "array" else None)
    if kind == "array" and items not in PARAM_TYPES[:-1]:
        p.add(where, f"array items {items!r} must be a scalar type")
    if not str(data.get("description", "")).strip():
        p.add(where, "every parameter needs a description")
    enum = data.get("enum")
    if enum is not None and (not isinstance(enum, list) or not enum or kind not in ("string", "integer", "array")):
        p.add(where, "enum is a non-empty list on a string, integer or array parameter")
        enum = None
    return ParamSpec(name, kind, str(data.get("description", "")).strip(), bool(data.get("required", False)),
                     tuple(enum) if enum else None, items, data.get("minimum"), data.get("maximum"),
                     int(data.get("max_length", DEFAULT_MAX_LENGTH)), int(data.get("max_items", DEFAULT_MAX_ITEMS)))


def _tool(p: _Problems, sandbox: str, index: int, data: Any, collections: dict[str, CollectionSpec]) -> ToolSpec | None:
    if not isinstance(data, Mapping):
        p.add(f"tools[{index}]", "a tool is a mapping")
        return None
    name = data.get("name")
    where = f"tools.{name}" if isinstance(name, str) else f"tools[{index}]"
    _unknown(p, where, data, TOOL_KEYS)
    if not isinstance(name, str) or not NAME.match(name):
        p.add(where, "name must be snake_case")
        return None
    description = str(data.get("description", "")).strip()
    if len(description) < 20:
        p.add(where, "description must say what the tool does (at least 20 characters)")
    if KIND_WORDS.search(description):
        p.add(where, f"description must not reveal the tool's kind ({KIND_WORDS.search(description).group(0)!r})")
    kind = data.get("kind")
    if kind not in KINDS:
        p.add(where, f"kind {kind!r} is not one of {KINDS}")
        return None
    params = {}
    for pname, pdata in (data.get("parameters") or {}).items():
        spec = _param(p, f"{where}.parameters.{pname}", pname, pdata)
        if spec is not None:
            params[pname] = spec
    op, custom = data.get("op"), data.get("custom")
    if (op is None) == (custom is None):
        p.add(where, "give exactly one of 'op' (a generic operation) or 'custom' (a registered function)")
        return None
    config = dict(data.get("config") or {})
    tool = ToolSpec(name, description, kind, params, sandbox, op, custom, config)
    try:
        if op is not None:
            runner = compile_op(tool, collections)
        else:
            fn = custom_functions().get(str(custom))
            if fn is None:
                raise ConfigError(f"custom function {custom!r} is not registered (see envs/tools/custom/)")
            runner = _bind(fn, config)
    except ConfigError as exc:
        p.add(where, str(exc))
        return None
    except (TypeError, AttributeError, KeyError, ValueError) as exc:
        p.add(where, f"config does not fit op {op!r}: {exc!r}")
        return None
    return ToolSpec(name, description, kind, params, sandbox, op, custom, config, runner)


def _bind(fn: Any, config: dict[str, Any]) -> Runner:
    return lambda ctx, args: fn(ctx, args, config)


def parse_sandbox(data: Any, name: str, path: str = "") -> tuple[SandboxSpec | None, list[str]]:
    """The spec and a list of problems (empty when the spec is sound)."""
    p = _Problems()
    if not isinstance(data, Mapping):
        return None, ["the file must hold a mapping"]
    _unknown(p, "sandbox", data, SANDBOX_KEYS)
    if data.get("name") != name:
        p.add("name", f"must be {name!r} (the CamelCase of the file name), got {data.get('name')!r}")
    try:
        clock = normalize_datetime(str(data.get("clock", "")))
    except Invalid as exc:
        p.add("clock", f"the frozen 'now' of the sandbox: {exc}")
        clock = "2025-01-01T09:00"
    context = data.get("context") or {}
    if not isinstance(context, Mapping):
        p.add("context", "context maps names to values tools read as ctx.<name>")
        context = {}
    done: dict[str, list[dict[str, Any]]] = {}
    collections: dict[str, CollectionSpec] = {}
    for cname, cdata in (data.get("collections") or {}).items():
        coll = _collection(p, name, str(cname), cdata, done)
        if coll is not None:
            collections[coll.name] = coll
    if not collections:
        p.add("collections", "a sandbox needs at least one collection")
    tools: dict[str, ToolSpec] = {}
    for i, tdata in enumerate(data.get("tools") or []):
        tool = _tool(p, name, i, tdata, collections)
        if tool is None:
            continue
        if tool.name in tools:
            p.add(f"tools.{tool.name}", "duplicate tool name")
        tools[tool.name] = tool
    if not tools:
        p.add("tools", "a sandbox needs at least one tool")
    snapshot = Snapshot({c: {r[collections[c].key]: r for r in done.get(c, [])} for c in collections},
                        sandbox_snapshot, (name,))
    spec = SandboxSpec(name, str(data.get("title", name)), str(data.get("description", "")), clock, dict(context),
                       collections, tools, path, snapshot)
    return spec, list(p)


def check_sandbox(name: str) -> list[str]:
    """Every problem of a sandbox's spec file (the meta-validator; never raises)."""
    try:
        path = catalog.sandbox_path(name)
        data = read_yaml(path)
    except (KeyError, OSError, yaml.YAMLError) as exc:
        return [f"cannot read sandbox {name!r}: {exc}"]
    return parse_sandbox(data, name, str(path))[1]


@cache
def load_sandbox(name: str) -> SandboxSpec:
    """The sandbox called ``name`` (cached per process); raises :class:`SpecError` listing every problem."""
    path = catalog.sandbox_path(name)
    data = read_yaml(path)
    _FILE_DIGESTS[name] = sha256_text(canonical_json(data))  # before parsing, which may normalise the data
    spec, problems = parse_sandbox(data, name, str(path))
    if problems or spec is None:
        raise SpecError(str(path), problems)
    return spec


@cache
def sandbox_digest(name: str) -> str:
    """sha256 of the sandbox's spec file as parsed (comments and layout do not count) and of its seed records as
    generated, for benchmark fingerprints. The file is hashed when :func:`load_sandbox` reads it, not read again."""
    records = load_sandbox(name).snapshot.collections
    return sha256_text(canonical_json({"spec": _FILE_DIGESTS[name], "records": records}))


def sandbox_snapshot(name: str) -> Snapshot:
    """The seed records of a sandbox (shared, never changed)."""
    return load_sandbox(name).snapshot


def tool_kind_counts(names: tuple[str, ...] | None = None) -> dict[str, dict[str, int]]:
    """Sandbox -> {lookup, verify, commit, tools} counts."""
    out = {}
    for name in names or catalog.sandbox_names():
        counts = load_sandbox(name).kind_counts()
        out[name] = {**counts, "tools": sum(counts.values())}
    return out


__all__ = ["KINDS", "OPS_BY_KIND", "CollectionSpec", "FieldSpec", "ParamSpec", "SandboxSpec", "SpecError",
           "ToolSpec", "check_sandbox", "load_sandbox", "parse_sandbox", "read_yaml", "tool_kind_counts"]
