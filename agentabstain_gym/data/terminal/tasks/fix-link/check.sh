#!/usr/bin/env bash
set -eu
grep -q 'return a + b' src/ops.c && grep -q 'return a \* b' src/ops.c || exit 1
make clean >/dev/null 2>&1 || true
make >/dev/null 2>&1 || exit 1
[ "$(./calc add 3 4)" = 7 ] && [ "$(./calc mul 6 7)" = 42 ] && [ "$(./calc add -5 12)" = 7 ]
