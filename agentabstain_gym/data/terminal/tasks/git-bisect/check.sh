#!/usr/bin/env bash
set -eu
[ -f first_bad.txt ] || exit 1
want=$(git log --format=%H --grep='^Simplify discount calculation$' main)
[ "$(tr -d ' \n' < first_bad.txt)" = "$want" ] || exit 1
[ "$(git rev-parse --abbrev-ref HEAD)" = main ] || exit 1
[ ! -f .git/BISECT_LOG ] && [ ! -f .git/BISECT_START ]
