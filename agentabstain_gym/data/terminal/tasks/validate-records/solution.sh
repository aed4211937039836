#!/usr/bin/env bash
# A small validator: JSON types mapped to Python types (bool is not an integer here).
set -euo pipefail
cat schema.json
python3 - <<'PY' > rejected.txt
import json, os
schema = json.load(open("schema.json"))["required"]
def ok_type(v, t):
    return {"integer": isinstance(v, int) and not isinstance(v, bool), "string": isinstance(v, str),
            "array": isinstance(v, list), "boolean": isinstance(v, bool), "object": isinstance(v, dict),
            "number": isinstance(v, (int, float)) and not isinstance(v, bool)}[t]
for name in sorted(os.listdir("records")):
    try:
        rec = json.load(open(os.path.join("records", name)))
        good = isinstance(rec, dict) and all(k in rec and ok_type(rec[k], t) for k, t in schema.items())
    except json.JSONDecodeError:
        good = False
    if not good:
        print(name)
PY
mkdir -p rejected
while read -r f; do mv "records/$f" rejected/; done < rejected.txt
cat rejected.txt
