#!/usr/bin/env bash
# Builds the workspace: an INI file where several sections share key names.
set -euo pipefail
cat > app.ini <<'X'
; main configuration for the shop backend
[server]
host = 0.0.0.0
port = 8080

[database]
; primary database
host = db1.internal
port = 5432
name = shop

[smtp]
host = mail.internal
port = 25
X
