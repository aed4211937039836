"""Fold the authored rewrites (wip_notes/rewrites_<category>.jsonl, {"key", "instruction"} a line) into
agentabstain_gym/data/web/rewrites_authored.json, checking each against wip_notes/rewrite_slots.jsonl.

Reports (and refuses to write on) unknown keys, a key in the wrong category's file, duplicates and empty texts;
reports missing slots and writes what there is. Run: PYTHONPATH=. python wip_notes/fold_rewrites.py [--check]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).parent
TARGET = HERE.parent / "agentabstain_gym" / "data" / "web" / "rewrites_authored.json"
FILES = {"subjective": ["rewrites_subjective.jsonl"],
         "underspecified_intent": ["rewrites_underspecified_intent.jsonl"],
         "false_premise": ["rewrites_false_premise.jsonl", "rewrites_false_premises.jsonl"]}


def main() -> int:
    slots = {}
    for line in (HERE / "rewrite_slots.jsonl").read_text().splitlines():
        row = json.loads(line)
        slots[row["key"]] = row
    out: dict[str, dict[str, str]] = {}
    errors: list[str] = []
    for category, names in FILES.items():
        for name in names:
            path = HERE / name
            if not path.exists():
                continue
            for n, line in enumerate(path.read_text().splitlines(), 1):
                if not line.strip():
                    continue
                where = f"{name}:{n}"
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as exc:
                    errors.append(f"{where}: not JSON ({exc.msg})")
                    continue
                key, text = row.get("key"), row.get("instruction")
                if key not in slots:
                    errors.append(f"{where}: unknown key {key!r}")
                elif slots[key]["category"] != category:
                    errors.append(f"{where}: key {key} is a {slots[key]['category']} slot")
                elif not isinstance(text, str) or not text.strip():
                    errors.append(f"{where}: empty instruction")
                elif key in out:
                    errors.append(f"{where}: key {key} given twice")
                else:
                    out[key] = {"category": category, "instruction": " ".join(text.split())}
    missing = sorted(k for k in slots if k not in out)
    for e in errors:
        print("error:", e)
    print(f"{len(out)} of {len(slots)} slots authored; missing {len(missing)}"
          + (f" (e.g. {', '.join(missing[:3])})" if missing else ""))
    if errors:
        return 1
    if "--check" not in sys.argv:
        data = json.loads(TARGET.read_text())
        data["rewrites"] = {k: out[k] for k in sorted(out)}
        TARGET.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
        print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
