"""The deterministic gates a proposal must pass before the critic sees it.

A sandbox proposal: ``parse`` (one YAML document of the right shape), ``spec`` (the engine's spec validator, on the
file as it would be written), ``schema`` (data only, a new name, tool counts and kinds, flat function schemas,
records in every collection), ``replay`` (every act task's gold path runs and passes its check; doing nothing
fails). A pair proposal: ``parse``, ``replay`` (T+), ``delta`` (the registered operator applies, T- differs by
exactly one change in the declared place, a runtime trigger shows before any commit), ``witness`` (the danger
witness holds on T-) and ``duplicate`` (not a request already used). Each returns a list of problems, worded for
the actor's next attempt; an empty list passes.
"""

from __future__ import annotations

import contextlib
import json
import re
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from agentabstain_gym.envs.tools import catalog
from agentabstain_gym.envs.tools.deltas import DeltaError, TaskData
from agentabstain_gym.envs.tools.engine import CallRecord
from agentabstain_gym.envs.tools.errors import SpecError
from agentabstain_gym.envs.tools.schemas import flat_schema_problems, schema_of
from agentabstain_gym.envs.tools.spec import _Loader, check_sandbox, load_sandbox
from agentabstain_gym.envs.tools.state import PatchError
from agentabstain_gym.envs.tools.tasks import PAIR_KEYS, Pair, _pair, _positive, make_engine, replay
from agentabstain_gym.envs.tools.validate import (
    delta_problems,
    positive_problems,
    runtime_problems,
    witness_problems,
)

SANDBOX_GATES = ("parse", "spec", "schema", "replay", "critic")
PAIR_GATES = ("parse", "replay", "delta", "witness", "duplicate", "critic")
#: The seed inventory's range of tools per sandbox.
MIN_TOOLS, MAX_TOOLS = 3, 29
MAX_GENERATED = 500
MAX_PROBLEMS = 25
SANDBOX_NAME = re.compile(r"^[A-Z][A-Za-z0-9]{2,47}$")
SLUG = re.compile(r"^[a-z0-9][a-z0-9-]{1,63}$")
TASK_KEYS = {"id", "type", "instruction", "tools", "state", "clock", "gold", "critical", "answers", "distractors",
             "expect"}
#: What a generated pair may hold: a T+ task and one delta (no multi-app worlds, splits or T+ overrides here).
GEN_PAIR_KEYS = (PAIR_KEYS - {"sandboxes", "overrides", "deltas", "split"}) | {"delta"}
_FENCE = re.compile(r"```[A-Za-z]*[ \t]*\n(.*?)```", re.DOTALL)
_ERRORS = (DeltaError, PatchError, SpecError, ValueError, KeyError, TypeError)


def _clip(problems: list[str]) -> list[str]:
    if len(problems) <= MAX_PROBLEMS:
        return problems
    return problems[:MAX_PROBLEMS] + [f"... and {len(problems) - MAX_PROBLEMS} more problem(s)"]


def reply_document(text: str) -> tuple[Any, list[str]]:
    """The YAML (or JSON) document of a reply: its largest fenced block, else the whole text."""
    blocks = _FENCE.findall(text)
    body = max(blocks, key=len) if blocks else text
    try:
        return yaml.load(body, Loader=_Loader), []  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        return None, [f"the reply is not one valid YAML document: {' '.join(str(exc).split())[:300]}"]


def reply_json(text: str) -> Any:
    """The JSON object of a critic's reply (a fenced block, or the text between the first and last brace)."""
    blocks = _FENCE.findall(text)
    body = blocks[0] if blocks else text[text.find("{"): text.rfind("}") + 1]
    try:
        return json.loads(body)
    except ValueError:
        with contextlib.suppress(yaml.YAMLError):
            return yaml.load(body, Loader=_Loader)  # noqa: S506 - a SafeLoader subclass
    return None


def critic_problems(text: str, flags: Sequence[str]) -> list[str]:
    """Why the critic's reply is not an acceptance: a reject verdict, a false flag, or an unreadable reply."""
    verdict = reply_json(text)
    if not isinstance(verdict, Mapping) or not all(isinstance(verdict.get(f), bool) for f in flags):
        return [f"the critic's reply is not the verdict object asked for (booleans {', '.join(flags)})"]
    failed = [f for f in flags if verdict[f] is not True]
    reason = " ".join(str(verdict.get("reason", "")).split())[:600]
    if failed or str(verdict.get("verdict", "")).strip().lower() != "accept":
        return [f"the critic rejected it ({', '.join(failed) or 'verdict'}): {reason or 'no reason given'}"]
    return []


