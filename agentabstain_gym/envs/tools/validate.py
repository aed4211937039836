"""Pair validation by replay, and the command authors run: ``python -m agentabstain_gym.envs.tools.validate``.

Every pair must show, deterministically: (1) the T+ gold path runs without an error and passes the T+ check;
(2) doing nothing on T+ fails it; (3) T- differs from T+ by exactly the declared delta; (4) a danger witness holds
on T- (the gold commit now fails, a hazard check fires, the removed value cannot be recovered, the referent is
ambiguous, two commits are equally compatible, or two tool answers contradict each other). It also checks that
answers come from tool output, not from the instruction, and that the trigger shows before any commit.
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from agentabstain_gym.envs.tools import catalog
from agentabstain_gym.envs.tools.deltas import LOCATION_PHASE, TaskData
from agentabstain_gym.envs.tools.engine import Engine
from agentabstain_gym.envs.tools.errors import SpecError
from agentabstain_gym.envs.tools.predicates import MISSING, PredicateError, compile_predicate, resolve
from agentabstain_gym.envs.tools.scoring import answer_matches, normalize_text, positive_passes
from agentabstain_gym.envs.tools.spec import check_sandbox
from agentabstain_gym.envs.tools.tasks import (
    Pair,
    divergence,
    load_pairs,
    make_engine,
    read_pair_file,
    replay,
)

WITNESSES = ("fails", "ambiguous", "unsatisfiable", "unrecoverable", "holds", "divergent", "conflict")
#: Words a T- instruction must not use: they would announce the trigger instead of letting the agent find it.
GIVEAWAYS = ("ambiguous", "abstain", "impossible", "unclear", "contradict", "conflicting", "trick", "refuse")
_GIVEAWAY = re.compile(r"\b(?:" + "|".join(GIVEAWAYS) + ")", re.IGNORECASE)  # word starts: "Patrick" is fine


def _passes(data: TaskData, engine: Engine, reply: str | None) -> bool:
    return positive_passes(trace=engine.trace, state=engine.state, world=engine.world, values=engine.ctx.values,
                           critical=data.critical, expect=data.expect, informational=data.type == "informational",
                           reply=reply, answers=data.answers, distractors=data.distractors)


def _count(engine: Engine, spec: Mapping[str, Any]) -> int:
    where = compile_predicate(spec.get("where", True))
    scope = engine.ctx.scope()
    n = 0
    for item in engine.state.records(spec["collection"]).values():
        scope["item"] = item
        n += bool(where(scope))
    return n


def _holds(engine: Engine, spec: Any) -> bool:
    values = {}
    if isinstance(spec, Mapping) and set(spec) == {"check", "values"}:
        spec, values = spec["check"], spec["values"]
    return compile_predicate(spec)(engine.ctx.scope(values=values))


def _fails(engine: Engine, calls: Sequence[Mapping[str, Any]]) -> bool:
    return any(not r.ok for r in replay(engine, calls))


def _result_value(engine: Engine, call: Mapping[str, Any], path: str) -> Any:
    record = engine.call(call.get("tool"), call.get("arguments", {}))
    value = resolve(["values", *path.split(".")], {"values": record.result}) if record.ok else MISSING
    return normalize_text(json.dumps(value, sort_keys=True)) if value is not MISSING else None


def witness_problems(pair: Pair) -> list[str]:
    """Why the pair's danger witness does not hold (empty when it does)."""
    (kind, spec), = pair.witness.items()
    pos, neg = make_engine(pair.positive), make_engine(pair.negative)
    env_delta = pair.location == "environment"
    try:
        if kind == "fails":
            calls = pair.positive.gold if spec == "gold" else spec.get("calls", [])
            if not _fails(neg, calls):
                return ["witness fails: every call succeeds on T-"]
            if spec == "gold" or pair.location in ("query", "inventory"):
                return []  # the request or the inventory changed; the same calls on T+ state prove nothing
            return ["witness fails: the calls fail on T+ too"] if _fails(pos, calls) else []
        if kind == "ambiguous":
            n = _count(neg, spec)
            if n < 2:
                return [f"witness ambiguous: {n} record(s) match on T-; need at least 2"]
            if "plus" in spec:
                both = {"collection": spec["collection"], "where": {"all": [spec.get("where", True), spec["plus"]]}}
                if _count(pos, both) != 1:
                    return [f"witness ambiguous: the full T+ referent matches {_count(pos, both)} records, not 1"]
            if env_delta and _count(pos, spec) != 1:
                return ["witness ambiguous: T+ must have exactly one match before the environment delta"]
            return []
        if kind == "unsatisfiable":
            if _count(neg, spec) != 0 or _count(pos, spec) < 1:
                return ["witness unsatisfiable: need 0 matches on T- and at least 1 on T+"]
            return []
        if kind == "unrecoverable":
            value = normalize_text(str(spec))
            if value.strip() in ("",) or value in normalize_text(pair.negative.instruction):
                return [f"witness unrecoverable: {spec!r} is still in the T- instruction"]
            if value not in normalize_text(pair.positive.instruction):
                return [f"witness unrecoverable: {spec!r} is not in the T+ instruction"]
            if value in normalize_text(neg.state.canonical()):
                return [f"witness unrecoverable: {spec!r} can be found in the T- state"]
            return []
        if kind == "holds":
            if not _holds(neg, spec):
                return ["witness holds: the check is false on T-"]
            if env_delta and _holds(pos, spec):
                return ["witness holds: the check is already true on T+ (the environment delta must make it true)"]
            return []
        if kind == "divergent":
            if not isinstance(spec, list) or len(spec) < 2:
                return ["witness divergent: give at least two alternative call lists"]
            states = []
            for alternative in spec:
                engine = make_engine(pair.negative)
                if _fails(engine, alternative):
                    return [f"witness divergent: alternative {alternative!r} fails on T-"]
                states.append(engine.state.canonical())
            if len(set(states)) != len(states):
                return ["witness divergent: two alternatives leave the same state"]
            return []
        if kind == "conflict":
            a, b = spec
            va, vb = _result_value(neg, a["call"], a["path"]), _result_value(neg, b["call"], b["path"])
            if va is None or vb is None or va == vb:
                return [f"witness conflict: the two answers agree or are missing on T- ({va!r}, {vb!r})"]
            pa, pb = _result_value(pos, a["call"], a["path"]), _result_value(pos, b["call"], b["path"])
            return [] if pa == pb else [f"witness conflict: the answers disagree on T+ too ({pa!r}, {pb!r})"]
    except (PredicateError, KeyError, TypeError, ValueError, AttributeError) as exc:
        return [f"witness {kind}: malformed ({exc!r})"]
    return [f"unknown witness {kind!r}; known: {', '.join(WITNESSES)}"]


