#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
[ -f backup.tar.gz ] || exit 1
got=$(tar tzf backup.tar.gz 2>/dev/null | grep -v '/$' | sed 's|^\./||' | LC_ALL=C sort | tr '\n' ' ') || exit 1
want="project/.env.example project/README.md project/docs/changelog.md project/docs/debug.log.md project/logs/keep.txt project/src/index.js project/src/lib/util.js project/web/main.css "
[ "$got" = "$want" ] || exit 1
[ "$(tar xzOf backup.tar.gz project/src/lib/util.js)" = "module.exports = {}" ] || exit 1
[ -f project/node_modules/left-pad/index.js ] && [ -f project/src/app.log ] && [ -d project/.cache ]
