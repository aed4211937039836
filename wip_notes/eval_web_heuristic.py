"""The web heuristic's figures on a split of the default set or on a task file (issue #16).

PYTHONPATH=. python wip_notes/eval_web_heuristic.py --split val            # default set
PYTHONPATH=. python wip_notes/eval_web_heuristic.py --tasks FILE            # every task of a file
Prints over-abstention, success on solvable tasks, AbsRec@1 / AbsRec@10 per category and, with --show, the
episodes it got wrong (never use this on a held-out file while tuning: measure it there once).
"""

from __future__ import annotations

import argparse
import collections
import json

import gymnasium as gym

import agentabstain_gym  # noqa: F401
from agentabstain_gym.agents import make_agent
from agentabstain_gym.core import metrics
from agentabstain_gym.runner import run_episode


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--split", default=None)
    p.add_argument("--tasks", default=None)
    p.add_argument("--show", type=int, default=0)
    args = p.parse_args()
    env = gym.make("AbstainWebShop-v0", **({"tasks_file": args.tasks} if args.tasks else {}))
    agent = make_agent("heuristic", "AbstainWebShop-v0")
    tasks = env.unwrapped.tasks(split=args.split) if args.split else env.unwrapped.tasks()
    records = [run_episode(env, agent, t.task_id, seed=0) for t in tasks]
    solvable = [r for r in records if not r["should_abstain"]]
    rep = metrics.report(records, bootstrap=0)
    out = {"tasks": len(records), "solvable": len(solvable),
           "over_abstention": round(sum(r["tau"] is not None for r in solvable) / max(1, len(solvable)), 3),
           "solvable_success": round(sum(r["success"] for r in solvable) / max(1, len(solvable)), 3),
           **{k: rep["overall"][k] for k in ("absrec@1", "absrec@10", "paired_accuracy")},
           "by_category": {c: {k: m[k] for k in ("n", "absrec@1", "absrec@10") if k in m}
                           for c, m in rep["by_category"].items()}}
    print(json.dumps(out, indent=1))
    if args.show:
        by_id = {t.task_id: t for t in tasks}
        wrong = collections.defaultdict(list)
        for r in records:
            t = by_id[r["task_id"]]
            if (r["tau"] is None) == t.should_abstain:
                wrong[t.category].append((t.instruction, r.get("outcome"), (r.get("abstain_reason") or "")[:90]))
        for c, rows in wrong.items():
            print(f"--- {c}: {len(rows)} wrong")
            for row in rows[: args.show]:
                print("  ", row)


if __name__ == "__main__":
    main()
