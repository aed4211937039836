"""``abstain-gym terminal check DIR``: which Terminal-Bench tasks run on which backend here, and why not."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from agentabstain_gym.envs.terminal.native.compat import REPORT_BACKENDS, TaskCompat, check_path


def add_check_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``check`` under ``abstain-gym terminal``."""
    p = subparsers.add_parser("check", help="which Terminal-Bench task folders run on which backend, and why not")
    p.add_argument("dir", help="a Terminal-Bench task folder (task.yaml or task.toml layout), or a folder of them")
    p.add_argument("--backend", action="append", choices=REPORT_BACKENDS,
                   help="report only these backends (repeatable; default: bwrap, unshare and docker)")
    p.add_argument("--run", action="store_true",
                   help="also run each runnable task: the untouched task must fail its tests, the reference "
                        "solution must pass them")
    p.add_argument("--json", action="store_true", help="one JSON object per task, in a list")
    p.set_defaults(func=cmd_check)


def format_rows(rows: list[TaskCompat], backends: list[str]) -> str:
    """A table (task, layout, one column per backend), then each task's reasons and warnings."""
    def cell(row: TaskCompat, backend: str) -> str:
        if not row.runs_on(backend):
            return "no"
        verdict = row.verified.get(backend)
        return "runs" if verdict is None else "verified" if verdict == "ok" else "FAILS"

    table = [["task", "layout", "workdir", *backends]]
    table += [[r.name, r.layout, r.workdir or "-", *(cell(r, b) for b in backends)] for r in rows]
    widths = [max(len(line[i]) for line in table) for i in range(len(table[0]))]
    lines = ["  ".join(c.ljust(widths[i]) for i, c in enumerate(line)).rstrip() for line in table]
    lines.insert(1, "-" * max(len(x) for x in lines))
    for row in rows:
        details = []
        groups: dict[tuple[str, ...], list[str]] = {}
        for backend in backends:
            if row.reasons.get(backend):
                groups.setdefault(tuple(row.reasons[backend]), []).append(backend)
        for reasons, names in groups.items():
            details += [f"  {', '.join(names)}: {reason}" for reason in reasons]
        details += [f"  {b}: {v}" for b, v in row.verified.items() if v != "ok"]
        details += [f"  warning: {w}" for w in row.warnings]
        if details:
            lines += ["", row.name, *details]
    counts = ", ".join(f"{b} {sum(r.runs_on(b) for r in rows)}" for b in backends)
    lines += ["", f"{len(rows)} task(s); runnable per backend: {counts}"]
    return "\n".join(lines)


def cmd_check(args: argparse.Namespace) -> int:
    root = Path(args.dir)
    if not root.is_dir():
        print(f"abstain-gym: error: no such folder: {args.dir}", file=sys.stderr)
        return 2
    backends = list(dict.fromkeys(args.backend or REPORT_BACKENDS))
    rows = check_path(root, backends, run=args.run)
    if not rows:
        print(f"abstain-gym: error: no Terminal-Bench task folders in {args.dir} (each needs task.yaml, or "
              "instruction.md and task.toml)", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps([r.to_dict() for r in rows], indent=2, sort_keys=True))
    else:
        print(format_rows(rows, backends))
    failed = any(v != "ok" and not v.startswith("not verified") for r in rows for v in r.verified.values())
    return 1 if failed else 0
