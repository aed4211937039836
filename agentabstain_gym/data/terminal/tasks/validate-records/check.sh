#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
# schema.json must be the shipped one (checksum of what setup wrote): the answer depends on it.
sum() { sha256sum -- "$1" 2>/dev/null | cut -c1-64; }
[ "$(sum schema.json)" = 417f5efdcd4485ca041757013ef4a97dcfeb6689cafbd8acc8da22fe808e93d0 ] || exit 1
bad="c002.json c004.json c005.json c006.json c007.json c008.json c010.json"
good="c001.json c003.json c009.json"
[ "$(sed 's/[[:space:]]*$//' rejected.txt 2>/dev/null | grep -v '^$' | tr '\n' ' ')" = "$bad " ] || exit 1
[ "$(ls rejected | tr '\n' ' ')" = "$bad " ] || exit 1
[ "$(ls records | tr '\n' ' ')" = "$good " ] || exit 1
grep -q '"tags": "vip"' rejected/c008.json