def delta_problems(pair: Pair) -> list[str]:
    """T- must differ from T+ in exactly the declared place, by one change."""
    pos, neg = pair.positive.to_payload(), pair.negative.to_payload()
    changed = sorted(k for k in pos if pos[k] != neg[k])
    expected = {"query": ["instruction"], "environment": ["state"], "inventory": ["tools"],
                "runtime": ["overrides"]}[pair.location]
    if changed != expected:
        return [f"T- differs from T+ in {changed}, but a {pair.location} delta changes exactly {expected}"]
    if pair.location == "query":
        a, b = pos["instruction"].split(), neg["instruction"].split()
        ops = [o for o in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes() if o[0] != "equal"]
        if len(ops) > 1:
            return [f"the query delta makes {len(ops)} separate edits; it must be one small change"]
    elif pair.location in ("environment", "runtime"):
        field = "state" if pair.location == "environment" else "overrides"
        if neg[field][: len(pos[field])] != pos[field] or len(neg[field]) != len(pos[field]) + 1:
            return [f"an {pair.location} delta adds exactly one entry to {field}"]
    else:
        removed, added = set(pos["tools"]) - set(neg["tools"]), set(neg["tools"]) - set(pos["tools"])
        if len(removed) != 1 or len(added) > 1:
            return ["an inventory delta removes one tool (and may add one weaker tool)"]
        problems = _only_capable(pair, next(iter(removed)), added)
        if problems:
            return problems
    if LOCATION_PHASE[pair.location] != pair.phase:
        return [f"{pair.scenario} is {pair.phase} but the delta acts on the {pair.location}"]
    if _GIVEAWAY.search(pair.negative.instruction):
        return ["the T- instruction gives itself away (a word like 'ambiguous' or 'impossible')"]
    return []


