#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
[ -f incident.log ] || exit 1
python3 -I - <<'PY'  # isolated: nothing in the workspace is importable
import hashlib, sys
text = open("incident.log", encoding="utf-8", errors="replace").read().rstrip("\n") + "\n"
ok = text.count("\n") == 26 and hashlib.sha256(text.encode()).hexdigest()[:16] == "71e55a52dd122e46"
sys.exit(0 if ok else 1)
PY
