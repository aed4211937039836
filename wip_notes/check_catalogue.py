"""Check per-category product-type files (wip: the lead's tool for authors; the checks live in the package, in
``agentabstain_gym.envs.web.vocab.catalogue_problems``, which the shipped-data test runs too).

Usage: PYTHONPATH=/work/wt16 python wip_notes/check_catalogue.py [CATEGORY ...]
Reads agentabstain_gym/data/web/catalogue/<category>.json ({"label": ..., "types": [...]}) and prints every problem.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from agentabstain_gym.envs.web import vocab

ROOT = Path(__file__).resolve().parents[1] / "agentabstain_gym" / "data" / "web" / "catalogue"


def main(argv: list[str]) -> int:
    cats = {}
    for c in vocab.CATEGORIES:
        f = ROOT / f"{c}.json"
        if f.exists():
            try:
                cats[c] = json.loads(f.read_text(encoding="utf-8"))
            except ValueError as exc:
                print(f"PROBLEM {f}: not valid JSON ({exc})\n1 problems")
                return 1
    unknown = [c for c in argv if c not in cats]
    if unknown:
        print(f"PROBLEM no category file for {unknown}; files exist for {list(cats)}\n1 problems")
        return 1
    wanted = tuple(argv) or tuple(cats)
    for c in wanted:
        print(f"{c}: {len(cats[c].get('types', []))} types")
    if set(cats) != set(vocab.CATEGORIES):
        print("(generic-text check runs once all five category files exist)")
    problems = vocab.catalogue_problems(cats, only=wanted)
    for p in problems:
        print("PROBLEM", p)
    print(f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
