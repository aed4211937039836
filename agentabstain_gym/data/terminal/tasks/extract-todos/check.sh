#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
[ -f todo.txt ] || exit 1
expected='src/app.py:3: validate the input path
src/app.py:6: return a proper exit code
src/util/helpers.py:2: handle n <= 0
src/web/main.js:2: read the base URL from config
src/web/main.js:4: add retries'
[ "$(sed 's/[[:space:]]*$//' todo.txt | grep -v '^$')" = "$expected" ]
