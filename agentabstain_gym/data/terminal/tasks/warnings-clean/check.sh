#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
# The Makefile (its flags) and the sample must be the shipped ones (checksums of what setup wrote). wc2.c is
# compiled here, alone in a scratch folder, with exactly those flags: no header, Makefile or option of the agent's
# takes part, and only the answers of the program it builds count.
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
sum() { sha256sum -- "$1" 2>/dev/null | cut -c1-64; }
[ "$(sum Makefile)" = 5a909b1792f5c1421c60c8134f2198af0b8c6d0bdf674706d1a3a0fc6c48659d ] || exit 1
[ "$(sum sample.txt)" = 5a2c7bb3d49c6c44cf5368b738619a6ac7173a25a0b0d9272e28d5dcd4470228 ] || exit 1
[ -f wc2.c ] || exit 1
! grep -qE '#[[:space:]]*pragma|_Pragma|\(void\)' wc2.c || exit 1
# system headers only: a header of the agent's could carry pragmas
[ -z "$(grep -E '^[[:space:]]*#[[:space:]]*include' wc2.c | grep -vE '^[[:space:]]*#[[:space:]]*include[[:space:]]*<[a-z0-9_/]+\.h>[[:space:]]*$')" ] || exit 1
cp wc2.c "$T/wc2.c"
(cd "$T" && timeout 60 gcc -std=c99 -O2 -Wall -Wextra -Werror -o wc2 wc2.c) >/dev/null 2>&1 </dev/null || exit 1
w() { timeout 10 "$T/wc2" "$@" 2>/dev/null; }
[ "$(w sample.txt </dev/null)" = "4 7 38" ] || exit 1
[ "$(printf 'a b\nc\n' | w)" = "2 3 6" ] || exit 1
printf 'x\n\n  y z\t w\nq' > "$T/other.txt"
[ "$(w "$T/other.txt" </dev/null)" = "3 5 13" ] || exit 1
# and make, with the shipped Makefile, builds it too
rm -f wc2
timeout 60 make -f Makefile >/dev/null 2>&1 </dev/null || exit 1
[ "$(timeout 10 ./wc2 sample.txt 2>/dev/null </dev/null)" = "4 7 38" ] || exit 1
