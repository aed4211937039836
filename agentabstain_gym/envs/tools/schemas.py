"""OpenAI function-calling schemas generated from sandbox specs, kept flat.

Flat means what every function-calling API accepts: one object of named parameters with scalar or
array-of-scalar types, no ``$ref``, ``anyOf`` / ``oneOf`` / ``allOf`` or ``additionalProperties``. The tool's kind
(lookup / verify / commit) is scoring metadata; it is never written into a schema (see :func:`tool_kinds`).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable
from typing import Any

from agentabstain_gym.envs.tools.spec import ParamSpec, ToolSpec, load_sandbox
from agentabstain_gym.envs.tools.values import EXAMPLES, JSON_TYPES

FORBIDDEN_KEYS = ("$ref", "$defs", "definitions", "anyOf", "oneOf", "allOf", "not", "additionalProperties",
                  "patternProperties")
PARAMETER_KEYS = {"type", "description", "enum", "items", "format", "minimum", "maximum", "maxLength", "maxItems"}


def _parameter(p: ParamSpec) -> dict[str, Any]:
    json_type, fmt = JSON_TYPES[p.type]
    description = p.description
    if p.type in EXAMPLES and EXAMPLES[p.type] not in description:
        description = f"{description} (e.g. {EXAMPLES[p.type]})"
    out: dict[str, Any] = {"type": json_type, "description": description}
    if fmt:
        out["format"] = fmt
    if p.type == "array":
        item_type, item_fmt = JSON_TYPES[p.items or "string"]
        out["items"] = {"type": item_type, **({"format": item_fmt} if item_fmt else {})}
        if p.enum:
            out["items"]["enum"] = list(p.enum)
    elif p.enum:
        out["enum"] = list(p.enum)
    if p.minimum is not None:
        out["minimum"] = p.minimum
    if p.maximum is not None:
        out["maximum"] = p.maximum
    return out


_CACHE: dict[tuple[str, str, int], dict[str, Any]] = {}


def _schema(tool: ToolSpec) -> dict[str, Any]:
    key = (tool.sandbox, tool.name, id(tool))
    if key not in _CACHE:
        _CACHE[key] = _build(tool)
    return _CACHE[key]


def _build(tool: ToolSpec) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": {
                "type": "object",
                "properties": {name: _parameter(p) for name, p in tool.params.items()},
                "required": list(tool.required),
            },
        },
    }


def schema_of(tool: ToolSpec) -> dict[str, Any]:
    """One tool's schema (a fresh copy: callers may change it)."""
    return copy.deepcopy(_schema(tool))


_LISTS: dict[tuple[int, ...], tuple[tuple[ToolSpec, ...], str]] = {}


def schemas_json(tools: Iterable[ToolSpec]) -> str:
    """The schemas of ``tools``, in order, as one cached JSON text (shared by every task with this inventory)."""
    tools = tuple(tools)
    key = tuple(id(t) for t in tools)
    hit = _LISTS.get(key)
    if hit is None or any(a is not b for a, b in zip(hit[0], tools, strict=True)):
        hit = _LISTS[key] = (tools, json.dumps([_schema(t) for t in tools]))
    return hit[1]


def schemas_for(tools: Iterable[ToolSpec]) -> list[dict[str, Any]]:
    """Fresh schemas of ``tools``, in order (rebuilt from a cached JSON text: cheaper than a deep copy per reset)."""
    return json.loads(schemas_json(tools))


def clear_schema_caches() -> None:
    """Forget the cached schemas (for tests that time what a newly built task list costs)."""
    _CACHE.clear()
    _LISTS.clear()


