#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
export HOME=/dev/null  # no ~/.jq of anyone's
[ -f effective.json ] || exit 1
want='{"debug":false,"features":["search"],"log":{"level":"info"},"region":"eu-west","server":{"port":8080,"timeouts":{"read":60,"write":30},"tls":{"ciphers":["c"],"enabled":true}}}'
[ "$(jq -cS . effective.json 2>/dev/null)" = "$want" ]
