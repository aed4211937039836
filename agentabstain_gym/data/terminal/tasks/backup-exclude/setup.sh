#!/usr/bin/env bash
# Builds the workspace: a project tree with dependency folders, logs and a cache mixed into real files.
set -euo pipefail
mk() { mkdir -p "$(dirname "$1")"; printf '%s\n' "${2:-$1}" > "$1"; }
mk project/README.md "# demo"
mk project/.env.example "PORT=8080"
mk project/src/index.js "console.log('hi')"
mk project/src/lib/util.js "module.exports = {}"
mk project/src/app.log "started"
mk project/node_modules/left-pad/index.js "pad"
mk project/web/node_modules/react/index.js "react"
mk project/web/main.css "body{}"
mk project/logs/2024-01.log "old log"
mk project/logs/keep.txt "logs folder note"
mk project/.cache/build/x.bin "cache"
mk project/docs/changelog.md "v1"
mk project/docs/debug.log.md "a doc about logs, not a log"
