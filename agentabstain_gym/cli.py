"""The ``abstain-gym`` command: list environments, evaluate agents, report metrics."""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

TABLE_COLUMNS = (
    ("n_abstain", "N abst", "{:d}"), ("n_solvable", "N solv", "{:d}"), ("absrec@1", "AbsRec@1", "{:.3f}"),
    ("absrec@5", "AbsRec@5", "{:.3f}"), ("absrec@10", "AbsRec@10", "{:.3f}"), ("spl", "SPL", "{:.3f}"),
    ("premature_rate", "Prem", "{:.3f}"), ("over_abstention_rate", "OverAbst", "{:.3f}"),
    ("success_rate", "Success", "{:.3f}"), ("paired_accuracy", "PairAcc", "{:.3f}"), ("car", "CAR", "{:.3f}"),
)


class UsageError(Exception):
    """A bad name or argument: one line on stderr, exit code 2."""


def format_table(title: str, groups: dict[str, dict[str, Any]]) -> str:
    """A fixed-width table, one row per group; ``-`` where a metric has nothing to count."""
    header = [title] + [label for _, label, _ in TABLE_COLUMNS]
    rows = [header]
    for name, m in groups.items():
        row = [name]
        for key, _, fmt in TABLE_COLUMNS:
            value = m.get(key)
            row.append("-" if value is None else fmt.format(value))
        rows.append(row)
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(widths[0]) if i == 0 else cell.rjust(widths[i]) for i, cell in enumerate(r))
             for r in rows]
    lines.insert(1, "-" * len(lines[0]))
    return "\n".join(lines)


def format_report(rep: dict[str, Any], per_agent: dict[str, dict[str, Any]] | None = None) -> str:
    """Readable tables. With several agents, every breakdown is shown per agent (``agent / group`` rows), so
    no row mixes two agents' episodes."""
    if per_agent:
        parts = [format_table("agent", rep["by_agent"])]
        for section, title in (("by_family", "family"), ("by_category", "category"), ("by_scenario", "scenario")):
            rows = {f"{agent} / {name}": m for agent, sub in per_agent.items() for name, m in sub[section].items()}
            if rows:
                parts.append(format_table(f"agent / {title}", rows))
        return "\n\n".join(parts)
    parts = [format_table("overall", {"all": rep["overall"]})]
    for section, title in (("by_family", "family"), ("by_category", "category"), ("by_scenario", "scenario")):
        if rep.get(section):
            parts.append(format_table(title, rep[section]))
    return "\n\n".join(parts)


def render(records: list[dict[str, Any]], *, as_json: bool, bootstrap: int = 1000) -> str:
    from agentabstain_gym.core.metrics import report

    rep = report(records, bootstrap=bootstrap)
    if as_json:
        return json.dumps(rep, indent=2, sort_keys=True)
    per_agent = None
    if rep.get("by_agent"):
        per_agent = {agent: report([r for r in records if r.get("agent") == agent], bootstrap=0)
                     for agent in rep["by_agent"]}
    return format_report(rep, per_agent)


def cmd_report(args: argparse.Namespace) -> int:
    from agentabstain_gym.core.record import read_records

    for path in args.files:
        if not Path(path).is_file():
            raise UsageError(f"no such file: {path}")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        records = read_records(args.files)
    for w in caught:
        print(f"warning: {w.message}", file=sys.stderr)
    print(render(records, as_json=args.json, bootstrap=args.bootstrap))
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    import gymnasium as gym

    import agentabstain_gym

    listing: dict[str, Any] = {}
    for env_id in agentabstain_gym.ENV_IDS:
        env = gym.make(env_id)
        tasks = env.unwrapped.tasks()
        counts: dict[str, dict[str, int]] = {"split": {}, "category": {}}
        for t in tasks:
            counts["split"][t.split] = counts["split"].get(t.split, 0) + 1
            counts["category"][t.category] = counts["category"].get(t.category, 0) + 1
        listing[env_id] = {"family": env.unwrapped.family, "tasks": len(tasks),
                           "should_abstain": sum(t.should_abstain for t in tasks),
                           "max_turns": env.unwrapped.max_turns,
                           **{k: dict(sorted(v.items())) for k, v in counts.items()}}
        env.close()
    if args.json:
        print(json.dumps(listing, indent=2, sort_keys=True))
    else:
        for env_id, info in listing.items():
            cats = ", ".join(f"{k} {v}" for k, v in info["category"].items())
            splits = ", ".join(f"{k} {v}" for k, v in info["split"].items())
            print(f"{env_id}  family={info['family']}  tasks={info['tasks']} "
                  f"(should abstain {info['should_abstain']})  max_turns={info['max_turns']}")
            print(f"    splits: {splits}\n    categories: {cats}")
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    import agentabstain_gym
    from agentabstain_gym.agents import AGENT_NAMES, make_agent
    from agentabstain_gym.runner import evaluate

    env_ids = list(args.env) or list(agentabstain_gym.ENV_IDS)
    for env_id in env_ids:
        if env_id not in agentabstain_gym.ENV_IDS:
            raise UsageError(f"unknown env id {env_id!r}; valid ids: {', '.join(agentabstain_gym.ENV_IDS)}")
    agents = args.agent or ["heuristic"]
    for name in agents:
        if name not in AGENT_NAMES:
            raise UsageError(f"unknown agent {name!r}; valid agents: {', '.join(AGENT_NAMES)}")
    records = []
    for env_id in env_ids:
        for name in agents:
            recs = evaluate(env_id, lambda n=name, e=env_id: make_agent(n, e, seed=args.seed), split=args.split,
                            episodes=args.episodes, seed=args.seed, out=args.out)
            print(f"{env_id} x {name}: {len(recs)} episodes", file=sys.stderr)
            records.extend(recs)
    print(render(records, as_json=args.json))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="abstain-gym", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("list", help="registered ids with their task counts")
    p.add_argument("--json", action="store_true", help="one JSON object keyed by env id")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("eval", help="evaluate agents on envs and print the report")
    p.add_argument("env", nargs="*", help="env ids (default: every registered id)")
    p.add_argument("--agent", action="append", help="agent name; repeat for several (default: heuristic)")
    p.add_argument("--split", choices=("train", "val", "test"), default="test")
    p.add_argument("--episodes", type=int, default=None, help="a seeded sample of this many tasks")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=None, help="JSONL file of episode records (appended; re-runs resume)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser("report", help="metrics tables from JSONL episode records")
    p.add_argument("files", nargs="+")
    p.add_argument("--json", action="store_true", help="print SPEC 8.2's JSON object")
    p.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples for the 95%% intervals")
    p.set_defaults(func=cmd_report)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except UsageError as exc:
        print(f"abstain-gym: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
