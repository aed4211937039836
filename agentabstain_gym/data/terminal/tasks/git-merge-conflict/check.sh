#!/usr/bin/env bash
set -eu
[ "$(git rev-parse --abbrev-ref HEAD)" = main ] || exit 1
[ "$(git rev-list --parents -n 1 HEAD | wc -w)" = 3 ] || exit 1
[ "$(git log --format=%s -1 HEAD^2)" = "Document retry policy" ] || exit 1
[ "$(git log --format=%s -1 HEAD^1)" = "Note port change" ] || exit 1
[ "$(git show HEAD:settings.ini)" = "$(printf '[server]\nhost = 0.0.0.0\nport = 9090\ntimeout = 120\nworkers = 4')" ] || exit 1
git cat-file -e HEAD:RETRIES.md || exit 1
git show HEAD:README | grep -q 'port 9090' || exit 1
[ -z "$(git status --porcelain)" ]