def tool_schemas(sandbox: str, tools: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """The OpenAI function-calling schemas of a sandbox's tools (all, or those named, in spec order).

    Examples:
        >>> [s["function"]["name"] for s in tool_schemas("UserProfile")]
        ['get_profile', 'check_handle_available', 'update_profile']
    """
    spec = load_sandbox(sandbox)
    wanted = set(tools) if tools is not None else None
    if wanted is not None and wanted - set(spec.tools):
        raise KeyError(f"{sandbox} has no tool(s) {sorted(wanted - set(spec.tools))}")
    return schemas_for(t for t in spec.tools.values() if wanted is None or t.name in wanted)


def tool_kinds(sandbox: str) -> dict[str, str]:
    """Tool name -> kind (lookup | verify | commit): metadata for scoring and analysis, not shown to agents."""
    return {name: t.kind for name, t in load_sandbox(sandbox).tools.items()}


def flat_schema_problems(schema: Any) -> list[str]:
    """What makes ``schema`` not a flat OpenAI function schema (empty when it is one)."""
    problems: list[str] = []

    def walk(node: Any, where: str) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key in FORBIDDEN_KEYS:
                    problems.append(f"{where}: forbidden key {key!r}")
                walk(value, f"{where}.{key}")
        elif isinstance(node, list):
            for i, value in enumerate(node):
                walk(value, f"{where}[{i}]")

    walk(schema, "schema")
    if not isinstance(schema, dict) or schema.get("type") != "function" or set(schema) != {"type", "function"}:
        return problems + ["top level must be {type: function, function: {...}}"]
    fn = schema["function"]
    if set(fn) != {"name", "description", "parameters"} or not fn.get("description"):
        problems.append("function must have exactly name, description and parameters")
    params = fn.get("parameters", {})
    if params.get("type") != "object" or set(params) != {"type", "properties", "required"}:
        problems.append("parameters must be {type: object, properties, required}")
    props = params.get("properties", {})
    for name, prop in props.items():
        if set(prop) - PARAMETER_KEYS:
            problems.append(f"{name}: unexpected key(s) {sorted(set(prop) - PARAMETER_KEYS)}")
        if prop.get("type") not in ("string", "integer", "number", "boolean", "array"):
            problems.append(f"{name}: type {prop.get('type')!r} is not flat")
        if prop.get("type") == "array" and prop.get("items", {}).get("type") not in ("string", "integer", "number",
                                                                                    "boolean"):
            problems.append(f"{name}: array items must be scalars")
        if not prop.get("description"):
            problems.append(f"{name}: no description")
    if any(r not in props for r in params.get("required", [])):
        problems.append("required names a parameter that is not in properties")
    return problems


# ----- OpenAI strict mode ---------------------------------------------------------------------------------------------
def strict_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The OpenAI strict-mode form of a function schema (a fresh copy; the input is left as it is).

    Strict mode (``"strict": true``) needs every property listed in ``required`` and ``additionalProperties: false``
    on every object, so an optional parameter becomes required-but-nullable:
    ``{"anyOf": [<its schema>, {"type": "null"}], "description": ...}``. The tools and the families' action parsing
    treat ``null`` exactly as an omitted argument, so the two forms behave the same.
    """
    out = copy.deepcopy(schema)
    fn = out.get("function") if isinstance(out.get("function"), dict) else out
    fn["parameters"] = _strict_object(fn.get("parameters") or {"type": "object", "properties": {}})
    fn["strict"] = True
    return out


def _strict_object(node: dict[str, Any]) -> dict[str, Any]:
    props = node.get("properties") or {}
    required = set(node.get("required") or [])
    out = {k: v for k, v in node.items() if k not in ("properties", "required", "additionalProperties")}
    new_props: dict[str, Any] = {}
    for name, prop in props.items():
        prop = _strict_node(dict(prop))
        new_props[name] = prop if name in required else _nullable(prop)
    out.update({"type": "object", "properties": new_props, "required": list(props), "additionalProperties": False})
    return out


def _strict_node(prop: dict[str, Any]) -> dict[str, Any]:
    kind = prop.get("type")
    if kind == "object" or (isinstance(kind, list) and "object" in kind):
        return _strict_object(prop)
    if isinstance(prop.get("items"), dict):
        prop["items"] = _strict_node(dict(prop["items"]))
    if isinstance(prop.get("anyOf"), list):
        prop["anyOf"] = [_strict_node(dict(p)) for p in prop["anyOf"]]
    return prop


def _nullable(prop: dict[str, Any]) -> dict[str, Any]:
    """``prop`` or null, as ``anyOf``: a ``type`` list such as ``["string", "null"]`` is valid too, but the Hermes
    chat template (vLLM's ``tool_chat_template_hermes.jinja``) recurses without end on it when it renders the
    tools, while it renders ``anyOf`` fine."""
    if any(p == {"type": "null"} for p in prop.get("anyOf") or []) or prop.get("type") == "null":
        return prop
    described = {"description": prop.pop("description")} if "description" in prop else {}
    return {"anyOf": [prop, {"type": "null"}], **described}
