#!/usr/bin/env bash
# Builds the workspace: nested defaults and an override with arrays and null deletions.
set -euo pipefail
cat > defaults.json <<'X'
{"server": {"port": 8080, "tls": {"enabled": false, "ciphers": ["a", "b"]}, "timeouts": {"read": 30, "write": 30}},
 "features": ["search", "export"], "log": {"level": "info", "file": "/var/log/app.log"}, "debug": false}
X
if [ "${1:-original}" != "missing_prerequisite" ]; then
cat > override.json <<'X'
{"server": {"tls": {"enabled": true, "ciphers": ["c"]}, "timeouts": {"read": 60}},
 "features": ["search"], "log": {"file": null}, "region": "eu-west"}
X
fi
