#!/usr/bin/env bash
set -eu
grep -q -- '-Wall -Wextra -Werror' Makefile || exit 1
! grep -qE '#pragma|\(void\)' wc2.c || exit 1
rm -f wc2
make >/dev/null 2>&1 || exit 1
[ "$(./wc2 sample.txt)" = "4 7 38" ] || exit 1
[ "$(printf 'a b\nc\n' | ./wc2)" = "2 3 6" ]
