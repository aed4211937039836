"""``abstain-gym gen pairs``: new pairs for a sandbox and a scenario, kept only if they survive every gate.

For each of ``n`` slots per scenario the actor proposes one pair entry (a T+ task with its gold calls, and a delta
of a registered operator for the scenario with its danger witness). The entry must pass the ``parse``, ``replay``,
``delta``, ``witness`` and ``duplicate`` gates (:mod:`agentabstain_gym.gen.gates`), then the critic, which sees both
sides replayed and tries to falsify the pair. A rejection goes back to the actor with its reasons until the slot's
retry budget is spent. Kept entries are written as a pair file that ``abstain-gym eval --pairs`` runs; for a
generated sandbox the file names its directory under ``sandbox_dirs`` (relative to the pair file).
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentabstain_gym.envs.tools import catalog
from agentabstain_gym.envs.tools.deltas import SCENARIOS
from agentabstain_gym.envs.tools.spec import SandboxSpec, check_sandbox, load_sandbox, read_yaml
from agentabstain_gym.envs.tools.tasks import Pair, make_engine, replay
from agentabstain_gym.gen import gates
from agentabstain_gym.gen.audit import Audit, GenError
from agentabstain_gym.gen.prompts import (
    curated_examples,
    curated_instructions,
    describe_collections,
    describe_tools,
    guide_section,
    render,
    scenarios,
    snippet,
    trace_text,
)


@dataclass
class PairRun:
    """What one ``gen pairs`` run made: the kept entries, the proposals asked for, rejections per gate."""

    entries: list[dict[str, Any]] = field(default_factory=list)
    proposals: int = 0
    rejected: Counter[str] = field(default_factory=Counter)
    empty_slots: int = 0


def resolve_sandbox(text: str) -> tuple[str, Path | None]:
    """A built-in sandbox's name, or a generated sandbox's file or directory: (name, directory or None)."""
    if text in catalog.builtin_sandbox_names():
        return text, None
    path = Path(text)
    if path.is_dir():
        specs = sorted(p for p in path.glob("*.yaml") if not p.name.startswith(("_", ".")))
        if len(specs) != 1:
            raise GenError(f"--sandbox {text}: the directory holds {len(specs)} sandbox specs; give one spec file")
        path = specs[0]
    if not path.is_file() or path.suffix != ".yaml":
        raise GenError(f"--sandbox {text}: neither a sandbox of the benchmark nor a sandbox spec file or directory")
    name = catalog.camel(path.stem)
    catalog.add_sandbox_dir(path.parent)
    if catalog.sandbox_path(name).resolve() != path.resolve():
        raise GenError(f"--sandbox {text}: {name} is the name of a built-in sandbox; rename the generated one")
    problems = check_sandbox(name)
    if problems:
        raise GenError(f"--sandbox {text}: not a valid sandbox ({problems[0]}; {len(problems)} problem(s))")
    return name, path.parent.resolve()


def _act_tasks(spec: SandboxSpec, directory: Path | None) -> list[Any]:
    """The act tasks ``gen sandbox`` wrote next to a generated sandbox (T+ starting points), if any."""
    if directory is None:
        return []
    path = directory / "tasks" / f"{catalog.snake(spec.name)}.yaml"
    data = read_yaml(path) if path.is_file() else None
    return list(data.get("tasks") or []) if isinstance(data, Mapping) else []


def _messages(spec: SandboxSpec, scenario: str, directory: Path | None, used: list[str],
              records: int) -> list[dict[str, Any]]:
    table = scenarios()[scenario]
    phase = SCENARIOS[scenario][1]
    parts = []
    tasks = _act_tasks(spec, directory)
    if tasks:
        parts.append(snippet("act_tasks", tasks=gates.yaml_text(tasks).strip()))
    curated = curated_examples(spec.name, scenario)
    if curated:
        parts.append(snippet("curated", scenario=scenario, pairs=gates.yaml_text(curated).strip()))
    examples = "".join(f"\n{p}\n" for p in parts)
    avoid = snippet("used", requests="\n".join(f"- {u}" for u in used)) if used else ""
    user = render("pairs_user.md", name=spec.name, title=spec.title, description=spec.description, clock=spec.clock,
                  context=json.dumps(spec.context, sort_keys=True), tools=describe_tools(spec),
                  collections=describe_collections(spec, records),
                  records=records, examples=examples, scenario=scenario,
                  scenario_name=table["name"], phase=phase, scenario_text=table["text"],
                  operators=", ".join(table["operators"]),
                  phase_rule=snippet(f"phase_rule.{phase}"), avoid=avoid)
    system = render("pairs_system.md", format=guide_section(6), predicates=guide_section(4))
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def _check(reply: str, sandbox: str, scenario: str, used: set[str], audit: Audit,
           context: dict[str, Any]) -> tuple[str, list[str], Any, Pair | None]:
    """The deterministic gates in order: (failing gate or "", its problems, the entry, the pair)."""
    data, problems = gates.reply_document(reply)
    if not problems:
        problems = gates.pair_shape(data, scenario, scenarios()[scenario]["operators"])
    audit.verdict("parse", not problems, problems, **context)
    if problems:
        return "parse", problems, data, None
    positive, problems = gates.positive_side(data, sandbox)
    audit.verdict("replay", not problems, problems, **context)
    if problems or positive is None:
        return "replay", problems, data, None
    pair, problems = gates.make_pair(f"{sandbox}/{data['id']}", positive, data["delta"])
    audit.verdict("delta", not problems, problems, **context)
    if problems or pair is None:
        return "delta", problems, data, None
    for gate, found in (("witness", lambda: gates.witness_gate(pair)),
                        ("duplicate", lambda: [f"the request {positive.instruction!r} is already used"]
                         if gates.normal_request(positive.instruction) in used else [])):
        problems = found()
        audit.verdict(gate, not problems, problems, **context)
        if problems:
            return gate, problems, data, pair
    return "", [], data, pair


def _criticise(pair: Pair, spec: SandboxSpec, audit: Audit, critic: str, context: dict[str, Any]) -> list[str]:
    table = scenarios()[pair.scenario]
    pos, neg = pair.positive, pair.negative
    check = snippet(f"check.{pos.type}", answers=json.dumps(list(pos.answers)),
                    commits=json.dumps([dict(c) for c in pos.critical], sort_keys=True))
    prompt = render("critic_pair.md", scenario=pair.scenario, scenario_name=table["name"],
                    scenario_text=table["text"], name=spec.name, description=spec.description,
                    positive=pos.instruction, positive_tools=", ".join(pos.tools),
                    positive_trace=trace_text(replay(make_engine(pos), pos.gold)), check=check, op=pair.op,
                    location=pair.location, change=json.dumps(dict(pair.params), sort_keys=True)[:800],
                    negative=neg.instruction,
                    negative_tools=", ".join(neg.tools),
                    negative_trace=trace_text(replay(make_engine(neg), pos.gold)),
                    witness=json.dumps(dict(pair.witness), sort_keys=True))
    messages = [{"role": "system", "content": render("critic_system.md")}, {"role": "user", "content": prompt}]
    reply = audit.ask("critic", critic, messages, stage="pair", **context)
    return gates.critic_problems(reply, ("doable", "unsafe_or_impossible", "minimal"))


def generate_pairs(sandbox: str, directory: Path | None, wanted: list[str], n: int, audit: Audit, *, actor: str,
                   critic: str, max_retries: int, records: int) -> PairRun:
    """Fill ``n`` slots per scenario; a slot gets at most ``1 + max_retries`` proposals."""
    spec = load_sandbox(sandbox)
    run = PairRun()
    kept_requests: list[str] = []
    used = {gates.normal_request(i) for i in curated_instructions(sandbox)}
    for scenario in wanted:
        for slot in range(1, n + 1):
            messages = _messages(spec, scenario, directory, kept_requests, records)
            for _attempt in range(max_retries + 1):
                run.proposals += 1
                context = {"scenario": scenario, "slot": slot, "proposal": run.proposals}
                reply = audit.ask("actor", actor, messages, stage="pair", **context)
                messages.append({"role": "assistant", "content": reply})
                gate, problems, data, pair = _check(reply, sandbox, scenario, used, audit, context)
                if not problems and pair is not None:
                    gate, problems = "critic", _criticise(pair, spec, audit, critic, context)
                    audit.verdict("critic", not problems, problems, **context)
                if not problems and pair is not None:
                    entry = _ordered({**data, "id": f"{scenario.lower()}-{slot}-{data['id']}"})
                    run.entries.append(json.loads(json.dumps(entry)))
                    kept_requests.append(pair.positive.instruction)
                    used.add(gates.normal_request(pair.positive.instruction))
                    audit.write("kept", pair=entry["id"], **context)
                    break
                run.rejected[gate] += 1
                messages.append({"role": "user", "content": render(
                    "pairs_retry.md", gate=gate, problems="\n".join(f"- {p}" for p in problems))})
            else:
                run.empty_slots += 1
    return run


ENTRY_ORDER = ("id", "type", "instruction", "tools", "state", "clock", "gold", "critical", "answers", "distractors",
               "expect", "delta")


def _ordered(entry: Mapping[str, Any]) -> dict[str, Any]:
    """The entry's keys in the order of the curated pair files (a reply may give them in any order)."""
    return {k: entry[k] for k in sorted(entry, key=lambda k: ENTRY_ORDER.index(k) if k in ENTRY_ORDER else 99)}


def pair_file_text(run: PairRun, out: Path, *, sandbox: str, directory: Path | None, actor: str, critic: str,
                   wanted: list[str]) -> str:
    """The pair file: the sandbox (and, for a generated one, its directory relative to the file), then the pairs."""
    data: dict[str, Any] = {"generated": {"by": "abstain-gym gen pairs", "actor": actor, "critic": critic,
                                          "scenarios": wanted},
                            "sandbox": sandbox}
    if directory is not None:
        data["sandbox_dirs"] = [os.path.relpath(directory, out.resolve().parent)]
    data["pairs"] = run.entries
    return gates.yaml_text(data)
