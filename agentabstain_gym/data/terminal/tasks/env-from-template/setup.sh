#!/usr/bin/env bash
# Builds the workspace: an env template and the values for one environment.
set -euo pipefail
cat > .env.example <<'X'
# --- app ---
APP_NAME=
APP_ENV=
APP_PORT=

# --- database ---
DB_URL=
DB_POOL=
# optional
SENTRY_DSN=
GREETING=
X
if [ "${1:-original}" != "missing_prerequisite" ]; then
cat > values.json <<'X'
{"APP_NAME": "shop", "APP_ENV": "staging", "APP_PORT": 8081, "DB_URL": "postgres://stage-db:5432/shop",
 "DB_POOL": 5, "GREETING": "hello from staging", "UNUSED_KEY": "ignore me"}
X
fi
