"""Check per-category product-type files (wip: the lead's tool for authors; the integrator folds it into the package).

Usage: PYTHONPATH=/work/wt16 python wip_notes/check_catalogue.py [CATEGORY ...]
Reads agentabstain_gym/data/web/catalogue/<category>.json ({"label": ..., "types": [...]}) and prints every problem.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from agentabstain_gym.envs.web import vocab
from agentabstain_gym.envs.web.matching import attribute_matches, option_matches

ROOT = Path(__file__).resolve().parents[1] / "agentabstain_gym" / "data" / "web" / "catalogue"
KEYS = {"name", "path", "nouns", "price", "attributes", "options"}


def main(argv: list[str]) -> int:
    wanted = argv or [c for c in vocab.CATEGORIES if (ROOT / f"{c}.json").exists()]
    cats = {}
    for c in vocab.CATEGORIES:
        f = ROOT / f"{c}.json"
        if f.exists():
            cats[c] = json.loads(f.read_text(encoding="utf-8"))
    problems: list[str] = []
    seen: dict[str, str] = {}
    for c, spec in cats.items():
        for t in spec["types"]:
            n = t.get("name", "?")
            if n in seen:
                problems.append(f"{c}/{n}: name also in {seen[n]}")
            seen[n] = c
    for c in wanted:
        spec = cats[c]
        names = [t.get("name") for t in spec["types"]]
        print(f"{c}: {len(names)} types")
        for t in spec["types"]:
            n = t.get("name", "?")
            where = f"{c}/{n}"
            if set(t) != KEYS:
                problems.append(f"{where}: keys {sorted(t)} != {sorted(KEYS)}")
                continue
            if n != n.lower() or not n.strip():
                problems.append(f"{where}: name must be lower case")
            if not (2 <= len(t["path"]) <= 4):
                problems.append(f"{where}: path needs 2-4 levels")
            if len(t["nouns"]) != 3 or len(set(t["nouns"])) != 3:
                problems.append(f"{where}: give exactly 3 distinct title nouns")
            lo, hi = t["price"]
            if not (0 < lo < hi):
                problems.append(f"{where}: price [lo, hi] with 0 < lo < hi")
            attrs = t["attributes"]
            if not (8 <= len(attrs) <= 16) or len(set(attrs)) != len(attrs):
                problems.append(f"{where}: 8-16 distinct attributes (has {len(attrs)})")
            for a in attrs:
                if a != a.lower():
                    problems.append(f"{where}: attribute {a!r} not lower case")
                for b in attrs:
                    if a != b and attribute_matches(a, b):
                        problems.append(f"{where}: attribute {a!r} also matches {b!r} (fuzzy or substring)")
            groups = t["options"]
            if not (1 <= len(groups) <= 2):
                problems.append(f"{where}: 1 or 2 option groups")
            for g, vals in groups.items():
                if not (2 <= len(vals) <= 12) or len(set(vals)) != len(vals):
                    problems.append(f"{where}: option group {g!r} needs 2-12 distinct values")
            gl = list(groups)
            for i, g in enumerate(gl):
                for h in gl[i + 1:]:
                    for v in groups[g]:
                        for u in groups[h]:
                            if option_matches(v, u):
                                problems.append(f"{where}: option {v!r} in {g!r} and {h!r}")
            lower_nouns = " ".join(x.lower() for x in [*t["nouns"], *t["path"], n])
            for a in attrs:
                if a in lower_nouns:
                    problems.append(f"{where}: attribute {a!r} occurs in the name/nouns/path (every product would show it)")
    # the package's own check against generic page text, on the assembled store
    assembled = {"_about": "", "categories": {c: cats[c] for c in vocab.CATEGORIES if c in cats}}
    if set(assembled["categories"]) == set(vocab.CATEGORIES):
        vocab.load_data.cache_clear()
        orig = vocab.load_data

        def patched(name: str):  # type: ignore[no-untyped-def]
            return assembled if name == "catalogue" else orig(name)

        vocab.load_data = patched  # type: ignore[assignment]
        vocab.product_types.cache_clear()
        try:
            problems += [p for p in vocab.vocabulary_problems() if seen.get(p.split(":")[0]) in wanted]
        except ValueError as exc:
            problems.append(str(exc))
    else:
        print("(generic-text check runs once all five category files exist)")
    for p in problems:
        print("PROBLEM", p)
    print(f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
