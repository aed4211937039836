#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
[ -f .env ] || exit 1
python3 -I - <<'PY'  # isolated: nothing in the workspace is importable
import sys
want = """# --- app ---
APP_NAME=shop
APP_ENV=staging
APP_PORT=8081

# --- database ---
DB_URL=postgres://stage-db:5432/shop
DB_POOL=5
# optional
SENTRY_DSN=
GREETING="hello from staging\""""
got = [l.rstrip() for l in open(".env").read().rstrip("\n").splitlines()]
sys.exit(0 if got == want.splitlines() else 1)
PY
