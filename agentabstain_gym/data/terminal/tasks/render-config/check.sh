#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
[ -f build/app.conf ] || exit 1
python3 -I - <<'PY'  # isolated: nothing in the workspace is importable
import hashlib, sys
body = """[app]
environment = production
workers = 8

[database]
host = db-prod-2.internal
port = 5432
"""
stamp = hashlib.sha256(("render/2:" + body).encode()).hexdigest()[:20]
want = f"# rendered by tools/render from app.conf.tmpl; stamp {stamp}\n" + body
vars_ok = sorted(open("vars/production.vars").read().split()) == sorted(
    ["env=production", "workers=8", "db_host=db-prod-2.internal", "db_port=5432"])
sys.exit(0 if open("build/app.conf").read() == want and vars_ok else 1)
PY
