"""Delta operators: registered code that turns a should-act task T+ into its should-abstain twin T- by changing
exactly one thing, in one of four places (the query, the environment state, the tool inventory, tool runtime).

An operator takes the T+ :class:`TaskData` and the delta's parameters from the pair file and returns the T-
:class:`TaskData`; it refuses (``DeltaError``) when the change would not be one small, well-defined edit. The pair
validator re-checks the result independently. Authors use operators by name; adding one is a function with
``@delta(name, location)``.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from agentabstain_gym.envs.tools.engine import Override
from agentabstain_gym.envs.tools.state import PATCH_OPS, PatchError, split_pointer

LOCATIONS = ("query", "environment", "inventory", "runtime")
#: scenario -> (category name used in records, phase)
SCENARIOS: dict[str, tuple[str, str]] = {
    "S1": ("missing_parameter", "pre-execution"),
    "S2": ("ambiguous_action", "pre-execution"),
    "S3": ("conflicting_constraints", "pre-execution"),
    "S4": ("high_stakes_action", "pre-execution"),
    "S5": ("insufficient_tools", "pre-execution"),
    "S6": ("tool_failure", "runtime"),
    "S7": ("conflicting_evidence", "runtime"),
    "S8": ("emergent_risk", "runtime"),
}
#: Where a delta acts decides when its trigger can be seen: in the request or the tool list before any call,
#: or only through what tools return.
LOCATION_PHASE = {"query": "pre-execution", "inventory": "pre-execution", "environment": "runtime",
                  "runtime": "runtime"}
MAX_EDIT_CHARS = 120


class DeltaError(ValueError):
    """A delta that cannot be applied as declared."""


@dataclass(frozen=True)
class TaskData:
    """One side of a pair, as data: what the agent is asked, where, with which tools, and how it is checked."""

    sandboxes: tuple[str, ...]
    instruction: str
    type: str
    tools: tuple[str, ...]
    state: tuple[Mapping[str, Any], ...] = ()
    overrides: tuple[Mapping[str, Any], ...] = ()
    clock: str | None = None
    gold: tuple[Mapping[str, Any], ...] = ()
    critical: tuple[Mapping[str, Any], ...] = ()
    answers: tuple[str, ...] = ()
    distractors: tuple[str, ...] = ()
    expect: Any = None

    def replace(self, **changes: Any) -> TaskData:
        return dataclasses.replace(self, **changes)

    def to_payload(self) -> dict[str, Any]:
        return {f.name: _plain(getattr(self, f.name)) for f in dataclasses.fields(self)}

    @classmethod
    def from_payload(cls, data: Mapping[str, Any]) -> TaskData:
        tuples = ("sandboxes", "tools", "state", "overrides", "gold", "critical", "answers", "distractors")
        return cls(**{k: (tuple(v) if k in tuples else v) for k, v in data.items() if k in _FIELDS})


def _plain(value: Any) -> Any:
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    return value


_FIELDS = {f.name for f in dataclasses.fields(TaskData)}


@dataclass(frozen=True)
class DeltaOperator:
    name: str
    location: str
    apply: Callable[[TaskData, Mapping[str, Any]], TaskData]
    params: tuple[str, ...]
    doc: str


DELTAS: dict[str, DeltaOperator] = {}


def delta(name: str, location: str, params: tuple[str, ...]) -> Callable[[Callable[..., TaskData]],
                                                                         Callable[..., TaskData]]:
    """Register a delta operator acting on ``location`` with the given parameter names."""
    if location not in LOCATIONS:
        raise ValueError(f"location must be one of {LOCATIONS}")

    def register(fn: Callable[[TaskData, Mapping[str, Any]], TaskData]) -> Callable[..., TaskData]:
        if name in DELTAS:
            raise ValueError(f"delta {name!r} is registered twice")
        DELTAS[name] = DeltaOperator(name, location, fn, params, (fn.__doc__ or "").strip())
        return fn

    return register


def apply_delta(task: TaskData, op: str, params: Mapping[str, Any]) -> TaskData:
    """T- from T+ with the operator ``op``; raises :class:`DeltaError` naming what is wrong."""
    if op not in DELTAS:
        raise DeltaError(f"unknown delta {op!r}; registered: {', '.join(sorted(DELTAS))}")
    operator = DELTAS[op]
    unknown = set(params) - set(operator.params)
    if unknown:
        raise DeltaError(f"delta {op!r} takes {list(operator.params)}, not {sorted(unknown)}")
    try:
        return operator.apply(task, params)
    except PatchError as exc:
        raise DeltaError(str(exc)) from None


# ----- the query ------------------------------------------------------------------------------------------------------
def _tidy(text: str) -> str:
    text = re.sub(r"\s+([,.;:!?])", r"\1", text)
    return re.sub(r"\s{2,}", " ", text).strip()


def substitute(instruction: str, text: Any, replace: Any) -> str:
    """``instruction`` with the single occurrence of ``text`` replaced (a small edit, or :class:`DeltaError`)."""
    if not isinstance(text, str) or not text.strip():
        raise DeltaError("'text' must be the non-empty part of the instruction to change")
    if not isinstance(replace, str):
        raise DeltaError("'replace' must be a string")
    count = instruction.count(text)
    if count != 1:
        raise DeltaError(f"{text!r} occurs {count} times in the instruction; it must occur exactly once")
    if len(text) > MAX_EDIT_CHARS or len(replace) > MAX_EDIT_CHARS:
        raise DeltaError(f"a query delta changes at most {MAX_EDIT_CHARS} characters")
    out = _tidy(instruction.replace(text, replace, 1))
    if out == _tidy(instruction):
        raise DeltaError("the edit leaves the instruction unchanged")
    return out


def _query(task: TaskData, params: Mapping[str, Any], *, require_replace: bool) -> TaskData:
    replace = params.get("replace", "")
    if require_replace and not str(replace).strip():
        raise DeltaError("this delta replaces text: give a non-empty 'replace'")
    if "append" in params:
        if "text" in params:
            raise DeltaError("give either 'text' (with 'replace') or 'append', not both")
        extra = params["append"]
        if not isinstance(extra, str) or not extra.strip() or len(extra) > MAX_EDIT_CHARS:
            raise DeltaError(f"'append' is a non-empty string of at most {MAX_EDIT_CHARS} characters")
        base = task.instruction.rstrip()
        stop = base[-1] if base and base[-1] in ".?!" else ""
        return task.replace(instruction=_tidy(base[: len(base) - len(stop)] + extra + stop))
    return task.replace(instruction=substitute(task.instruction, params.get("text"), replace))


@delta("drop_value", "query", ("text", "value"))
def drop_value(task: TaskData, params: Mapping[str, Any]) -> TaskData:
    """Remove the words that give a needed value (a booking code, a name, a new setting): S1."""
    return task.replace(instruction=substitute(task.instruction, params.get("text"), ""))


@delta("ambiguous_referent", "query", ("text", "replace"))
def ambiguous_referent(task: TaskData, params: Mapping[str, Any]) -> TaskData:
    """Replace a specific referent with a vaguer one that several records fit: S1."""
    return _query(task, params, require_replace=True)


@delta("vague_action", "query", ("text", "replace"))
def vague_action(task: TaskData, params: Mapping[str, Any]) -> TaskData:
    """Replace a precise verb with one that admits different actions (archive or delete?): S2."""
    return _query(task, params, require_replace=True)


@delta("conflicting_constraint", "query", ("text", "replace", "append"))
def conflicting_constraint(task: TaskData, params: Mapping[str, Any]) -> TaskData:
    """Change or add a constraint so that the request contradicts itself: S3."""
    return _query(task, params, require_replace=False)


@delta("raise_stakes", "query", ("text", "replace"))
def raise_stakes(task: TaskData, params: Mapping[str, Any]) -> TaskData:
    """Swap the object of the action for one whose consequences are severe or irreversible: S4."""
    return _query(task, params, require_replace=True)


# ----- the environment ----------------------------------------------------------------------------------------------
def _one_patch(task: TaskData, op: Mapping[str, Any], *, kinds: tuple[str, ...]) -> TaskData:
    if op.get("op") not in kinds:
        raise DeltaError(f"this delta makes one patch operation of kind {kinds}, got {op.get('op')!r}")
    split_pointer(op.get("path"))
    return task.replace(state=(*task.state, dict(op)))


def _record_patch(params: Mapping[str, Any]) -> dict[str, Any]:
    coll, key, record = params.get("collection"), params.get("key"), params.get("record")
    if not isinstance(coll, str) or not isinstance(key, str) or not isinstance(record, Mapping):
        raise DeltaError("give {collection, key, record} for the record to add")
    return {"op": "add", "path": f"/{coll}/{key.replace('~', '~0').replace('/', '~1')}", "value": dict(record)}


def _field_patch(params: Mapping[str, Any]) -> dict[str, Any]:
    if "path" not in params or "value" not in params:
        raise DeltaError("give {path: /collection/key/field, value} for the field to change")
    parts = split_pointer(params["path"])
    if len(parts) < 3:
        raise DeltaError("the path must name a field: /collection/key/field")
    return {"op": params.get("patch", "replace"), "path": params["path"], "value": params["value"]}


@delta("add_matching_entity", "environment", ("collection", "key", "record"))
def add_matching_entity(task: TaskData, params: Mapping[str, Any]) -> TaskData:
    """Add a second record that also fits the request (another 'Marcus Webb'), found only by looking."""
    return _one_patch(task, _record_patch(params), kinds=("add",))


@delta("conflicting_record", "environment", ("collection", "key", "record", "path", "value", "patch"))
def conflicting_record(task: TaskData, params: Mapping[str, Any]) -> TaskData:
    """Change or add one record so that two sources disagree about a fact the task depends on: S7."""
    patch = _record_patch(params) if "record" in params else _field_patch(params)
    return _one_patch(task, patch, kinds=PATCH_OPS)


@delta("hidden_risk_flag", "environment", ("path", "value", "patch"))
def hidden_risk_flag(task: TaskData, params: Mapping[str, Any]) -> TaskData:
    """Set a field that marks the target as risky (tagged critical, under legal hold, security alert): S8."""
    return _one_patch(task, _field_patch(params), kinds=("replace", "add"))


@delta("unsatisfiable_constraint", "environment", ("collection", "key", "record", "path", "value", "patch"))
def unsatisfiable_constraint(task: TaskData, params: Mapping[str, Any]) -> TaskData:
    """Change the state so that the requested outcome cannot be reached (the slot is gone, the seat is taken)."""
    patch = _record_patch(params) if "record" in params else _field_patch(params)
    return _one_patch(task, patch, kinds=PATCH_OPS)


# ----- the tool inventory -----------------------------------------------------------------------------------------
@delta("remove_tool", "inventory", ("tool",))
def remove_tool(task: TaskData, params: Mapping[str, Any]) -> TaskData:
    """Remove the only tool that can do the job: S5."""
    tool = params.get("tool")
    if tool not in task.tools:
        raise DeltaError(f"tool {tool!r} is not in the T+ inventory")
    return task.replace(tools=tuple(t for t in task.tools if t != tool))


@delta("replace_tool", "inventory", ("tool", "with"))
def replace_tool(task: TaskData, params: Mapping[str, Any]) -> TaskData:
    """Replace the capable tool with a weaker one of the same sandbox (draft instead of send): S5."""
    tool, weaker = params.get("tool"), params.get("with")
    if tool not in task.tools:
        raise DeltaError(f"tool {tool!r} is not in the T+ inventory")
    if not isinstance(weaker, str) or weaker in task.tools:
        raise DeltaError(f"the replacement {weaker!r} must be a tool of the sandbox that T+ does not offer")
    return task.replace(tools=tuple(weaker if t == tool else t for t in task.tools))


# ----- tool runtime -------------------------------------------------------------------------------------------------
@delta("inject_failure", "runtime",
       ("tool", "mode", "code", "message", "set", "where", "as_of", "result", "on_call", "times"))
def inject_failure(task: TaskData, params: Mapping[str, Any]) -> TaskData:
    """Make one tool fail at run time (error, timeout, nothing returned, stale or conflicting data): S6."""
    if params.get("tool") not in task.tools:
        raise DeltaError(f"tool {params.get('tool')!r} is not in the T+ inventory")
    try:
        Override.from_dict(params)
    except ValueError as exc:
        raise DeltaError(str(exc)) from None
    return task.replace(overrides=(*task.overrides, dict(params)))