def _writes(engine: Engine, tool: str) -> set[str]:
    spec = engine.world.tools[tool]
    if spec.kind != "commit":
        return set()
    if spec.op is not None:
        return {spec.config.get("collection", "")}
    return set(spec.config.get("writes", ["?"]))


def _same_job(a: Any, b: Any) -> bool:
    """Whether two commit tools make the same change: the same custom function; a transition to the same state
    (or to a chosen one) of the same field; an update of overlapping fields; else the same generic operation."""
    if a.op != b.op or (a.op is None and a.custom != b.custom):
        return False
    if a.op == "transition":
        def target(t: Any) -> Any:
            return (t.config.get("field", "status"), t.config.get("to", "<param>" if "to_param" in t.config else None))
        return target(a) == target(b)
    if a.op == "update":
        return bool(set(a.config.get("values") or {}) & set(b.config.get("values") or {}))
    return True


def _only_capable(pair: Pair, removed: str, added: set[str]) -> list[str]:
    """No tool left on T- does the removed commit tool's job on what it wrote (see :func:`_same_job`; custom tools
    declare what they write in ``config.writes``). Cancelling and checking in both move a booking's status, but to
    different states: they are different jobs."""
    engine = make_engine(pair.negative)
    gone = engine.world.tools[removed]
    if gone.kind != "commit":
        return []
    for name in pair.negative.tools:
        tool = engine.world.tools[name]
        if tool.kind == "commit" and name not in added and _same_job(tool, gone) \
                and _writes(engine, name) & _writes(engine, removed):
            return [f"removing {removed} leaves {name}, which does the same thing"]
    return []


def positive_problems(pair: Pair) -> list[str]:
    data = pair.positive
    problems = []
    engine = make_engine(data)
    trace = replay(engine, data.gold)
    failed = [r for r in trace if not r.ok]
    if failed:
        problems.append(f"T+ gold call {failed[0].tool} fails: {failed[0].error}")
    informational = data.type == "informational"
    if informational and not data.answers:
        problems.append("an informational task needs answers")
    if not informational and not data.critical:
        problems.append("an operational task needs critical commits")
    reply = data.answers[0] if informational and data.answers else "Done."
    if not problems and not _passes(data, engine, reply):
        problems.append("the T+ gold path does not pass the T+ check")
    idle = make_engine(data)
    if any(_passes(data, idle, r) for r in ("", "Done.", data.instruction)):
        problems.append("doing nothing (or echoing the request) passes T+; tighten critical / answers")
    for answer in data.answers:
        if normalize_text(answer) in normalize_text(data.instruction):
            problems.append(f"answer {answer!r} is in the instruction itself")
    seen = " ".join(normalize_text(r.observation) for r in trace)
    if data.answers and not any(normalize_text(a) in seen for a in data.answers):
        problems.append("no accepted answer appears in the gold calls' output")
    if informational and any(answer_matches(d, data.answers, ()) for d in data.distractors):
        problems.append("a distractor contains an answer")
    for call in (*data.gold, *data.critical):
        if call["tool"] not in data.tools:
            problems.append(f"{call['tool']} is used but not in the T+ inventory")
    for critical in data.critical:
        if engine.world.tools[critical["tool"]].kind != "commit":
            problems.append(f"critical call {critical['tool']} is not a commit tool")
    used = {engine.world.tools[c["tool"]].sandbox for c in data.gold if c["tool"] in engine.world.tools}
    idle = [s for s in data.sandboxes if s not in used]
    if len(data.sandboxes) > 1 and idle:  # a second sandbox the task never touches is not a multi-app task
        problems.append(f"the pair spans {', '.join(idle)} but its gold path calls none of its tools")
    return problems


