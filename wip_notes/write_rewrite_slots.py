"""Write wip_notes/rewrite_slots.jsonl: the default task set's 249 rewrite slots, one JSON line each, for authors.

Each line: key (rewrites.slot_key), category, split, the original's instruction, its goal (product type, its
browse path, attributes, options, price cap) and the type's other attributes and option values (material for a
contradiction). Run: PYTHONPATH=. python wip_notes/write_rewrite_slots.py
"""

from __future__ import annotations

import json
from pathlib import Path

from agentabstain_gym.envs.web.dataset import build_dataset
from agentabstain_gym.envs.web.rewrites import REWRITE_KINDS, slot_key
from agentabstain_gym.envs.web.vocab import type_by_name


def main() -> None:
    data = build_dataset()
    originals = {t.pair_id: t for t in data.tasks if not t.should_abstain}
    rows = []
    for t in data.tasks:
        if t.category not in REWRITE_KINDS:
            continue
        goal = data.goal(t)
        ptype = type_by_name()[goal.product_type]
        rows.append({
            "key": slot_key(goal, t.category), "category": t.category, "split": t.split,
            "original": originals[t.pair_id].instruction,
            "goal": {"product_type": goal.product_type, "path": list(ptype.path), "attributes": list(goal.attributes),
                     "options": [list(o) for o in goal.options], "price_upper": goal.price_upper},
            "type_attributes": [a for a in ptype.attributes if a not in goal.attributes],
            "type_options": {g: list(v) for g, v in zip(ptype.groups, ptype.values, strict=True)},
        })
    rows.sort(key=lambda r: (REWRITE_KINDS.index(r["category"]), r["goal"]["product_type"], r["key"]))
    assert len({r["key"] for r in rows}) == len(rows) == 249
    out = Path(__file__).with_name("rewrite_slots.jsonl")
    out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    print(f"{len(rows)} slots -> {out}")


if __name__ == "__main__":
    main()
