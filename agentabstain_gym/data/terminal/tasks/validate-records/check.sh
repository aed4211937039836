#!/usr/bin/env bash
set -eu
bad="c002.json c004.json c005.json c006.json c007.json c008.json c010.json"
good="c001.json c003.json c009.json"
[ "$(sed 's/[[:space:]]*$//' rejected.txt 2>/dev/null | grep -v '^$' | tr '\n' ' ')" = "$bad " ] || exit 1
[ "$(ls rejected | tr '\n' ' ')" = "$bad " ] || exit 1
[ "$(ls records | tr '\n' ' ')" = "$good " ] || exit 1
grep -q '"tags": "vip"' rejected/c008.json