def runtime_problems(pair: Pair) -> list[str]:
    """For runtime deltas: the trigger shows on the gold path before any commit, and w matches the replay."""
    if pair.phase != "runtime":
        return []
    first = divergence(pair.positive, pair.negative)
    if first is None or first + 1 != pair.w:
        return [f"w is {pair.w} but the gold replay first differs at call {first}"]
    neg = make_engine(pair.negative)
    trace = replay(neg, pair.positive.gold[:first])
    if any(r.kind == "commit" and r.ok for r in trace):
        return ["the gold path commits before the trigger shows; T- could not be passed"]
    return []


def pair_problems(pair: Pair) -> list[str]:
    """Every problem of one pair (empty list: the pair is valid)."""
    out = [f"{pair.key}: {p}" for p in
           positive_problems(pair) + delta_problems(pair) + witness_problems(pair) + runtime_problems(pair)]
    return out


def validate_all(sandboxes: Sequence[str] | None = None) -> list[str]:
    """Problems of the named sandboxes (default: all) and of their pairs."""
    names = list(sandboxes or catalog.sandbox_names())
    problems = [f"{n}: {p}" for n in names for p in check_sandbox(n)]
    if problems:
        return problems
    for name, path in catalog.pair_files().items():
        if name in names:
            pairs, bad = read_pair_file(name, path)
            problems.extend(bad)
            for pair in pairs:
                problems.extend(pair_problems(pair))
    return problems


def _check_pair_file(path: str) -> int:
    """Every problem of a pair file outside the package (its sandboxes may be generated ones it names)."""
    from agentabstain_gym.envs.tools.tasks import file_pairs

    try:
        pairs = file_pairs(str(Path(path).resolve()))
    except (FileNotFoundError, SpecError) as exc:
        print(exc)
        return 1
    problems = [p for pair in pairs for p in pair_problems(pair)]
    for p in problems:
        print(p)
    print(f"{path}: {len(pairs)} pair(s): " + ("OK" if not problems else f"{len(problems)} problem(s)"))
    return 1 if problems else 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m agentabstain_gym.envs.tools.validate",
                                     description="Check sandbox specs and replay-validate their pairs.")
    parser.add_argument("sandboxes", nargs="*", help="sandbox names (default: all)")
    parser.add_argument("--pairs", default=None, metavar="FILE",
                        help="replay-validate the pairs of this file instead (from `gen pairs` or `tools generate`)")
    args = parser.parse_args(argv)
    if args.pairs:
        return _check_pair_file(args.pairs)
    unknown = set(args.sandboxes) - set(catalog.sandbox_names())
    if unknown:
        print(f"unknown sandbox(es) {sorted(unknown)}; known: {', '.join(catalog.sandbox_names())}")
        return 2
    problems = validate_all(args.sandboxes or None)
    if not args.sandboxes and not problems:  # the whole suite: the published balance, no near-duplicate requests
        from agentabstain_gym.envs.tools.balance import balance_problems, near_duplicates

        problems = balance_problems(load_pairs()) + near_duplicates(load_pairs())
    for p in problems:
        print(p)
    try:
        pairs = [p for p in load_pairs() if not args.sandboxes or p.sandbox in args.sandboxes]
    except SpecError:
        pairs = []
    print(f"{len(args.sandboxes or catalog.sandbox_names())} sandbox(es), {len(pairs)} pair(s): "
          + ("OK" if not problems else f"{len(problems)} problem(s)"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
