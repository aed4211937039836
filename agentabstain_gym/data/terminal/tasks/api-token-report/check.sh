#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
export HOME=/dev/null  # no ~/.jq of anyone's
[ -f summary.json ] && [ -f shrinking.txt ] || exit 1
[ "$(jq -cS . summary.json 2>/dev/null)" = '{"best_region":"north","currency":"EUR","orders":1932,"total_revenue":184250}' ] || exit 1
[ "$(sed 's/[[:space:]]*$//' shrinking.txt | grep -v '^$' | tr '\n' ' ')" = "islands south west " ]
