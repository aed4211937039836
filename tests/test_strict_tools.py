"""OpenAI strict-mode tool schemas: every schema the suite offers, made strict, passes a checker written from
OpenAI's documented rules; an optional argument sent as null behaves exactly as one left out, for every tool that
has optional arguments; the export and the LLM agent write strict schemas when asked."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from functools import cache
from typing import Any

from conftest import skip_or_fail

from agentabstain_gym.agents.llm import LLMAgent, family_table
from agentabstain_gym.envs.tools import catalog
from agentabstain_gym.envs.tools.engine import validate_arguments
from agentabstain_gym.envs.tools.schemas import strict_schema, tool_schemas
from agentabstain_gym.envs.tools.tasks import task_setups

try:
    import jsonschema
except ImportError:
    skip_or_fail("jsonschema is not installed (pip install jsonschema)", allow_module_level=True)

# OpenAI's documented subset for strict mode (function calling / structured outputs): supported types and keywords,
# supported string formats, and the limits on nesting and size.
TYPES = {"string", "number", "integer", "boolean", "object", "array", "null"}
KEYWORDS = {"type", "description", "title", "enum", "const", "properties", "required", "additionalProperties",
            "items", "anyOf", "$ref", "$defs", "format", "pattern", "minimum", "maximum", "exclusiveMinimum",
            "exclusiveMaximum", "multipleOf", "minItems", "maxItems"}
FORMATS = {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
MAX_DEPTH, MAX_PROPERTIES, MAX_ENUM_VALUES = 10, 5000, 1000
_NAME = re.compile(r"\A[a-zA-Z0-9_-]{1,64}\Z")


def strict_problems(schema: dict[str, Any]) -> list[str]:
    """Why ``schema`` (a ``{"type": "function", "function": ...}`` tool) would be refused in strict mode."""
    problems: list[str] = []
    fn = schema.get("function") or {}
    if not _NAME.match(str(fn.get("name", ""))):
        problems.append("function name must match ^[a-zA-Z0-9_-]{1,64}$")
    if fn.get("strict") is not True:
        problems.append('"strict": true is missing')
    params = fn.get("parameters")
    if not isinstance(params, dict) or params.get("type") != "object" or "anyOf" in params:
        return [*problems, "parameters must be an object schema (not anyOf) at the root"]
    try:
        jsonschema.Draft202012Validator.check_schema(params)
    except jsonschema.SchemaError as exc:
        problems.append(f"not a valid JSON Schema: {exc.message}")
    counts = {"properties": 0, "enum": 0}

    def walk(node: Any, where: str, depth: int) -> None:
        if not isinstance(node, dict):
            problems.append(f"{where}: not a schema")
            return
        problems.extend(f"{where}: unsupported keyword {k!r}" for k in sorted(set(node) - KEYWORDS))
        kinds = node.get("type", [])
        for kind in kinds if isinstance(kinds, list) else [kinds]:
            if kind not in TYPES:
                problems.append(f"{where}: unsupported type {kind!r}")
        if "type" not in node and "anyOf" not in node and "$ref" not in node and "enum" not in node:
            problems.append(f"{where}: no type")
        if "format" in node and node["format"] not in FORMATS:
            problems.append(f"{where}: unsupported format {node['format']!r}")
        counts["enum"] += len(node.get("enum") or [])
        if node.get("type") == "object" or "properties" in node:
            if depth > MAX_DEPTH:
                problems.append(f"{where}: objects nested deeper than {MAX_DEPTH}")
            if node.get("additionalProperties") is not False:
                problems.append(f"{where}: additionalProperties must be false")
            props = node.get("properties") or {}
            required = node.get("required")
            if not isinstance(required, list) or sorted(required) != sorted(props) or len(set(required)) != len(
                    required):
                problems.append(f"{where}: every property must be required")
            counts["properties"] += len(props)
            for name, prop in props.items():
                walk(prop, f"{where}.{name}", depth + 1)
        if isinstance(node.get("items"), dict):
            walk(node["items"], f"{where}[]", depth)
        for i, sub in enumerate(node.get("anyOf") or []):
            walk(sub, f"{where}.anyOf[{i}]", depth)

    walk(params, "parameters", 1)
    if counts["properties"] > MAX_PROPERTIES or counts["enum"] > MAX_ENUM_VALUES:
        problems.append("too many properties or enum values")
    return problems


@cache
def every_schema() -> tuple[tuple[str, dict[str, Any]], ...]:
    """(where, schema) for every tool the suite offers: each sandbox's tools and each family's actions."""
    out = [(sandbox, s) for sandbox in catalog.sandbox_names() for s in tool_schemas(sandbox)]
    for family in ("qa", "web", "terminal", "tools"):
        out += [(family, {"type": "function", "function": {"name": t["name"], "description": t["description"],
                                                           "parameters": t["parameters"]}})
                for t in family_table(family)["tools"]]
    return tuple(out)


def optionals(schema: dict[str, Any]) -> list[str]:
    params = schema["function"]["parameters"]
    return [p for p in params.get("properties") or {} if p not in (params.get("required") or [])]


def test_every_strict_schema_passes_the_strict_mode_rules() -> None:
    schemas = every_schema()
    assert len(schemas) > 500
    failing_originals = 0
    for where, schema in schemas:
        strict = strict_schema(schema)
        assert strict_problems(strict) == [], (where, strict)
        assert strict_schema(strict) == strict  # idempotent: an agent's strict transcript exports unchanged
        failing_originals += bool(strict_problems(schema))
        params = strict["function"]["parameters"]
        names = list(params["properties"])
        base = {n: _example(schema["function"]["parameters"]["properties"][n]) for n in names}
        validator = jsonschema.Draft202012Validator(params)
        validator.validate({**base, **{n: None for n in optionals(schema)}})
        validator.validate(base)
        for name in optionals(schema):  # strict: an optional must still be sent (as null)
            assert not validator.is_valid({k: v for k, v in base.items() if k != name})
        assert not validator.is_valid({**base, "unexpected_extra": 1})
    assert failing_originals == len(schemas)  # none was strict before (additionalProperties unset)


def test_the_checker_refuses_what_strict_mode_refuses() -> None:
    good = strict_schema({"type": "function", "function": {"name": "f", "description": "d", "parameters": {
        "type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}, "required": ["a"]}}})
    assert strict_problems(good) == []
    assert good["function"]["parameters"]["properties"]["b"] == {"anyOf": [{"type": "integer"}, {"type": "null"}]}
    cases = {"additionalProperties": lambda p: p.pop("additionalProperties"),
             "required": lambda p: p.update(required=["a"]),
             "keyword": lambda p: p["properties"]["a"].update(minLength=1),
             "format": lambda p: p["properties"]["a"].update(format="uri"),
             "type": lambda p: p["properties"]["a"].update(type="text")}
    for what, spoil in cases.items():
        bad = json.loads(json.dumps(good))
        spoil(bad["function"]["parameters"])
        assert strict_problems(bad), what


def _example(prop: dict[str, Any]) -> Any:
    kind = prop.get("type")
    if prop.get("enum"):
        return prop["enum"][0]
    if prop.get("format") == "date":
        return "2025-03-13"
    if prop.get("format") == "date-time":
        return "2025-03-13T15:30"
    if kind in ("integer", "number"):
        return prop.get("minimum", 1)
    return {"string": "x", "boolean": True, "array": []}.get(kind, "x")


def _gold_arguments() -> dict[str, dict[str, Any]]:
    """A valid argument set per tool name, from the tasks' gold calls (the first seen)."""
    out: dict[str, dict[str, Any]] = {}
    for setup in task_setups().values():
        for call in setup.task.payload.get("gold") or []:
            out.setdefault(call["tool"], dict(call.get("arguments") or {}))
    return out


