#!/usr/bin/env bash
# Walk the template line by line, filling KEY= lines from the JSON object.
set -euo pipefail
cat .env.example
jq -r 'keys[]' values.json
python3 - <<'PY'
import json
values = json.load(open("values.json"))
out = []
for line in open(".env.example").read().splitlines():
    if line.strip() and not line.lstrip().startswith("#") and "=" in line:
        key = line.split("=", 1)[0]
        val = values.get(key)
        val = "" if val is None else str(val)
        out.append(f'{key}="{val}"' if " " in val else f"{key}={val}")
    else:
        out.append(line)
open(".env", "w").write("\n".join(out) + "\n")
PY
cat .env
