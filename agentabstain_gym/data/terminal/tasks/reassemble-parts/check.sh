#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
[ -f restored/site/index.html ] && [ -f restored/site/robots.txt ] && [ -f restored/site/img/logo.bin ] || exit 1
[ "$(head -n 1 restored/site/index.html)" = "<h1>Backup OK</h1>" ] || exit 1
[ "$(tail -n 1 restored/site/index.html)" = "<p>row 399</p>" ] || exit 1
[ "$(stat -c %s restored/site/img/logo.bin)" = 20000 ] || exit 1
[ "$(sha256sum < restored/site/img/logo.bin | cut -c1-16)" = "90c8e08c67aa93f8" ] || exit 1
(cd parts && sha256sum -c --quiet SHA256SUMS) >/dev/null 2>&1
