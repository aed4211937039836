#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
[ -f errors.txt ] || exit 1
expected='mailer 13
api 11
db 9
billing 8
auth 5'
[ "$(sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//' errors.txt | grep -v '^$')" = "$expected" ]
