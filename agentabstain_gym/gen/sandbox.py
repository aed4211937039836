"""``abstain-gym gen sandbox``: a new sandbox, as data, from a few seed instructions.

The actor proposes the sandbox spec and act tasks in one YAML document; the proposal must pass the ``parse``,
``spec``, ``schema`` and ``replay`` gates (:mod:`agentabstain_gym.gen.gates`) and then the critic. A rejected
proposal goes back to the actor with the gate's messages, in the same conversation, until the retry budget is
spent. The admitted sandbox is written as ``DIR/<snake_name>.yaml`` (a spec the engine loads like a built-in one)
and its act tasks as ``DIR/tasks/<snake_name>.yaml`` (``gen pairs`` shows them to the actor as starting points).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentabstain_gym.envs.tools import catalog
from agentabstain_gym.gen import gates
from agentabstain_gym.gen.audit import Audit, GenError
from agentabstain_gym.gen.prompts import example_sandbox, guide_section, render, trace_text

#: Seeds per sandbox: a few requests of one product, not a corpus (the prompt shows them all).
MAX_SEEDS = 50


@dataclass
class SandboxRun:
    """What one ``gen sandbox`` run made: the admitted proposal (or None) and the rejections per gate."""

    spec: dict[str, Any] | None = None
    tasks: list[dict[str, Any]] = field(default_factory=list)
    proposals: int = 0
    rejected: Counter[str] = field(default_factory=Counter)


def read_seeds(path: Path) -> list[str]:
    """Seed instructions from a JSONL file: one ``{"instruction": "..."}`` object a line (blank lines skipped)."""
    if not path.is_file():
        raise GenError(f"no such seeds file: {path}")
    seeds = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError:
            raise GenError(f"{path} line {n}: not JSON (one {{\"instruction\": ...}} object a line)") from None
        text = row.get("instruction") if isinstance(row, Mapping) else None
        if not isinstance(text, str) or not text.strip():
            raise GenError(f"{path} line {n}: needs a non-empty \"instruction\" string")
        seeds.append(" ".join(text.split()))
    if not seeds:
        raise GenError(f"{path} holds no seed instructions")
    if len(seeds) > MAX_SEEDS:
        raise GenError(f"{path} holds {len(seeds)} seed instructions; one sandbox is made from at most {MAX_SEEDS}")
    return seeds


def _messages(seeds: list[str], min_tasks: int) -> list[dict[str, Any]]:
    system = render("sandbox_system.md", format="\n\n".join(guide_section(n) for n in (2, 3, 4)),
                    example=example_sandbox())
    user = render("sandbox_user.md", seeds="\n".join(f"- {s}" for s in seeds),
                  taken=", ".join(catalog.builtin_sandbox_names()), min_tools=gates.MIN_TOOLS,
                  max_tools=gates.MAX_TOOLS, max_generated=gates.MAX_GENERATED, min_tasks=min_tasks)
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def _check(data: Any, min_tasks: int, audit: Audit, proposal: int) -> tuple[str, list[str], list[Any]]:
    """Run the deterministic gates in order; the first failing gate's name and problems (``""`` when all pass),
    and the act tasks' replays for the critic."""
    problems = gates.sandbox_shape(data)
    audit.verdict("parse", not problems, problems, proposal=proposal)
    if problems:
        return "parse", problems, []
    name = str(data["sandbox"]["name"])
    with gates.staged(data["sandbox"]):
        for gate, check in (("spec", gates.spec_problems), ("schema", gates.schema_problems)):
            problems = check(name)
            audit.verdict(gate, not problems, problems, proposal=proposal)
            if problems:
                return gate, problems, []
        problems, traces = gates.task_problems(name, data["tasks"], min_tasks)
        audit.verdict("replay", not problems, problems, proposal=proposal)
        return ("replay" if problems else ""), problems, traces


def generate_sandbox(seeds: list[str], audit: Audit, *, actor: str, critic: str, max_retries: int,
                     min_tasks: int) -> SandboxRun:
    """Propose, gate and criticise until a sandbox is admitted or ``1 + max_retries`` proposals were rejected."""
    run = SandboxRun()
    messages = _messages(seeds, min_tasks)
    for attempt in range(1, max_retries + 2):
        run.proposals = attempt
        reply = audit.ask("actor", actor, messages, stage="sandbox", proposal=attempt)
        messages.append({"role": "assistant", "content": reply})
        data, problems = gates.reply_document(reply)
        gate, traces = "parse", []
        if problems:
            audit.verdict("parse", False, problems, proposal=attempt)
        else:
            gate, problems, traces = _check(data, min_tasks, audit, attempt)
        if not problems:
            gate = "critic"
            problems = _criticise(data, seeds, traces, audit, critic, attempt)
            audit.verdict("critic", not problems, problems, proposal=attempt)
        if not problems:
            run.spec, run.tasks = dict(data["sandbox"]), [dict(t) for t in data["tasks"]]
            audit.write("admitted", proposal=attempt, sandbox=run.spec["name"])
            return run
        run.rejected[gate] += 1
        messages.append({"role": "user", "content": render("sandbox_retry.md", gate=gate,
                                                           problems="\n".join(f"- {p}" for p in problems))})
    return run


def _criticise(data: Mapping[str, Any], seeds: list[str], traces: list[Any], audit: Audit, critic: str,
               proposal: int) -> list[str]:
    tasks = "\n\n".join(f"Request: {instruction}\n{trace_text(records)}" for instruction, records in traces)
    prompt = render("critic_sandbox.md", seeds="\n".join(f"- {s}" for s in seeds),
                    sandbox=gates.yaml_text(data["sandbox"]).strip(), tasks=tasks)
    messages = [{"role": "system", "content": render("critic_system.md")}, {"role": "user", "content": prompt}]
    reply = audit.ask("critic", critic, messages, stage="sandbox", proposal=proposal)
    return gates.critic_problems(reply, ("covers_seeds", "realistic", "tasks_sound"))


def output_paths(out: Path, name: str) -> tuple[Path, Path]:
    """Where an admitted sandbox and its act tasks go."""
    stem = catalog.snake(name)
    return out / f"{stem}.yaml", out / "tasks" / f"{stem}.yaml"


def write_sandbox(run: SandboxRun, out: Path, *, actor: str, critic: str) -> tuple[Path, Path]:
    assert run.spec is not None
    spec_path, tasks_path = output_paths(out, str(run.spec["name"]))
    header = (f"# Generated by `abstain-gym gen sandbox` (actor {actor}, critic {critic}); admitted after the spec\n"
              "# validator, the schema check, the replay of its act tasks and the critic. Data only: no custom code.\n")
    tasks_path.parent.mkdir(parents=True, exist_ok=True)
    spec_path.write_text(header + gates.yaml_text(run.spec), encoding="utf-8")
    tasks_path.write_text(header + gates.yaml_text({"sandbox": run.spec["name"], "tasks": run.tasks}),
                          encoding="utf-8")
    return spec_path, tasks_path
