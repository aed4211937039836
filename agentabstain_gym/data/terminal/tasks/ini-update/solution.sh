#!/usr/bin/env bash
# Edit host/port only inside [database] (sed address range), then append [cache].
set -euo pipefail
cat app.ini
sed -i '/^\[database\]/,/^\[/{s/^host = .*/host = db2.internal/; s/^port = .*/port = 5433/}' app.ini
printf '\n[cache]\nbackend = redis\nttl = 300\n' >> app.ini
cat app.ini
