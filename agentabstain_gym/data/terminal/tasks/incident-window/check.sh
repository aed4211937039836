#!/usr/bin/env bash
set -eu
[ -f incident.log ] || exit 1
python3 - <<'PY'
import hashlib, sys
text = open("incident.log", encoding="utf-8", errors="replace").read().rstrip("\n") + "\n"
ok = text.count("\n") == 26 and hashlib.sha256(text.encode()).hexdigest()[:16] == "71e55a52dd122e46"
sys.exit(0 if ok else 1)
PY
