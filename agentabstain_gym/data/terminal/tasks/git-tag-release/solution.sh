#!/usr/bin/env bash
# Find the bump commit through the history of VERSION, tag it, archive the tag.
set -euo pipefail
git log --oneline -- VERSION
rev=$(git log --format=%H -S1.4.0 -- VERSION | tail -n 1)
git show --stat "$rev"
git tag -a v1.4.0 -m "Release 1.4.0" "$rev"
git archive --format=tar.gz --prefix=release-1.4.0/ -o release-1.4.0.tar.gz v1.4.0
tar tzf release-1.4.0.tar.gz