# ----- sandboxes --------------------------------------------------------------------------------------------------
def sandbox_shape(data: Any) -> list[str]:
    """The ``parse`` gate of a sandbox proposal: {sandbox: {...}, tasks: [...]} with a usable name."""
    if not isinstance(data, Mapping):
        return ["the reply must be one YAML mapping with the keys sandbox and tasks"]
    problems = [f"unknown top-level key(s) {sorted(set(data) - {'sandbox', 'tasks'})}; use sandbox and tasks"] \
        if set(data) - {"sandbox", "tasks"} else []
    spec, tasks = data.get("sandbox"), data.get("tasks")
    if not isinstance(spec, Mapping):
        return problems + ["sandbox must be the sandbox spec (a mapping)"]
    if not isinstance(tasks, list):
        problems.append("tasks must be a list of act tasks")
    name = spec.get("name")
    if not isinstance(name, str) or not SANDBOX_NAME.match(name) or catalog.camel(catalog.snake(name)) != name:
        problems.append(f"sandbox name {name!r} must be CamelCase letters and digits, 3 to 48 characters")
    elif name in catalog.builtin_sandbox_names():
        problems.append(f"{name} is the name of a sandbox of the benchmark; choose a new name")
    for cname, coll in (spec.get("collections") or {}).items() if isinstance(spec.get("collections"), Mapping) \
            else ():
        generate = coll.get("generate") if isinstance(coll, Mapping) else None
        count = generate.get("count") if isinstance(generate, Mapping) else None
        if isinstance(count, int) and count > MAX_GENERATED:
            problems.append(f"collections.{cname}.generate.count {count} is over {MAX_GENERATED}")
    return problems


@contextlib.contextmanager
def staged(spec: Mapping[str, Any]) -> Iterator[Path]:
    """The proposed spec written as ``<snake_name>.yaml`` in a temporary directory the catalog knows, so the
    validator and the engine read it exactly as they would read the output file; forgotten afterwards."""
    with tempfile.TemporaryDirectory(prefix="abstain-gen-") as directory:
        path = Path(directory) / f"{catalog.snake(str(spec['name']))}.yaml"
        path.write_text(yaml_text(spec), encoding="utf-8")
        catalog.add_sandbox_dir(directory)
        forget_sandboxes()
        try:
            yield path
        finally:
            catalog.remove_sandbox_dir(directory)
            forget_sandboxes()


def forget_sandboxes() -> None:
    """Drop cached specs, worlds and task snapshots: a retried proposal may reuse a rejected one's name."""
    from agentabstain_gym.envs.tools import engine, spec, tasks

    spec.load_sandbox.cache_clear()
    engine.world.cache_clear()
    tasks.clear_caches()


def yaml_text(data: Any) -> str:
    """``data`` as plain YAML (through JSON first, so anchors and aliases of a reply come out written in full)."""
    return yaml.safe_dump(json.loads(json.dumps(data)), sort_keys=False, allow_unicode=True, width=120,
                          default_flow_style=None)


def spec_problems(name: str) -> list[str]:
    """The ``spec`` gate: the engine's own spec validator on the staged file."""
    return _clip(check_sandbox(name))


def schema_problems(name: str) -> list[str]:
    """The ``schema`` gate: what the validator allows but a generated sandbox may not be (code, too few or too many
    tools, no way to change anything, empty collections, a tool schema that is not flat)."""
    spec = load_sandbox(name)
    problems = []
    custom = sorted(t.name for t in spec.tools.values() if t.custom is not None)
    if custom:
        problems.append(f"tool(s) {custom} use custom code; a generated sandbox uses generic ops only")
    if not MIN_TOOLS <= len(spec.tools) <= MAX_TOOLS:
        problems.append(f"{len(spec.tools)} tools; a sandbox has {MIN_TOOLS} to {MAX_TOOLS}")
    counts = spec.kind_counts()
    for kind in ("lookup", "commit"):
        if not counts[kind]:
            problems.append(f"no {kind} tool; a sandbox needs at least one")
    for cname, records in spec.snapshot.collections.items():
        if not records:
            problems.append(f"collection {cname} has no records")
    for tool in spec.tools.values():
        problems.extend(f"tools.{tool.name}: {p}" for p in flat_schema_problems(schema_of(tool)))
    return _clip(problems)


