#!/usr/bin/env bash
# Add the two arguments to the list sub-parser and apply them in cmd_list.
set -euo pipefail
python3 tasks.py list
python3 - <<'PY'
src = open("tasks.py").read()
src = src.replace(
    "    items = load()\n",
    "    items = load()\n"
    "    if args.done:\n"
    "        items = [item for item in items if item[\"done\"]]\n"
    "    if args.limit is not None:\n"
    "        items = items[:args.limit]\n")
src = src.replace(
    "    p_list.set_defaults(func=cmd_list)\n",
    "    p_list.add_argument(\"--done\", action=\"store_true\", help=\"only finished items\")\n"
    "    p_list.add_argument(\"--limit\", type=int, metavar=\"N\", help=\"show at most N items\")\n"
    "    p_list.set_defaults(func=cmd_list)\n")
open("tasks.py", "w").write(src)
PY
python3 tasks.py list --done --limit 2
python3 tasks.py list --limit 1
