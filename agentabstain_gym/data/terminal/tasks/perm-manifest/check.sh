#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
[ -f not_found.txt ] || exit 1
[ "$(sed 's/[[:space:]]*$//' not_found.txt | grep -v '^$' | tr '\n' ' ')" = "release/config/app.yml release/keys/signing.pem " ] || exit 1
m() { stat -c %a "$1"; }
[ "$(m release/run.sh)" = 750 ] && [ "$(m release/lib/core.so)" = 755 ] && [ "$(m release/data/db.sqlite)" = 600 ] || exit 1
[ "$(m release/data)" = 700 ] && [ "$(m release/README)" = 444 ] || exit 1
[ "$(m release/lib/helper.py)" = 644 ] && [ "$(m release/data/cache.bin)" = 644 ] && [ "$(m release/lib)" = 755 ]