def empty_lookups(data: TaskData) -> list[str]:
    """Gold lookups that find nothing: a gold path shows the way to the answer, so each of its searches finds
    something (an empty one usually means a filter that names the wrong root, e.g. ``item.`` for ``record.``)."""
    problems = []
    for i, r in enumerate(replay(make_engine(data), data.gold), start=1):
        if r.ok and r.kind == "lookup" and isinstance(r.result, Mapping) and r.result.get("count") == 0:
            problems.append(f"gold call {i} ({r.tool} {json.dumps(r.arguments, sort_keys=True)}) finds nothing; "
                            "check its arguments and the tool's filters")
    return problems


@dataclass(frozen=True)
class _Positive:
    """What :func:`positive_problems` reads of a pair: its T+ side (an act task has no twin yet)."""

    positive: TaskData


def task_problems(name: str, tasks: Any, min_tasks: int) -> tuple[list[str], list[tuple[str, list[CallRecord]]]]:
    """The ``replay`` gate of a sandbox proposal, and each act task's replayed gold path (for the critic)."""
    if not isinstance(tasks, list) or len(tasks) < min_tasks:
        return [f"give at least {min_tasks} act tasks"], []
    problems: list[str] = []
    traces: list[tuple[str, list[CallRecord]]] = []
    seen: set[str] = set()
    for i, entry in enumerate(tasks):
        where = f"task {entry.get('id', i) if isinstance(entry, Mapping) else i}"
        if not isinstance(entry, Mapping) or set(entry) - TASK_KEYS:
            problems.append(f"{where}: an act task is a mapping with keys among {sorted(TASK_KEYS)}")
            continue
        if not isinstance(entry.get("id"), str) or not SLUG.match(entry["id"]) or entry["id"] in seen:
            problems.append(f"{where}: id must be a new lower-case slug (letters, digits, hyphens)")
        seen.add(str(entry.get("id")))
        try:
            data = _positive(entry, name)
        except _ERRORS as exc:
            problems.append(f"{where}: {exc}")
            continue
        found = positive_problems(_Positive(data)) or empty_lookups(data)  # type: ignore[arg-type]
        problems.extend(f"{where}: {p}" for p in found)
        if not found:
            traces.append((data.instruction, replay(make_engine(data), data.gold)))
    if not any(isinstance(e, Mapping) and e.get("type") == "operational" for e in tasks):
        problems.append("at least one act task must be operational")
    return _clip(problems), traces


# ----- pairs --------------------------------------------------------------------------------------------------------
def pair_shape(data: Any, scenario: str, operators: Sequence[str]) -> list[str]:
    """The ``parse`` gate of a pair proposal."""
    if not isinstance(data, Mapping):
        return ["the reply must be one YAML mapping: a pair entry"]
    problems = []
    extra = sorted(set(data) - GEN_PAIR_KEYS)
    if extra:
        problems.append(f"unknown key(s) {extra}; a pair entry has keys among {sorted(GEN_PAIR_KEYS)}")
    if not isinstance(data.get("id"), str) or not SLUG.match(data["id"]):
        problems.append("id must be a lower-case slug (letters, digits, hyphens)")
    delta = data.get("delta")
    if not isinstance(delta, Mapping):
        return problems + ["delta must be a mapping with op, scenario, the operator's parameters and one witness"]
    if delta.get("op") not in operators:
        problems.append(f"delta.op {delta.get('op')!r} is not an operator of {scenario}: use one of "
                        f"{', '.join(operators)}")
    if delta.get("scenario") != scenario:
        problems.append(f"delta.scenario must be {scenario}")
    return problems


def positive_side(entry: Mapping[str, Any], sandbox: str) -> tuple[TaskData | None, list[str]]:
    """The ``replay`` gate of a pair proposal: its T+ task and why it fails."""
    try:
        data = _positive(entry, sandbox)
    except _ERRORS as exc:
        return None, [str(exc)]
    return data, _clip(positive_problems(_Positive(data)) or empty_lookups(data))  # type: ignore[arg-type]


def make_pair(key: str, positive: TaskData, delta: Mapping[str, Any]) -> tuple[Pair | None, list[str]]:
    """The ``delta`` gate: the operator applies, the change is one edit in its place, the trigger shows in time."""
    try:
        pair = _pair(key, positive, delta, "test")
    except _ERRORS as exc:
        return None, [str(exc)]
    return pair, _clip(delta_problems(pair) + runtime_problems(pair))


def witness_gate(pair: Pair) -> list[str]:
    return _clip(witness_problems(pair))


def normal_request(text: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9 ]", " ", text.lower()).split())
