#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
# The inputs must be the shipped ones (checksums of what setup wrote): the answer depends on them.
sum() { sha256sum -- "$1" 2>/dev/null | cut -c1-64; }
[ "$(sum book.txt)" = 2861b2650da30a61bf94df6defac75565f4d097228c128f54860688417bd7d78 ] || exit 1
[ "$(sum stopwords.txt)" = de8a4f9ae4fdd817c2fe57690342dfdd98b1df49f3f28ccfc9a282ff61359b83 ] || exit 1
[ -f top_words.txt ] || exit 1
expected='44 river
42 lantern
38 harbor
32 stone
30 garden
29 winter
22 ledger
21 quiet
20 orchard
20 signal'
[ "$(sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//' top_words.txt | grep -v '^$')" = "$expected" ]
