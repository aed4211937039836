#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
[ -f top_ips.txt ] || exit 1
[ "$(sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//' top_ips.txt | grep -v '^$')" = "$(printf '81 10.0.1.2\n46 10.0.0.5\n45 10.0.3.33\n32 10.0.0.17\n32 10.0.2.9')" ]