def _sandbox_tools_with_optionals() -> Iterator[tuple[str, str, list[str]]]:
    for sandbox in catalog.sandbox_names():
        for schema in tool_schemas(sandbox):
            if optionals(schema):
                yield sandbox, schema["function"]["name"], optionals(schema)


def test_a_null_optional_argument_is_the_same_as_leaving_it_out() -> None:
    gold = _gold_arguments()
    engines: dict[tuple[str, str], Any] = {}
    for setup in task_setups().values():
        for name in setup.data.tools:
            engines.setdefault((setup.main.world.tools[name].sandbox, name), setup.main)
    cases = list(_sandbox_tools_with_optionals())
    assert cases
    ran = succeeded = 0
    for sandbox, name, opts in cases:
        spec = next(t for t in catalog_tools(sandbox) if t.name == name)
        schema = next(s for s in tool_schemas(sandbox) if s["function"]["name"] == name)
        props = schema["function"]["parameters"]["properties"]
        args = gold.get(name) or {r: _example(props[r]) for r in spec.required}
        omitted = {k: v for k, v in args.items() if k not in opts}
        nulled = {**omitted, **{o: None for o in opts}}
        assert _validated(spec, nulled) == _validated(spec, omitted), (sandbox, name)
        setup = engines.get((sandbox, name))
        if setup is None:
            continue
        a, b = setup.engine(), setup.engine()
        first, second = a.call(name, nulled), b.call(name, omitted)
        assert first.observation == second.observation, (sandbox, name)
        assert a.state.fingerprint() == b.state.fingerprint() and first.arguments == second.arguments
        ran += 1
        succeeded += first.ok
    assert ran >= len(cases) // 2 and succeeded >= len(cases) // 2  # most run the tool itself, not an error


