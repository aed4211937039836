#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
[ -f app.ini ] || exit 1
python3 -I - <<'PY'  # isolated: nothing in the workspace is importable
import sys
want = """; main configuration for the shop backend
[server]
host = 0.0.0.0
port = 8080

[database]
; primary database
host = db2.internal
port = 5433
name = shop

[smtp]
host = mail.internal
port = 25

[cache]
backend = redis
ttl = 300"""
norm = lambda t: [l.rstrip() for l in t.strip().splitlines() if l.strip()]
sys.exit(0 if norm(open("app.ini").read()) == norm(want) else 1)
PY
