#!/usr/bin/env bash
set -eu
[ "$(git cat-file -t v1.4.0 2>/dev/null)" = tag ] || exit 1
[ "$(git log -1 --format=%s 'v1.4.0^{commit}')" = "Bump version to 1.4.0" ] || exit 1
[ "$(git tag -l --format='%(contents:subject)' v1.4.0)" = "Release 1.4.0" ] || exit 1
[ -f release-1.4.0.tar.gz ] || exit 1
listing=$(tar tzf release-1.4.0.tar.gz | grep -v '/$' | LC_ALL=C sort | tr '\n' ' ')
[ "$listing" = "release-1.4.0/VERSION release-1.4.0/app.py " ] || exit 1
[ "$(tar xzOf release-1.4.0.tar.gz release-1.4.0/VERSION)" = 1.4.0 ] || exit 1
tar xzOf release-1.4.0.tar.gz release-1.4.0/app.py | grep -q '"ok!"$'