def catalog_tools(sandbox: str) -> list[Any]:
    from agentabstain_gym.envs.tools.spec import load_sandbox

    return list(load_sandbox(sandbox).tools.values())


def _validated(spec: Any, arguments: dict[str, Any]) -> Any:
    from agentabstain_gym.envs.tools.errors import ToolError

    try:
        return validate_arguments(spec, arguments)
    except ToolError as exc:
        return exc.to_dict()


def test_family_actions_take_null_as_left_out() -> None:
    agent = LLMAgent(family="tools", model="m")
    schema = {"type": "function", "function": {"name": "find", "description": "d", "parameters": {
        "type": "object", "properties": {"q": {"type": "string"}, "limit": {"type": "integer"}}, "required": ["q"]}}}
    agent._start("hi", {"turn": 0, "max_turns": 5, "instruction": "x", "tools": [schema]})
    for family in ("qa", "web", "terminal", "tools"):
        for t in family_table(family)["tools"]:
            tool = agent._tool(t["name"]) or LLMAgent(family=family, model="m")._tool(t["name"])
            if tool is None:
                continue
            args = {n: "v" for n in t["parameters"].get("properties") or {}}
            assert tool.to_action({**args, **{o: None for o in optionals({"function": t})}}) == tool.to_action(args)
            for required in t["parameters"].get("required") or []:
                assert tool.to_action({**args, required: None}) is None  # a required argument sent as null
    nulled = json.loads(agent._call_action("find", '{"q": "a", "limit": null}'))
    assert nulled == {"tool": "find", "arguments": {"q": "a", "limit": None}}  # the sandbox drops the null


def test_export_and_agent_write_strict_schemas(tmp_path, monkeypatch) -> None:
    import gymnasium as gym

    import agentabstain_gym  # noqa: F401 - registers the ids
    from agentabstain_gym.agents import make_agent
    from agentabstain_gym.core.record import append_records
    from agentabstain_gym.export import main
    from agentabstain_gym.runner import run_episode

    env = gym.make("AbstainTools-v0")
    agent = make_agent("heuristic", "AbstainTools-v0")
    records = [run_episode(env, agent, t.task_id, seed=0) for t in env.unwrapped.tasks(split="test")[:8]]
    append_records(tmp_path / "runs.jsonl", records)
    assert main([str(tmp_path / "runs.jsonl"), "--out", str(tmp_path / "chat.jsonl"), "--style", "tools",
                 "--strict-tools"]) == 0
    rows = [json.loads(line) for line in (tmp_path / "chat.jsonl").read_text().splitlines()]
    calls = 0
    for row in rows:
        by_name = {t["function"]["name"]: t for t in row["tools"]}
        assert all(strict_problems(t) == [] for t in row["tools"])
        for m in row["messages"]:
            for call in m.get("tool_calls") or []:  # every property written, optional ones as null
                params = by_name[call["function"]["name"]]["function"]["parameters"]
                assert sorted(call["function"]["arguments"]) == sorted(params["properties"])
                calls += 1
    assert calls > len(rows)
    monkeypatch.setenv("ABSTAIN_GYM_LLM_STRICT_TOOLS", "1")
    strict_agent = LLMAgent(family="qa", model="m")
    strict_agent._start("q", {"turn": 0, "max_turns": 5})
    assert strict_agent.strict_tools and all(strict_problems(s) == [] for s in strict_agent.tool_schemas())
    assert not LLMAgent(family="qa", model="m", strict_tools=False).strict_tools
